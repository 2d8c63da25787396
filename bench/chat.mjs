// Benchmark 6: chat turn overhead. 50 chats of the dental example agent talk at once, each sending messages one
// after the other, with a user's pause of 200-600 ms between an answer and the next message
// (`POST /api/v1/workflow/{id}/chats/{chat}/messages`, JSON reply) to the real service, whose
// `openai` AI service points at a fake OpenAI-compatible model on loopback (streamed chat completions with usage,
// a fixed think time). Overhead of one turn = its round trip minus the fake model's own time for that turn's
// request (measured inside the fake, from the request's arrival to the end of its answer). Reference, same run:
// the same streamed requests sent straight to the fake model at the same concurrency; its round trip minus the
// model's own time is what one bare HTTP streaming call costs.
// Threads: the service alone on the main thread; the fake model and the load generator each on a worker thread.
import { createServer } from 'node:http';
import os from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { dist, freshDir, mainThreadCpuMs, must, percentile, report, startService } from './lib.mjs';

const CHATS = Number(process.env.BENCH_CHAT_CHATS ?? 50);
const TURNS = Number(process.env.BENCH_CHAT_TURNS ?? 20);
const THINK_MS = 15;
/** A user's pause between the answer and their next message, ms: uniform in [PAUSE_MIN, PAUSE_MAX) (deterministic). */
const PAUSE_MIN = Number(process.env.BENCH_CHAT_PAUSE_MIN_MS ?? 200);
const PAUSE_MAX = Number(process.env.BENCH_CHAT_PAUSE_MAX_MS ?? 600);
const ANSWER = 'Sure, I can help with that. What else would you like to know?';
const TARGET_P50 = 5;
const TARGET_P95 = 15;

// ---------------------------------------------------------------------------------------------------------
// The fake model (worker): OpenAI's streamed wire format; posts {marker, ms} for every answered request.

function fakeModel() {
  const words = ANSWER.match(/\S+\s*/g);
  const server = createServer((req, res) => {
    const t0 = performance.now();
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const lastUser = [...body.messages].reverse().find((m) => m.role === 'user');
      const marker = lastUser?.content ?? '';
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        let out = chunk({ role: 'assistant', content: '' });
        for (const w of words) out += chunk({ content: w });
        out += chunk({}, 'stop');
        if (body.stream_options?.include_usage) {
          out += `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [], usage: { prompt_tokens: 200, completion_tokens: words.length, total_tokens: 200 + words.length } })}\n\n`;
        }
        res.end(`${out}data: [DONE]\n\n`, () => parentPort.postMessage({ type: 'model', marker, ms: performance.now() - t0 }));
      }, THINK_MS);
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'ready', port: server.address().port }));
}

// ---------------------------------------------------------------------------------------------------------
// The load generator (worker): the chats through the service, then the reference straight to the fake model.

