// Benchmark 3: the usage report on an organization with 1,000,000 runs generated straight into storage.
// Ours: GET /api/v1/organizations/usage/runs over HTTP on the real service (page + totals over every match).
// Reference: the same COUNT and sums in plain SQL on the same database (SQLite picks its own plan).
import Database from 'better-sqlite3';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WORK, createWorkflow, dist, must, percentile, report, startService, timeAsync, ms, freshDir } from './lib.mjs';

// the tests' seeded generator (built into dist/ with the service this bench starts)
const { prng } = await dist('test/support/prng.js');

const RUNS = Number(process.env.BENCH_USAGE_RUNS ?? 1_000_000);
const OTHER_ORG_RUNS = 20_000;
const VERSION = 4;
const END = Date.UTC(2026, 2, 31);
const SPAN = 90 * 86_400_000;
const DISPOSITIONS = ['completed', 'busy', 'no_answer', 'voicemail', 'failed', 'interested', 'not_interested', 'callback'];
const ITER = Number(process.env.BENCH_USAGE_ITER ?? 25);

/** Inserts `n` runs for `org` spread evenly over the 90 days before END, in 20k-row transactions. */
function generate(db, org, workflows, n, seed) {
  const rnd = prng(seed);
  const ins = db.prepare(`INSERT INTO runs (organization_id, workflow_id, definition_id, name, mode, status, status_rank, disposition, campaign_id,
      provider, provider_call_id, caller_number, called_number, initial_context, gathered_context, logs, cost_info, duration_seconds,
      service_token_usage, charge_usd, created_at, started_at, ended_at, updated_at)
    VALUES (@org, @wf, @def, @name, @mode, @status, @rank, @disp, @camp, 'simulator', @pcid, @caller, @called, @ictx, @gctx, @logs, @cost,
      @dur, @tok, @charge, @created, @started, @ended, @updated)`);
  const batch = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const created = END - SPAN + Math.floor((i * SPAN) / n);
      const out = rnd() < 0.8;
      const wf = workflows[Math.floor(rnd() * workflows.length)];
      const ours = `+1555${String(Math.floor(rnd() * 1e7)).padStart(7, '0')}`;
      const theirs = `+44${String(Math.floor(rnd() * 1e10)).padStart(10, '0')}`;
      const caller = out ? ours : theirs;
      const called = out ? theirs : ours;
      const done = rnd() >= 0.02;
      const disp = done ? DISPOSITIONS[Math.floor(rnd() * DISPOSITIONS.length)] : null;
      const dur = done ? Math.floor(rnd() * 600) : null;
      const tok = done ? Math.floor(rnd() * 5000) : 0;
      const charge = dur ? Math.round((dur / 60) * 0.05 * 1e6) / 1e6 : 0;
      ins.run({
        org, wf: wf.id, def: wf.definitionId, name: `Call to ${called}`, mode: out ? 'outbound' : 'inbound', status: done ? 'completed' : 'in_progress',
        rank: done ? 3 : 2, disp, camp: out ? 1 + Math.floor(rnd() * 50) : null, pcid: `bench-${org}-${i}`, caller, called,
        ictx: JSON.stringify({ first_name: 'Ada', last_name: 'Lovelace', caller_number: caller, called_number: called }),
        gctx: JSON.stringify(disp ? { mapped_call_disposition: disp, summary: 'Customer asked to be called back next week.' } : {}),
        logs: JSON.stringify(done ? [{ ts: new Date(created).toISOString(), event: 'call_completed', details: { provider: 'simulator', outcome: 'completed' } }] : []),
        cost: JSON.stringify({ call_duration_seconds: dur ?? 0, service_token_usage: tok, charge_usd: charge }),
        dur, tok, charge, created, started: created + 2000, ended: done ? created + 2000 + (dur ?? 0) * 1000 : null, updated: created + 2000 + (dur ?? 0) * 1000,
      });
    }
  });
  for (let i = 0; i < n; i += 20_000) batch(i, Math.min(n, i + 20_000));
}

