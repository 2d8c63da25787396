// Benchmark 1: GET /api/v1/campaign/{id} with an API key, 50 connections (autocannon in its own process), the
// server on one core and the load on the other. Ours (the real service) against the same route written on bare
// node:http (same key lookup, same SQLite reads) and against a bare hello-world, all measured in this run.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createSimulatorConfig, createWorkflow, csvOf, freePort, freshDir, hasTaskset, must, pinned, report, startService, uploadCsv } from './lib.mjs';

const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 10);
const CONNECTIONS = 50;

async function prepare() {
  const dir = freshDir('api');
  const api = await startService(dir);
  const auth = await api.signup();
  const apiKey = await api.apiKey(auth);
  const workflowId = await createWorkflow(api, auth);
  await createSimulatorConfig(api, auth);
  const key = await uploadCsv(api, auth, csvOf(100));
  const created = await must(api.post('/campaign/create', { name: 'Bench campaign', workflow_id: workflowId, source_type: 'csv', source_id: key, max_concurrency: 10 }, auth), 'campaign');
  const body = await must(api.get(`/campaign/${created.id}`, { apiKey }), 'get campaign');
  await api.stop();
  return { dir, apiKey, campaignId: created.id, bodyBytes: Buffer.byteLength(JSON.stringify(body)) };
}

function spawnChild(core, script, args) {
  const { cmd, args: a } = pinned(core, process.execPath, [script, ...args]);
  const child = spawn(cmd, a, { stdio: ['ignore', 'pipe', 'inherit'], cwd: new URL('..', import.meta.url).pathname });
  const lines = createInterface({ input: child.stdout });
  return { child, lines };
}

async function measure(mode, prep) {
  const port = await freePort();
  const server = spawnChild(0, 'bench/api-server.mjs', [mode, String(port), prep.dir]);
  try {
    for await (const line of server.lines) if (line === 'READY') break;
    return await load(mode, prep, port);
  } finally {
    server.child.kill('SIGTERM');
    await once(server.child, 'exit').catch(() => undefined);
  }
}

async function load(mode, prep, port) {
  const url = mode === 'hello' ? `http://127.0.0.1:${port}/` : `http://127.0.0.1:${port}/api/v1/campaign/${prep.campaignId}`;
  const check = await fetch(url, { headers: { 'x-api-key': prep.apiKey } });
  const bytes = Buffer.byteLength(await check.text());
  if (check.status !== 200) throw new Error(`${mode}: ${check.status}`);
  const run = async (seconds) => {
    const load = spawnChild(1, 'bench/load.mjs', [url, String(CONNECTIONS), String(seconds), prep.apiKey]);
    let out = null;
    for await (const line of load.lines) if (line.startsWith('{')) out = JSON.parse(line);
    await once(load.child, 'exit').catch(() => undefined);
    return out;
  };
  await run(2); // warm-up: JIT, SQLite page cache
  const result = await run(SECONDS);
  return { mode, bytes, ...result };
}

async function main() {
  const prep = await prepare();
  const ours = await measure('ours', prep);
  const bare = await measure('bare', prep);
  const hello = await measure('hello', prep);
  report({
    name: 'api', seconds: SECONDS, connections: CONNECTIONS, pinned: hasTaskset(), ours, bare, hello,
    ratio_to_bare: ours.rps / bare.rps, ratio_to_hello: ours.rps / hello.rps, target_ratio: 0.6,
  });
}

main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
