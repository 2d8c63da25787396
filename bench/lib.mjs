// Shared helpers of the benchmark suite (plain ESM over the built dist/; never part of `npm test`).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');
/** Scratch space of the benchmarks (generated databases are cached here between runs). */
export const WORK = process.env.CALLPLANE_BENCH_DIR ?? join(os.tmpdir(), 'callplane-bench');

export const dist = (p) => import(join(DIST, p));

/** A percentile (0..100) of numbers, nearest-rank. */
export function percentile(xs, p) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
export const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
export const ms = (fn) => {
  const t = process.hrtime.bigint();
  const r = fn();
  return [Number(process.hrtime.bigint() - t) / 1e6, r];
};
export async function timeAsync(fn) {
  const t = process.hrtime.bigint();
  const r = await fn();
  return [Number(process.hrtime.bigint() - t) / 1e6, r];
}

export function machine() {
  const cpus = os.cpus();
  let sqlite = '';
  return {
    cpu: cpus[0]?.model?.trim() ?? 'unknown',
    cores: cpus.length,
    node: process.version,
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    sqlite,
  };
}

export function hasTaskset() {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A command pinned to a core when taskset exists and there is more than one core. */
export function pinned(core, cmd, args) {
  if (hasTaskset() && os.cpus().length > 1) return { cmd: 'taskset', args: ['-c', String(core), cmd, ...args] };
  return { cmd, args };
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export function freshDir(name) {
  const d = join(WORK, name);
  rmSync(d, { recursive: true, force: true });
  mkdirSync(d, { recursive: true });
  return d;
}

/**
 * Starts the real service from dist (http/main.js `startService`: createHttpServer, every module) in this process
 * on a free port with its own data directory; returns a small JSON client.
 */
export async function startService(dataDir, env = {}) {
  const { startService: start } = await dist('http/main.js');
  const port = await freePort();
  const service = await start({
    CALLPLANE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', CALLPLANE_SIGNUP: 'open', LOG_LEVEL: 'warn', ...env,
  });
  const url = `http://127.0.0.1:${port}`;
  const request = async (method, path, body, auth = {}) => {
    const headers = {};
    if (auth.token) headers.authorization = `Bearer ${auth.token}`;
    if (auth.apiKey) headers['x-api-key'] = auth.apiKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url + (path.startsWith('/api') ? path : `/api/v1${path}`), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed = text;
    try { parsed = JSON.parse(text); } catch { /* not JSON */ }
    return { status: res.status, body: parsed, text };
  };
  const api = {
    url, port, service, request,
    get: (p, auth) => request('GET', p, undefined, auth),
    post: (p, body, auth) => request('POST', p, body, auth),
    put: (p, body, auth) => request('PUT', p, body, auth),
    async signup(email = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`) {
      const r = await request('POST', '/auth/signup', { email, password: 'correct horse battery', organization_name: 'Bench' });
      if (r.status !== 200) throw new Error(`signup: ${r.status} ${r.text}`);
      return { token: r.body.token, organizationId: r.body.user.organization_id };
    },
    async apiKey(auth) {
      const r = await request('POST', '/user/api-keys', { name: 'bench' }, auth);
      if (r.status !== 200) throw new Error(`api key: ${r.status} ${r.text}`);
      return r.body.api_key;
    },
    stop: () => service.stop(),
  };
  return api;
}

export async function must(r, what) {
  const res = await r;
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.body;
}

/** The same setup steps the campaign tests use, over HTTP. */
export async function createWorkflow(api, auth, name = 'Agent') {
  const { exampleWorkflowDefinition } = await dist('core/workflows/example-definition.js');
  return (await must(api.post('/workflow/create/definition', { name, workflow_definition: exampleWorkflowDefinition }, auth), 'workflow')).id;
}
export async function createSimulatorConfig(api, auth, { ringMs = 0, talkMs = 0 } = {}) {
  return (await must(api.post('/organizations/telephony-configs', {
    name: 'Sim', is_default_outbound: true, config: { provider: 'simulator', ring_ms: ringMs, talk_ms: talkMs },
  }, auth), 'telephony config')).id;
}
export async function uploadCsv(api, auth, csv, fileName = 'contacts.csv') {
  const size = Buffer.byteLength(csv);
  const p = await must(api.post('/s3/presigned-upload-url', { file_name: fileName, file_size: size }, auth), 'presign');
  const put = await fetch(p.upload_url.replace(/^https?:\/\/[^/]+/, api.url), { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: csv });
  if (put.status !== 200) throw new Error(`put: ${put.status} ${await put.text()}`);
  return p.file_key;
}
export function csvOf(n, extraColumns = 0) {
  const header = ['phone_number', 'first_name', ...Array.from({ length: extraColumns }, (_, i) => `field_${i}`)];
  const rows = [header.join(',')];
  for (let i = 0; i < n; i++) {
    const extra = Array.from({ length: extraColumns }, (_, k) => `value ${k} of row ${i}`);
    rows.push([`+1555${String(i % 10_000_000).padStart(7, '0')}`, `P${i}`, ...extra].join(','));
  }
  return rows.join('\n') + '\n';
}

/** Prints one result line the orchestrator (bench/run.mjs) collects. */
export function report(result) {
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
}

export const fmt = (x, digits = 1) => (typeof x === 'number' && Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 }) : String(x));

/**
 * CPU time (user + system, ms) of this process's main thread alone (worker threads excluded), from /proc (Linux,
 * 10 ms ticks); null elsewhere. Time spent waiting for a core is not counted, so it holds up under load.
 */
export function mainThreadCpuMs() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}
