// Benchmark 8: 1,000 call.ended events to a local receiver while a 100-call simulator campaign runs, on the real
// service built in this process (the same modules as http/main.js). Ours: EventPublisher.publish (one outbox insert per
// subscribed endpoint) → the sender (claim under a lease, sign, POST through the network policy, record) → receipt;
// delivered/s over the burst and p95 from publish to receipt. Reference: a bare loop POSTing the same bodies with the
// same headers (names and sizes: user agent, a signature of the same shape, the delivery id) to the same receiver at
// the same concurrency (keep-alive node:http, no storage, no signing), same run.
// Fairness: both sides are warmed the same way before anything is measured (BENCH_WEBHOOK_WARMUP sends each, 1,000
// by default): the bare loop first (its own agent, destroyed after), then ours (the same publish path, before the
// campaign starts, every warm-up delivery received before the measured burst). Without it, ours ran on cold code
// and the bare loop after it on node's HTTP client that ours had warmed.
// The receiver runs on a worker thread; times are absolute (timeOrigin + now) so both threads agree.
import 'reflect-metadata';
import http from 'node:http';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { createSimulatorConfig, createWorkflow, csvOf, dist, freePort, freshDir, mainThreadCpuMs, must, percentile, report, uploadCsv } from './lib.mjs';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1000);
const PER_ENDPOINT = 16;
// 0 leaves the campaign out (to see the deliveries' own cost while iterating); the benchmark's figure runs it
const CAMPAIGN_CALLS = Number(process.env.BENCH_WEBHOOK_CAMPAIGN_CALLS ?? 100);
const WARMUP = Number(process.env.BENCH_WEBHOOK_WARMUP ?? 1000);
const now = () => performance.timeOrigin + performance.now();

function startReceiver() {
  const worker = new Worker(`
    const { parentPort } = require('node:worker_threads');
    const http = require('node:http');
    const seen = [];
    const server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const at = performance.timeOrigin + performance.now();
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        seen.push([body.data.run_id, at, req.headers['callplane-delivery-id'] ? 1 : 0]);
        res.writeHead(200).end();
      });
    });
    server.keepAliveTimeout = 60000;
    server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
    parentPort.on('message', (m) => {
      if (m === 'drain') { parentPort.postMessage({ seen: seen.splice(0) }); }
      if (m === 'close') { server.closeAllConnections(); server.close(() => process.exit(0)); }
    });
  `, { eval: true });
  return new Promise((resolve) => worker.once('message', ({ port }) => resolve({
    url: `http://127.0.0.1:${port}/hooks`,
    drain: () => new Promise((r) => { worker.once('message', (m) => r(m.seen)); worker.postMessage('drain'); }),
    close: () => worker.postMessage('close'),
  })));
}