async function prepare() {
  const dir = join(WORK, `usage-${RUNS}`);
  const markerFile = join(dir, 'generated.json');
  const marker = existsSync(markerFile) ? JSON.parse(readFileSync(markerFile, 'utf8')) : null;
  if (marker?.version !== VERSION) {
    freshDir(`usage-${RUNS}`);
    // the service creates the schema, the organizations and their workflows; then it stops and the runs go straight in
    const setup = await startService(dir);
    const email = `usage-bench-${Date.now()}@example.com`;
    const a = await setup.signup(email);
    const b = await setup.signup();
    const wfs = async (auth, n) => {
      const ids = [];
      for (let i = 0; i < n; i++) ids.push(await createWorkflow(setup, auth, `Agent ${i + 1}`));
      return ids;
    };
    const idsA = await wfs(a, 20);
    const idsB = await wfs(b, 2);
    await setup.stop();
    const db = new Database(join(dir, 'callplane.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    const defs = (ids) => ids.map((id) => ({ id, definitionId: db.prepare('SELECT current_definition_id AS d FROM workflows WHERE id = ?').get(id).d }));
    // bulk load: drop the runs indexes, insert in created_at order, rebuild them (what a restore would do)
    const indexes = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs' AND sql IS NOT NULL").all();
    const [genMs] = ms(() => {
      for (const i of indexes) db.exec(`DROP INDEX ${i.name}`);
      generate(db, a.organizationId, defs(idsA), RUNS, 1);
      generate(db, b.organizationId, defs(idsB), OTHER_ORG_RUNS, 2);
      for (const i of indexes) db.exec(i.sql);
    });
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    writeFileSync(markerFile, JSON.stringify({ version: VERSION, email, org: a.organizationId, generatedMs: genMs }));
    return { ...(await open(dir, { email, org: a.organizationId, generatedMs: genMs })), reused: false };
  }
  return { ...(await open(dir, marker)), reused: true };
}

async function open(dir, marker) {
  const api = await startService(dir);
  const login = await must(api.post('/auth/login', { email: marker.email, password: 'correct horse battery' }), 'login');
  return { api, dir, auth: { token: login.token }, org: marker.org, generatedMs: marker.generatedMs };
}

const iso = (t) => new Date(t).toISOString();

async function main() {
  const { api, dir, auth, org, generatedMs, reused } = await prepare();
  const key = await api.apiKey(auth);
  const db = new Database(join(dir, 'callplane.db'), { readonly: true });
  const windows = { '7 days': END - 7 * 86_400_000, '90 days': END - SPAN };
  // a campaign and a called-number fragment that exist in the data
  const mixes = [
    { name: 'none', filters: [], sql: '', params: {} },
    { name: 'campaignId', filters: [{ attribute: 'campaignId', type: 'number', value: { value: 17 } }], sql: 'AND campaign_id = @c', params: { c: 17 } },
    { name: 'dispositionCode', filters: [{ attribute: 'dispositionCode', type: 'multiSelect', value: { codes: ['busy', 'voicemail'] } }], sql: "AND disposition IN ('busy', 'voicemail')", params: {} },
    { name: 'calledNumber substring', filters: [{ attribute: 'calledNumber', type: 'text', value: { value: '4420' } }], sql: "AND instr(called_number, '4420') > 0", params: {} },
    { name: 'duration range + dates', filters: [{ attribute: 'duration', type: 'numberRange', value: { min: 60, max: 300 } }], sql: 'AND COALESCE(duration_seconds, 0) BETWEEN 60 AND 300', params: {} },
  ];
  const get = async (start, filters, page = 1, limit = 50) => {
    const qs = `start_date=${encodeURIComponent(iso(start))}&end_date=${encodeURIComponent(iso(END))}&page=${page}&limit=${limit}`
      + (filters.length ? `&filters=${encodeURIComponent(JSON.stringify(filters))}` : '');
    const r = await api.get(`/organizations/usage/runs?${qs}`, { apiKey: key });
    if (r.status !== 200) throw new Error(`usage: ${r.status} ${r.text.slice(0, 300)}`);
    return r.body;
  };
  const plain = (mix, from) => db.prepare(`SELECT COUNT(*) AS n, TOTAL(service_token_usage) AS t, TOTAL(duration_seconds) AS d FROM runs
    WHERE organization_id = @org AND created_at BETWEEN @from AND @to ${mix.sql}`);
  const rows = [];
  for (const [wname, from] of Object.entries(windows)) {
    for (const mix of mixes) {
      const refStmt = plain(mix, from);
      const refParams = { org, from, to: END, ...mix.params };
      const check = await get(from, mix.filters);
      const ref = refStmt.get(refParams);
      if (check.total_count !== ref.n) throw new Error(`${mix.name}: total_count ${check.total_count} != plain SQL ${ref.n}`);
      const ours = [];
      const theirs = [];
      for (let i = 0; i < ITER; i++) {
        ours.push((await timeAsync(() => get(from, mix.filters)))[0]);
        theirs.push(ms(() => refStmt.get(refParams))[0]);
      }
      rows.push({
        window: wname, mix: mix.name, matches: ref.n, p50: percentile(ours, 50), p95: percentile(ours, 95),
        ref_p50: percentile(theirs, 50), ref_p95: percentile(theirs, 95), ratio: percentile(ours, 50) / percentile(theirs, 50),
        target_ms: wname === '7 days' ? 25 : 200,
      });
    }
  }
  // deep pages: 90 days, no filter and calledNumber, limit 100: page 1, middle, last, against a plain OFFSET page
  const deep = [];
  for (const mix of [mixes[0], mixes[3]]) {
    const first = await get(windows['90 days'], mix.filters, 1, 100);
    const last = first.total_pages;
    const offsetStmt = db.prepare(`SELECT * FROM runs WHERE organization_id = @org AND created_at BETWEEN @from AND @to ${mix.sql}
      ORDER BY created_at DESC, id DESC LIMIT 100 OFFSET @offset`);
    for (const page of [1, Math.ceil(last / 2), last]) {
      const body = await get(windows['90 days'], mix.filters, page, 100);
      const refPage = offsetStmt.all({ org, from: windows['90 days'], to: END, offset: (page - 1) * 100, ...mix.params });
      if (body.runs.map((r) => r.id).join() !== refPage.map((r) => r.id).join()) throw new Error(`deep page ${page} differs from the OFFSET reference`);
      const ours = [];
      const theirs = [];
      for (let i = 0; i < Math.ceil(ITER / 2); i++) {
        ours.push((await timeAsync(() => get(windows['90 days'], mix.filters, page, 100)))[0]);
        theirs.push(ms(() => offsetStmt.all({ org, from: windows['90 days'], to: END, offset: (page - 1) * 100, ...mix.params }))[0]);
      }
      deep.push({ mix: mix.name, page, of: last, p50: percentile(ours, 50), p95: percentile(ours, 95), ref_p50: percentile(theirs, 50), ratio: percentile(ours, 50) / percentile(theirs, 50) });
    }
  }
  // what the covering indexes buy: the 90-day COUNT through migration 2's (organization_id, created_at) index only
  const without = [];
  for (const mix of mixes) {
    const stmt = db.prepare(`SELECT COUNT(*) AS n, TOTAL(service_token_usage) AS t, TOTAL(duration_seconds) AS d FROM runs INDEXED BY runs_org_created
      WHERE organization_id = @org AND created_at BETWEEN @from AND @to ${mix.sql}`);
    const xs = [];
    for (let i = 0; i < 3; i++) xs.push(ms(() => stmt.get({ org, from: windows['90 days'], to: END, ...mix.params }))[0]);
    without.push({ mix: mix.name, p50: percentile(xs, 50) });
  }
  db.close();
  await api.stop();
  report({ name: 'usage', runs: RUNS, generated_ms: generatedMs, reused, iterations: ITER, rows, deep, without });
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
