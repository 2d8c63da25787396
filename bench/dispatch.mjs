// Benchmark 2: a 10,000-contact campaign on the simulator (ring_ms = talk_ms = 0) at max_concurrency 100, on the
// real service in this process: calls per second, peak and mean in-flight count against the cap while contacts
// wait, CPU time per call. Reference: a minimal SQLite-backed dispatcher written here (claim under the cap,
// insert the run, complete it, release the slot; one commit per step), measured in the same run.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { createSimulatorConfig, createWorkflow, csvOf, freshDir, mean, must, report, startService, uploadCsv } from './lib.mjs';

const CONTACTS = Number(process.env.BENCH_DISPATCH_CONTACTS ?? 10_000);
const CAP = 100;

async function ours() {
  const dir = freshDir('dispatch');
  const api = await startService(dir);
  const auth = await api.signup();
  const workflowId = await createWorkflow(api, auth);
  await createSimulatorConfig(api, auth, { ringMs: 0, talkMs: 0 });
  const key = await uploadCsv(api, auth, csvOf(CONTACTS));
  const created = await must(api.post('/campaign/create', {
    name: 'Dispatch bench', workflow_id: workflowId, source_type: 'csv', source_id: key, max_concurrency: CAP, retry_config: { enabled: false },
  }, auth), 'campaign');
  if (created.total_rows !== CONTACTS) throw new Error(`total_rows ${created.total_rows}`);
  const db = new Database(join(dir, 'callplane.db'), { readonly: true });
  const sample = db.prepare('SELECT state, in_flight, processed_rows, total_rows FROM campaigns WHERE id = ?');
  const samples = [];
  let done;
  const finished = new Promise((r) => { done = r; });
  const sampler = setInterval(() => {
    const s = sample.get(created.id);
    samples.push(s);
    if (s.state === 'completed' || s.state === 'failed' || s.state === 'cancelled') done(s);
  }, 2);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await must(api.post(`/campaign/${created.id}/start`, undefined, auth), 'start');
  const last = await finished;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  const runs = db.prepare('SELECT COUNT(*) AS n, SUM(status_rank = 3) AS final FROM runs WHERE campaign_id = ?').get(created.id);
  db.close();
  await api.stop();
  const waiting = samples.filter((s) => s.total_rows - s.processed_rows - s.in_flight > 0);
  return {
    state: last.state, processed: last.processed_rows, runs: runs.n, final_runs: runs.final, seconds, calls_per_second: CONTACTS / seconds,
    peak_in_flight: Math.max(...samples.map((s) => s.in_flight)), mean_in_flight_waiting: mean(waiting.map((s) => s.in_flight)),
    samples: samples.length, waiting_samples: waiting.length, over_cap_samples: samples.filter((s) => s.in_flight > CAP).length,
    cpu_ms_per_call: (cpu.user + cpu.system) / 1000 / CONTACTS,
  };
}

/** The reference: the least a SQLite-backed dispatcher must do per call, with one commit per step. */
async function reference() {
  const dir = freshDir('dispatch-reference');
  const db = new Database(join(dir, 'ref.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE contacts (id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL, phone TEXT NOT NULL, status TEXT NOT NULL);
    CREATE INDEX contacts_pending ON contacts (campaign_id, status, id);
    CREATE TABLE campaigns (id INTEGER PRIMARY KEY, in_flight INTEGER NOT NULL, processed INTEGER NOT NULL);
    CREATE TABLE runs (id INTEGER PRIMARY KEY, campaign_id INTEGER, contact_id INTEGER, status TEXT, created_at INTEGER, ended_at INTEGER);`);
  db.prepare('INSERT INTO campaigns VALUES (1, 0, 0)').run();
  const ins = db.prepare("INSERT INTO contacts (campaign_id, phone, status) VALUES (1, ?, 'pending')");
  db.transaction(() => { for (let i = 0; i < CONTACTS; i++) ins.run(`+1555${String(i).padStart(7, '0')}`); })();
  const claim = db.transaction(() => {
    const c = db.prepare('UPDATE campaigns SET in_flight = in_flight + 1 WHERE id = 1 AND in_flight < ? RETURNING in_flight').get(CAP);
    if (!c) return null;
    const contact = db.prepare("UPDATE contacts SET status = 'calling' WHERE id = (SELECT id FROM contacts WHERE campaign_id = 1 AND status = 'pending' ORDER BY id LIMIT 1) RETURNING id").get();
    if (!contact) { db.prepare('UPDATE campaigns SET in_flight = in_flight - 1 WHERE id = 1').run(); return null; }
    return contact.id;
  });
  const createRun = db.prepare("INSERT INTO runs (campaign_id, contact_id, status, created_at) VALUES (1, ?, 'queued', ?) RETURNING id");
  const finishRun = db.prepare("UPDATE runs SET status = 'completed', ended_at = ? WHERE id = ?");
  const finish = db.transaction((contactId) => {
    db.prepare("UPDATE contacts SET status = 'done' WHERE id = ?").run(contactId);
    db.prepare('UPDATE campaigns SET in_flight = in_flight - 1, processed = processed + 1 WHERE id = 1').run();
  });
  const inFlight = db.prepare('SELECT in_flight, processed FROM campaigns WHERE id = 1');
  const samples = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((resolve) => {
    let completed = 0;
    const sampler = setInterval(() => samples.push(inFlight.get()), 2);
    const fill = () => {
      for (;;) {
        const contactId = claim.immediate();
        if (contactId == null) break;
        const run = createRun.get(contactId, Date.now()).id;
        // the simulated call ends on a later turn of the event loop (ring_ms = talk_ms = 0)
        setImmediate(() => {
          finishRun.run(Date.now(), run);
          finish.immediate(contactId);
          if (++completed === CONTACTS) { clearInterval(sampler); resolve(); } else fill();
        });
      }
    };
    fill();
  });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  db.close();
  const waiting = samples.filter((s) => CONTACTS - s.processed - s.in_flight > 0);
  return {
    seconds, calls_per_second: CONTACTS / seconds, peak_in_flight: Math.max(...samples.map((s) => s.in_flight)),
    mean_in_flight_waiting: mean(waiting.map((s) => s.in_flight)), cpu_ms_per_call: (cpu.user + cpu.system) / 1000 / CONTACTS,
  };
}

async function main() {
  const reference1 = await reference();
  const service = await ours();
  report({ name: 'dispatch', contacts: CONTACTS, cap: CAP, ours: service, reference: reference1, target_calls_per_second: 1000, target_mean_in_flight: 0.98 * CAP });
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