async function startInProcess(dataDir) {
  const { loadSettings, ensureSecretKey } = await dist('plugins/settings.js');
  const { buildContainer, ExpressAppToken, attachHttpServer } = await dist('plugins/composition-root.js');
  const { createHttpServer } = await dist('http/app.js');
  const { PinoLogger } = await dist('adapters/logging/pino-logger.js');
  const { LifecycleToken } = await dist('plugins/tokens.js');
  const port = await freePort();
  const settings = loadSettings({ CALLPLANE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', CALLPLANE_SIGNUP: 'open', LOG_LEVEL: 'warn' });
  const container = buildContainer({ settings, secretKey: ensureSecretKey(settings), logger: PinoLogger.create({ level: 'warn' }) });
  const server = createHttpServer(container.get(ExpressAppToken));
  const detach = attachHttpServer(container, server);
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  await container.get(LifecycleToken).start();
  const url = `http://127.0.0.1:${port}`;
  const request = async (method, path, body, auth = {}) => {
    const headers = {};
    if (auth.token) headers.authorization = `Bearer ${auth.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${url}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let parsed = text;
    try { parsed = JSON.parse(text); } catch { /* not JSON */ }
    return { status: res.status, body: parsed, text };
  };
  return {
    url, container, request,
    get: (p, a) => request('GET', p, undefined, a),
    post: (p, b, a) => request('POST', p, b, a),
    async stop() {
      await detach();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await container.get(LifecycleToken).stop();
    },
  };
}

/** A run as the publisher sees it (a finished outbound call). */
const fakeRun = (organizationId, id) => {
  const t = new Date();
  return {
    id, organizationId, workflowId: 1, definitionId: 1, name: `run ${id}`, mode: 'outbound', status: 'completed', disposition: 'completed',
    campaignId: null, attemptId: null, telephonyConfigurationId: null, provider: 'simulator', providerCallId: `bench-${id}`,
    callerNumber: '+15550000001', calledNumber: '+15550000002', initialContext: { first_name: 'Dana' }, gatheredContext: { mapped_call_disposition: 'completed', intent: 'book' },
    logs: [], annotations: {}, costInfo: { call_duration_seconds: 42, service_token_usage: 0, charge_usd: 0 }, durationSeconds: 42,
    transcriptKey: null, recordingKey: null, createdAt: t, startedAt: t, endedAt: t, updatedAt: t,
  };
};

async function ours(receiver) {
  const dir = freshDir('webhooks');
  const api = await startInProcess(dir);
  const { EventPublisher } = await dist('core/ports/event-publisher.port.js');
  const { WebhookDispatcher } = await dist('core/webhooks/webhook-dispatcher.js');
  const signup = await must(api.post('/auth/signup', { email: 'bench@example.com', password: 'correct horse battery', organization_name: 'Bench' }), 'signup');
  const auth = { token: signup.token };
  const org = signup.user.organization_id;
  await must(api.post('/organizations/webhooks', { url: receiver.url, events: ['call.ended'] }, auth), 'webhook');
  const publisher = api.container.get(EventPublisher);
  // warm-up, unmeasured: the same publish path as the burst, paced the same way, all received before going on
  if (WARMUP > 0) {
    const warm = new Set();
    for (let i = 0; i < WARMUP; i++) {
      warm.add(3_000_000 + i);
      await publisher.publish({ type: 'call.ended', organizationId: org, run: fakeRun(org, 3_000_000 + i) });
      await new Promise((r) => setImmediate(r));
    }
    const until = Date.now() + 60_000;
    while (warm.size > 0 && Date.now() < until) {
      for (const [runId] of await receiver.drain()) warm.delete(runId);
      await new Promise((r) => setTimeout(r, 20));
    }
    await api.container.get(WebhookDispatcher).idle();
    if (warm.size > 0) throw new Error(`warm-up: ${warm.size} deliveries not received`);
  }
  // the campaign that runs meanwhile: 100 calls, 20 at a time, each talking 1.5 s (its own call.ended go out too)
  let campaign = null;
  if (CAMPAIGN_CALLS > 0) {
    const workflowId = await createWorkflow(api, auth);
    await createSimulatorConfig(api, auth, { ringMs: 50, talkMs: 1500 });
    const key = await uploadCsv(api, auth, csvOf(CAMPAIGN_CALLS));
    campaign = await must(api.post('/campaign/create', {
      name: 'Load', workflow_id: workflowId, source_type: 'csv', source_id: key, max_concurrency: 20, retry_config: { enabled: false },
    }, auth), 'campaign');
    await must(api.post(`/campaign/${campaign.id}/start`, undefined, auth), 'start');
  }
  await new Promise((r) => setTimeout(r, 500));

  const published = new Map();
  const publishMs = [];
  const cpu0 = mainThreadCpuMs();
  const t0 = now();
  for (let i = 0; i < EVENTS; i++) {
    const id = 1_000_000 + i;
    const at = now();
    published.set(id, at);
    await publisher.publish({ type: 'call.ended', organizationId: org, run: fakeRun(org, id) });
    publishMs.push(now() - at);
    // each event comes from its own status callback in the service: let the event loop turn between them
    await new Promise((r) => setImmediate(r));
  }
  const publishedIn = now() - t0;
  const got = new Map();
  const deadline = Date.now() + 60_000;
  while (got.size < EVENTS && Date.now() < deadline) {
    for (const [runId, at] of await receiver.drain()) if (published.has(runId) && !got.has(runId)) got.set(runId, at);
    await new Promise((r) => setTimeout(r, 20));
  }
  const cpu = cpu0 === null ? null : mainThreadCpuMs() - cpu0;
  const last = Math.max(...got.values());
  const latencies = [...got].map(([id, at]) => at - published.get(id));
  const state = campaign ? (await api.get(`/campaign/${campaign.id}`, auth)).body : { state: null, processed_rows: null };
  await api.container.get(WebhookDispatcher).idle();
  await api.stop();
  return {
    received: got.size, seconds: (last - t0) / 1000, per_second: got.size / ((last - t0) / 1000),
    p50_ms: percentile(latencies, 50), p95_ms: percentile(latencies, 95), max_ms: Math.max(...latencies),
    main_thread_cpu_ms_per_event: cpu === null ? null : cpu / EVENTS,
    publish_p50_ms: percentile(publishMs, 50), publish_p95_ms: percentile(publishMs, 95), publish_total_ms: publishedIn,
    campaign_state_at_end: state.state, campaign_processed_at_end: state.processed_rows,
  };
}

/**
 * The reference's loop: `bodies` POSTed through `post`, PER_ENDPOINT at a time, each with its own run id from
 * `idBase`; delivered/s, event → receipt and main-thread CPU, as for ours.
 */
async function bareLoop(receiver, bodies, idBase, post) {
  const sent = new Map();
  const cpu0 = mainThreadCpuMs();
  const t0 = now();
  let next = 0;
  await Promise.all(Array.from({ length: PER_ENDPOINT }, async () => {
    while (next < bodies.length) {
      const i = next++;
      sent.set(idBase + i, now());
      await post(bodies[i].replace('"run_id":1000000', `"run_id":${idBase + i}`), i + 1);
    }
  }));
  const cpu = cpu0 === null ? null : mainThreadCpuMs() - cpu0;
  const got = new Map();
  for (const [runId, at] of await receiver.drain()) if (sent.has(runId)) got.set(runId, at);
  const last = Math.max(...got.values());
  const latencies = [...got].map(([id, at]) => at - sent.get(id));
  return { received: got.size, seconds: (last - t0) / 1000, per_second: got.size / ((last - t0) / 1000), p50_ms: percentile(latencies, 50), p95_ms: percentile(latencies, 95), main_thread_cpu_ms_per_event: cpu === null ? null : cpu / bodies.length };
}

async function bare(receiver, bodies, idBase = 2_000_000) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: PER_ENDPOINT });
  const u = new URL(receiver.url);
  // the headers ours sends, byte for byte in size: a signature of the same shape (computed once: the reference does
  // not sign), the delivery id as a number, the user agent
  const signature = `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`;
  const post = (body, id) => new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: {
      'content-type': 'application/json', 'user-agent': 'Callplane-Webhooks/1', 'content-length': Buffer.byteLength(body),
      'callplane-signature': signature, 'callplane-delivery-id': String(id), 'callplane-event': 'call.ended',
    } }, (res) => { res.resume(); res.on('end', resolve); });
    req.on('error', reject);
    req.end(body);
  });
  const result = await bareLoop(receiver, bodies, idBase, post);
  agent.destroy();
  return result;
}

/**
 * The same bare loop on undici (the HTTP client ours uses since round 7): a Pool of PER_ENDPOINT keep-alive
 * connections, `request` and the body drained. A second reference: ours against a bare loop on its own client.
 */
async function bareUndici(receiver, bodies, idBase = 5_000_000) {
  const { Pool } = await import('undici');
  const u = new URL(receiver.url);
  const pool = new Pool(u.origin, { connections: PER_ENDPOINT });
  const signature = `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`;
  const post = async (body, id) => {
    const res = await pool.request({ path: u.pathname, method: 'POST', body, headers: {
      'content-type': 'application/json', 'user-agent': 'Callplane-Webhooks/1',
      'callplane-signature': signature, 'callplane-delivery-id': String(id), 'callplane-event': 'call.ended',
    } });
    await res.body.dump();
  };
  const result = await bareLoop(receiver, bodies, idBase, post);
  await pool.destroy();
  return result;
}

const receiver = await startReceiver();
const { deliveryBody, callEventData } = await dist('core/webhooks/webhook-events.js');
const sample = deliveryBody(1, 'call.ended', new Date(), await callEventData({ view: async (run) => ({ run, transcriptUrl: null, recordingUrl: null, initialContext: run.initialContext, gatheredContext: run.gatheredContext }) }, fakeRun(1, 1_000_000)));
// the bare loop's warm-up (ours warms inside `ours`, the same number of sends)
if (WARMUP > 0) {
  const w = await bare(receiver, Array.from({ length: WARMUP }, () => sample), 4_000_000);
  if (w.received !== WARMUP) throw new Error(`bare warm-up: ${w.received} of ${WARMUP} received`);
  const wu = await bareUndici(receiver, Array.from({ length: WARMUP }, () => sample), 6_000_000);
  if (wu.received !== WARMUP) throw new Error(`bare undici warm-up: ${wu.received} of ${WARMUP} received`);
}
await receiver.drain();
const o = await ours(receiver);
await receiver.drain();
const b = await bare(receiver, Array.from({ length: EVENTS }, () => sample));
await receiver.drain();
const bu = await bareUndici(receiver, Array.from({ length: EVENTS }, () => sample));
receiver.close();
report({ events: EVENTS, per_endpoint: PER_ENDPOINT, body_bytes: Buffer.byteLength(sample), ours: o, bare: b, ratio: o.per_second / b.per_second,
  bare_undici: bu, ratio_undici: o.per_second / bu.per_second, target_ratio: 0.5, target_p95_ms: 1000, campaign_calls: CAMPAIGN_CALLS, warmup: WARMUP });