async function load({ url, token, workflowId, modelUrl }) {
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const pause = () => new Promise((r) => setTimeout(r, PAUSE_MIN + random() * (PAUSE_MAX - PAUSE_MIN)));
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  const chats = [];
  for (let i = 0; i < CHATS; i++) {
    const r = await fetch(`${url}/api/v1/workflow/${workflowId}/chats`, { method: 'POST', headers, body: JSON.stringify({ initial_context: { first_name: `Caller ${i}` } }) });
    if (r.status !== 200) throw new Error(`create chat: ${r.status} ${await r.text()}`);
    chats.push((await r.json()).id);
  }
  const ours = [];
  let failures = 0;
  const turnsOf = async (chat, turns, record) => {
    for (let t = 0; t < turns; t++) {
      await pause();
      const marker = `m-${chat}-${t}-${record ? 'x' : 'w'}`;
      const t0 = performance.now();
      const r = await fetch(`${url}/api/v1/workflow/${workflowId}/chats/${chat}/messages`, { method: 'POST', headers, body: JSON.stringify({ text: marker }) });
      const body = await r.json();
      const ms = performance.now() - t0;
      if (r.status !== 200 || body.messages.at(-1).text !== ANSWER) failures++;
      else if (record) ours.push({ marker, ms });
    }
  };
  // Every turn starts after its user's pause, the first one included: the chats leave the warm-up's barrier
  // together, and without a pause first all 50 would send their first recorded message at the same instant (a
  // burst of 50 turns queued behind the service's one thread, ~90 ms for the last; that burst alone was the
  // whole p99 and half the p95 until the pause moved to the front).
  // warm-up: two turns per chat, not recorded (JIT, connection pools, statement caches)
  await Promise.all(chats.map((c) => turnsOf(c, 2, false)));
  parentPort.postMessage({ type: 'phase', name: 'start' });
  const t0 = performance.now();
  await Promise.all(chats.map((c) => turnsOf(c, TURNS, true)));
  const oursSeconds = (performance.now() - t0) / 1000;
  parentPort.postMessage({ type: 'phase', name: 'end' });

  // reference: the same streamed request shape straight to the fake model, same concurrency, same count
  const reference = [];
  const request = (marker) => JSON.stringify({
    model: 'bench-model', stream: true, stream_options: { include_usage: true },
    messages: [{ role: 'system', content: 'You are a benchmark.' }, { role: 'user', content: marker }],
  });
  const direct = async (lane, turns, record) => {
    for (let t = 0; t < turns; t++) {
      await pause();
      const marker = `r-${lane}-${t}-${record ? 'x' : 'w'}`;
      const t0r = performance.now();
      const r = await fetch(`${modelUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: request(marker) });
      const text = await r.text();
      const ms = performance.now() - t0r;
      if (!text.includes('[DONE]')) failures++;
      else if (record) reference.push({ marker, ms });
    }
  };
  await Promise.all(Array.from({ length: CHATS }, (_, i) => direct(i, 2, false)));
  await Promise.all(Array.from({ length: CHATS }, (_, i) => direct(i, TURNS, true)));
  return { ours, reference, failures, oursSeconds };
}

// ---------------------------------------------------------------------------------------------------------


function startWorker(role, data = {}) {
  return new Worker(fileURLToPath(import.meta.url), { workerData: { role, ...data } });
}

async function main() {
  const model = startWorker('model');
  const modelTimes = new Map();
  const modelPort = await new Promise((resolve, reject) => {
    model.on('error', reject);
    model.on('message', (m) => {
      if (m.type === 'ready') resolve(m.port);
      else if (m.type === 'model') modelTimes.set(m.marker, m.ms);
    });
  });
  const modelUrl = `http://127.0.0.1:${modelPort}/v1`;

  const api = await startService(freshDir('chat'), { CALLPLANE_ALLOW_PRIVATE_NETWORK: 'true' });
  const auth = await api.signup();
  const service = await must(api.post('/organizations/ai-services', { name: 'Bench model', config: { provider: 'openai', base_url: modelUrl, api_key: 'sk-bench-0000' } }, auth), 'ai service');
  const { exampleWorkflowDefinition } = await dist('core/workflows/example-definition.js');
  const workflow = await must(api.post('/workflow/create/definition', {
    name: 'Dental', workflow_definition: exampleWorkflowDefinition, workflow_configurations: { llm: { service_id: service.id, model: 'bench-model' } },
  }, auth), 'workflow');

  const loader = startWorker('load', { url: api.url, token: auth.token, workflowId: workflow.id, modelUrl });
  // the service's event loop (this thread) while the recorded turns run: how busy it was, per turn
  let elu0 = null;
  let elu = null;
  let cpu0 = null;
  let cpu = null;
  let loadEnd = null;
  const result = await new Promise((resolve, reject) => {
    loader.on('error', reject);
    loader.on('message', (m) => {
      if (m.type === 'phase' && m.name === 'start') {
        elu0 = performance.eventLoopUtilization();
        cpu0 = mainThreadCpuMs();
      } else if (m.type === 'phase' && m.name === 'end') {
        elu = performance.eventLoopUtilization(elu0);
        cpu = cpu0 === null ? null : mainThreadCpuMs() - cpu0;
        loadEnd = os.loadavg()[0];
      }
      else if (m.type !== 'phase') resolve(m);
    });
  });
  await loader.terminate();
  await model.terminate();
  await api.stop();

  const overhead = (samples) => samples.filter((s) => modelTimes.has(s.marker)).map((s) => s.ms - modelTimes.get(s.marker));
  const ours = overhead(result.ours);
  const reference = overhead(result.reference);
  const modelOwn = result.ours.filter((s) => modelTimes.has(s.marker)).map((s) => modelTimes.get(s.marker));
  const summary = (xs) => ({ p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99), n: xs.length });
  report({
    name: 'chat', chats: CHATS, turns: TURNS, think_ms: THINK_MS, pause_ms: [PAUSE_MIN, PAUSE_MAX], failures: result.failures,
    turns_per_second: result.ours.length / result.oursSeconds,
    ours: summary(ours), reference: summary(reference), model: summary(modelOwn),
    round_trip: summary(result.ours.map((s) => s.ms)),
    service_loop_utilization: elu.utilization,
    service_busy_ms_per_turn: elu.active / result.ours.length,
    service_cpu_ms_per_turn: cpu === null ? null : cpu / result.ours.length,
    // other work on the machine moves every latency here; the 1-minute load average when the recorded turns ended
    load_average_end: loadEnd,
    target_p50: TARGET_P50, target_p95: TARGET_P95,
  });
  process.exit(0);
}

if (isMainThread) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else if (workerData.role === 'model') {
  fakeModel();
} else {
  load(workerData).then((r) => parentPort.postMessage(r), (e) => {
    console.error(e);
    process.exit(1);
  });
}
