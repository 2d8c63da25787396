/**
 * The media WebSocket through the running service, with a real `ws` client: upgrade authorization, the Twilio
 * Media Streams protocol end to end (TwiML from the signed inbound webhook → token in <Parameter> → start →
 * media → stop → a WAV downloadable through the run's recording_url), ignored garbage, limits and shutdown.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { openMigratedSqlite } from '../../adapters/storage/sqlite/database.js';
import { MediaTokens } from '../../core/calls/media-token.js';
import { UrlSigner } from '../../core/ports/crypto.port.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import ari from '../../providers/ari/index.js';
import simulator from '../../providers/simulator/index.js';
import { createTwilioPlugin } from '../../providers/twilio/index.js';
import { computeTwilioSignature } from '../../providers/twilio/twilio-signature.js';
import { FakeTwilioServer } from '../../test/fakes/twilio/fake-twilio-server.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';

const PUBLIC = 'https://cp.example.test';
const TWILIO_NUMBER = '+15550001111';
const SIM_NUMBER = '+15550003333';

interface Closed { code: number; reason: string }
interface Open { ws: WebSocket; closed: Promise<Closed> }

const wsUrl = (svc: TestService, path: string) => svc.url.replace(/^http/, 'ws') + path;

/** Opens a media WebSocket; rejects with the HTTP status and body when the upgrade is refused. */
function connect(svc: TestService, path: string): Promise<Open> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(svc, path));
    const closed = new Promise<Closed>((r) => ws.on('close', (code, reason) => r({ code, reason: reason.toString() })));
    ws.on('error', () => undefined);
    ws.once('open', () => resolve({ ws, closed }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => reject(Object.assign(new Error(`refused ${res.statusCode}`), { status: res.statusCode, body: body ? JSON.parse(body) : null })));
    });
  });
}

async function refused(svc: TestService, path: string): Promise<{ status: number; body: { code: string; detail: string } }> {
  try {
    const { ws } = await connect(svc, path);
    ws.terminate();
    throw new Error(`upgrade to ${path} was accepted`);
  } catch (e) {
    const err = e as Error & { status?: number; body?: { code: string; detail: string } };
    if (err.status === undefined) throw e;
    return { status: err.status, body: err.body! };
  }
}

const send = (ws: WebSocket, m: unknown) => new Promise<void>((r, j) => ws.send(typeof m === 'string' ? m : JSON.stringify(m), (e) => (e ? j(e) : r())));

function twilioStart(streamSid: string, callSid: string, parameters: Record<string, string>) {
  return {
    event: 'start', sequenceNumber: '1', streamSid,
    start: {
      streamSid, accountSid: 'AC00000000000000000000000000000000', callSid, tracks: ['inbound'],
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }, customParameters: parameters,
    },
  };
}
const twilioMedia = (streamSid: string, n: number, bytes: Buffer, track = 'inbound') => ({
  event: 'media', sequenceNumber: String(n + 2), streamSid, media: { track, chunk: String(n + 1), timestamp: String(n * 20), payload: bytes.toString('base64') },
});

/** The fields of a μ-law WAV header, read independently of the writer. */
function parseWav(buf: Buffer) {
  expect(buf.toString('ascii', 0, 4)).toBe('RIFF');
  expect(buf.toString('ascii', 8, 12)).toBe('WAVE');
  const chunks = new Map<string, { offset: number; size: number }>();
  let p = 12;
  while (p + 8 <= buf.length) {
    const id = buf.toString('ascii', p, p + 4);
    const size = buf.readUInt32LE(p + 4);
    chunks.set(id, { offset: p + 8, size });
    p += 8 + size + (size % 2);
  }
  const fmt = chunks.get('fmt ')!;
  const data = chunks.get('data')!;
  return {
    riffSize: buf.readUInt32LE(4),
    format: buf.readUInt16LE(fmt.offset), channels: buf.readUInt16LE(fmt.offset + 2), sampleRate: buf.readUInt32LE(fmt.offset + 4),
    byteRate: buf.readUInt32LE(fmt.offset + 8), blockAlign: buf.readUInt16LE(fmt.offset + 12), bitsPerSample: buf.readUInt16LE(fmt.offset + 14),
    factSamples: chunks.get('fact') ? buf.readUInt32LE(chunks.get('fact')!.offset) : null,
    dataSize: data.size, data: buf.subarray(data.offset, data.offset + data.size),
  };
}

describe('media WebSocket /api/v1/telephony/<provider>/media/<run_id>', () => {
  let fake: FakeTwilioServer;
  let svc: TestService;
  let dataDir: string;
  let auth: { token: string };
  let organizationId: number;
  let workflowId: number;
  let twilioConfigId: number;
  let simConfigId: number;
  let callCounter = 0;

  async function twilioPost(path: string, form: Record<string, string>) {
    const url = `/api/v1${path}`;
    return svc.request('POST', url, {
      rawBody: new URLSearchParams(form).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': computeTwilioSignature(fake.authToken, PUBLIC + url, form) },
    });
  }

  /** An inbound Twilio call as Twilio places it: the TwiML's stream URL path and its <Parameter>s. */
  async function inboundTwilioCall() {
    const callSid = `CA${String(++callCounter).padStart(32, '0')}`;
    const r = await twilioPost('/telephony/twilio/inbound', { AccountSid: fake.accountSid, CallSid: callSid, From: '+15559876543', To: TWILIO_NUMBER, Direction: 'inbound', CallStatus: 'ringing' });
    expect(r.status).toBe(200);
    const url = /<Stream url="([^"]+)"/.exec(r.text)?.[1];
    const params = Object.fromEntries([...r.text.matchAll(/<Parameter name="([^"]+)" value="([^"]+)"\/>/g)].map((m) => [m[1], m[2]]));
    expect(url).toMatch(/^wss:\/\/cp\.example\.test\/api\/v1\/telephony\/twilio\/media\/\d+$/);
    const path = new URL(url!).pathname;
    return { callSid, path, runId: Number(params.run_id), parameters: params as Record<string, string>, twiml: r.text };
  }

  async function inboundSimulatorCall(): Promise<number> {
    const r = await svc.post('/telephony/simulator/inbound', { account_id: 'media-sim', from: '+15559870000', to: SIM_NUMBER }, auth);
    expect(r.status).toBe(200);
    return r.body.run_id as number;
  }

  const runOf = async (runId: number) => (await svc.get(`/workflow/${workflowId}/runs/${runId}`, auth)).body;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'callplane-media-'));
    fake = await FakeTwilioServer.start({ numbers: [{ phoneNumber: TWILIO_NUMBER }] });
    const providers = ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [ari, createTwilioPlugin({ apiBaseUrl: fake.url, client: { sleep: async () => undefined } }), simulator]);
    svc = await startTestService({ env: { CALLPLANE_PUBLIC_URL: PUBLIC, CALLPLANE_DATA_DIR: dataDir, CALLPLANE_MEDIA_MAX_MESSAGE_BYTES: '4096' }, providers });
    const user = await svc.signup();
    auth = { token: user.token };
    organizationId = user.organizationId;
    const wf = await svc.post('/workflow/create/definition', { name: 'Receptionist', workflow_definition: exampleWorkflowDefinition }, auth);
    workflowId = wf.body.id;
    const twilio = await svc.post('/organizations/telephony-configs', { name: 'Twilio', config: { provider: 'twilio', account_sid: fake.accountSid, auth_token: fake.authToken } }, auth);
    twilioConfigId = twilio.body.id;
    expect((await svc.post(`/organizations/telephony-configs/${twilioConfigId}/phone-numbers`, { address: TWILIO_NUMBER, inbound_workflow_id: workflowId }, auth)).status).toBe(200);
    const sim = await svc.post('/organizations/telephony-configs', { name: 'Sim', config: { provider: 'simulator', account_id: 'media-sim', talk_ms: 600000 } }, auth);
    expect(sim.status).toBe(200);
    simConfigId = sim.body.id;
    expect((await svc.post(`/organizations/telephony-configs/${simConfigId}/phone-numbers`, { address: SIM_NUMBER, inbound_workflow_id: workflowId }, auth)).status).toBe(200);
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('records a Twilio Media Stream (connected/start/media×N/stop) as a μ-law WAV downloadable through recording_url; start moves the run to in_progress', async () => {
    const call = await inboundTwilioCall();
    expect(call.parameters.token).toMatch(/^\d+\.[0-9a-f]{64}$/);
    expect(await runOf(call.runId)).toMatchObject({ status: 'queued', recording_url: null });

    const { ws, closed } = await connect(svc, call.path);
    const streamSid = 'MZ00000000000000000000000000000001';
    await send(ws, { event: 'connected', protocol: 'Call', version: '1.0.0' });
    await send(ws, twilioStart(streamSid, call.callSid, call.parameters));
    const sent: Buffer[] = [];
    for (let i = 0; i < 25; i++) {
      const frame = randomBytes(160); // 20 ms of μ-law at 8 kHz
      sent.push(frame);
      await send(ws, twilioMedia(streamSid, i, frame));
      if (i === 3) {
        // garbage in the middle: ignored with a reason, never an error
        await send(ws, 'this is not JSON');
        await send(ws, { event: 'clear-all-the-things', streamSid });
        await send(ws, { event: 'media', streamSid, media: { track: 'inbound', payload: '***' } });
        await send(ws, [1, 2, 3]);
        await new Promise<void>((r) => ws.send(Buffer.from([0xff, 0x00]), { binary: true }, () => r()));
      }
    }
    await send(ws, twilioMedia(streamSid, 99, randomBytes(160), 'outbound')); // what the caller hears: not recorded
    await send(ws, { event: 'mark', sequenceNumber: '40', streamSid, mark: { name: 'greeting-done' } });
    await send(ws, { event: 'stop', sequenceNumber: '41', streamSid, stop: { accountSid: fake.accountSid, callSid: call.callSid } });
    expect(await closed).toEqual({ code: 1000, reason: 'stream stopped' });

    const run = await runOf(call.runId);
    expect(run.status).toBe('in_progress');
    expect(run.transcript_url).toBeNull();
    expect(run.recording_url).toMatch(new RegExp(`^${PUBLIC}/api/v1/files/runs/${organizationId}/${call.runId}/recording\\.wav\\?expires=\\d+&signature=[0-9a-f]{64}$`));
    expect(run.annotations.media_stream).toMatchObject({
      provider: 'twilio', stream_id: streamSid, end_reason: 'stop', inbound_bytes: 25 * 160, outbound_bytes: 160, recorded_bytes: 25 * 160,
      ignored_messages: 5, media_format: { encoding: 'audio/x-mulaw', sample_rate: 8000, channels: 1 },
    });
    expect(run.annotations.media_stream.timeline.map((e: { event: string }) => e.event)).toEqual(['start', 'mark', 'stop']);
    expect(run.logs.entries.map((l: { event: string }) => l.event)).toEqual(expect.arrayContaining(['call_in_progress', 'media_stream_ended']));

    const download = await fetch(svc.url + new URL(run.recording_url).pathname + new URL(run.recording_url).search);
    expect(download.status).toBe(200);
    const wav = Buffer.from(await download.arrayBuffer());
    const h = parseWav(wav);
    expect(h).toMatchObject({ format: 7, channels: 1, sampleRate: 8000, byteRate: 8000, blockAlign: 1, bitsPerSample: 8, factSamples: 25 * 160, dataSize: 25 * 160 });
    expect(h.riffSize).toBe(wav.length - 8);
    expect(Buffer.compare(h.data, Buffer.concat(sent))).toBe(0);
    // the raw part is gone once the WAV is written
    expect((await svc.get(`/files/runs/${organizationId}/${call.runId}/recording.ulaw.part`)).status).not.toBe(200);

    const ignored = svc.logs.filter((l) => l.includes('media message ignored')).join('\n');
    expect(ignored).toContain('not JSON');
    expect(ignored).toContain('unknown event');
    expect(ignored).toContain('binary frame');
  });

  it('the outbound answer TwiML carries a token too, and a start with a wrong or missing token is closed with 1008, recording nothing', async () => {
    const call = await inboundTwilioCall();
    for (const parameters of [{ run_id: String(call.runId) } as Record<string, string>, { ...call.parameters, token: call.parameters.token!.replace(/.$/, (c) => (c === '0' ? '1' : '0')) }]) {
      const { ws, closed } = await connect(svc, call.path);
      await send(ws, twilioStart('MZ2', call.callSid, parameters));
      await send(ws, twilioMedia('MZ2', 0, randomBytes(160)));
      expect(await closed).toEqual({ code: 1008, reason: 'token invalid' });
    }
    // a token of another run does not open this one
    const other = await inboundTwilioCall();
    const { ws, closed } = await connect(svc, call.path);
    await send(ws, twilioStart('MZ3', call.callSid, other.parameters));
    expect((await closed).code).toBe(1008);
    expect(await runOf(call.runId)).toMatchObject({ status: 'queued', recording_url: null });

    // the outbound answer URL's TwiML signs its stream the same way
    const answer = await twilioPost(`/telephony/twilio/answer/${call.runId}`, { AccountSid: fake.accountSid, CallSid: call.callSid, CallStatus: 'in-progress' });
    expect(answer.text).toMatch(new RegExp(`<Stream url="wss://cp\\.example\\.test/api/v1/telephony/twilio/media/${call.runId}"><Parameter name="run_id" value="${call.runId}"/><Parameter name="token" value="\\d+\\.[0-9a-f]{64}"/></Stream>`));
  });

  it('refuses upgrades: expired or forged URL tokens 401, unknown runs and other providers 404 (to genuine token holders), finished runs at start', async () => {
    const simRun = await inboundSimulatorCall();
    const tokens = svc.container.get(MediaTokens);
    const past = new MediaTokens(svc.container.get<UrlSigner>(UrlSigner), { now: () => new Date(Date.now() - 3600_000) }, 900);
    const base = `/api/v1/telephony/simulator/media/${simRun}`;

    expect(await refused(svc, base)).toMatchObject({ status: 401, body: { code: 'media_token_missing' } });
    expect(await refused(svc, `${base}?token=${encodeURIComponent(past.issue('simulator', simRun))}`)).toMatchObject({ status: 401, body: { code: 'media_token_expired' } });
    expect(await refused(svc, `${base}?token=${encodeURIComponent(tokens.issue('simulator', simRun + 1))}`)).toMatchObject({ status: 401, body: { code: 'media_token_invalid' } });
    expect(await refused(svc, `${base}?token=${encodeURIComponent(tokens.issue('twilio', simRun))}`)).toMatchObject({ status: 401, body: { code: 'media_token_invalid' } });
    expect(await refused(svc, `/api/v1/telephony/simulator/media/999999?token=${encodeURIComponent(tokens.issue('simulator', 999999))}`)).toMatchObject({ status: 404, body: { code: 'run_not_found' } });
    // the run id in the query (fixed client URLs) is held to the same rules; none at all is no run
    expect(await refused(svc, `/api/v1/telephony/simulator/media?run_id=999999&token=${encodeURIComponent(tokens.issue('simulator', 999999))}`)).toMatchObject({ status: 404, body: { code: 'run_not_found' } });
    expect(await refused(svc, '/api/v1/telephony/simulator/media?run_id=abc')).toMatchObject({ status: 404, body: { code: 'run_not_found' } });
    expect(await refused(svc, '/api/v1/telephony/simulator/media')).toMatchObject({ status: 404, body: { code: 'run_not_found' } });
    // a provider with no media framing here (vonage is not registered in this service), a path that is not the endpoint
    expect(await refused(svc, `/api/v1/telephony/vonage/media/${simRun}`)).toMatchObject({ status: 404, body: { code: 'media_not_supported' } });
    expect(await refused(svc, '/api/v1/health')).toMatchObject({ status: 404 });

    // finished: the run's call has ended
    const twilioCall = await inboundTwilioCall();
    const stream = { AccountSid: fake.accountSid, CallSid: twilioCall.callSid, StreamSid: 'MZ9' };
    await twilioPost(`/telephony/twilio/status/${twilioCall.runId}`, { ...stream, StreamEvent: 'stream-stopped' });
    expect((await runOf(twilioCall.runId)).status).toBe('completed');
    // only a caller holding the run's genuine token learns that it has finished
    const { ws, closed } = await connect(svc, twilioCall.path);
    await send(ws, twilioStart('MZ10', twilioCall.callSid, twilioCall.parameters));
    expect(await closed).toEqual({ code: 1008, reason: 'run_finished' });
  });

  it('answers alike for an active, a finished and an unknown run id when the caller has no valid token', async () => {
    const active = await inboundTwilioCall();
    const finished = await inboundTwilioCall();
    await twilioPost(`/telephony/twilio/status/${finished.runId}`, { AccountSid: fake.accountSid, CallSid: finished.callSid, StreamSid: 'MZ8', StreamEvent: 'stream-stopped' });
    expect((await runOf(finished.runId)).status).toBe('completed');
    const simActive = await inboundSimulatorCall();
    const unknown = 999_999;
    const forged = `${Math.floor(Date.now() / 1000) + 600}.${'a'.repeat(64)}`;

    // a provider whose token rides on the URL: refused before any lookup, the same for every run id
    for (const query of ['', `?token=${forged}`, '?token=garbage']) {
      const answers = [];
      for (const runId of [simActive, finished.runId, unknown]) answers.push(await refused(svc, `/api/v1/telephony/simulator/media/${runId}${query}`));
      expect(answers[0]!.status).toBe(401);
      expect(answers.slice(1)).toEqual([answers[0], answers[0]]);
    }

    // Twilio (token in start): every upgrade is accepted without a lookup; a start without a genuine token of
    // that run closes the same way whichever run it names
    for (const parameters of [{}, { token: forged }, { token: active.parameters.token! }] as Array<Record<string, string>>) {
      const outcomes = [];
      for (const runId of [simActive, finished.runId, unknown]) {
        const { ws, closed } = await connect(svc, `/api/v1/telephony/twilio/media/${runId}`);
        await send(ws, twilioStart('MZ11', active.callSid, { run_id: String(runId), ...parameters }));
        outcomes.push(await closed);
      }
      expect(outcomes).toEqual([{ code: 1008, reason: 'token invalid' }, { code: 1008, reason: 'token invalid' }, { code: 1008, reason: 'token invalid' }]);
    }
    // and the active run is untouched by all of it
    expect(await runOf(active.runId)).toMatchObject({ status: 'queued', recording_url: null });
  });

  it('streams the simulator framing with a URL token; one session per run (409); an oversized message closes with 1009', async () => {
    const runId = await inboundSimulatorCall();
    const path = `/api/v1/telephony/simulator/media/${runId}?token=${encodeURIComponent(svc.container.get(MediaTokens).issue('simulator', runId))}`;
    const { ws, closed } = await connect(svc, path);
    await send(ws, { event: 'start' });
    await new Promise<void>((r) => ws.send(randomBytes(800), { binary: true }, () => r()));
    expect(await refused(svc, path)).toMatchObject({ status: 409, body: { code: 'media_session_active' } });
    await send(ws, 'x'.repeat(5000)); // CALLPLANE_MEDIA_MAX_MESSAGE_BYTES=4096
    expect((await closed).code).toBe(1009);
    // the session still finalized what it had
    for (let i = 0; i < 50 && !(await runOf(runId)).recording_url; i++) await new Promise((r) => setTimeout(r, 20));
    const run = await runOf(runId);
    expect(run.annotations.media_stream).toMatchObject({ provider: 'simulator', end_reason: 'too_large', recorded_bytes: 800 });
    expect(run.recording_url).not.toBeNull();
  });
});

describe('media WebSocket limits and shutdown', () => {
  it('idles out (4408), caps concurrent sessions (503) and closes sessions on shutdown (1001) after storing their recordings', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callplane-media-'));
    const db = openMigratedSqlite(':memory:');
    const svc = await startTestService({
      db,
      env: {
        CALLPLANE_DATA_DIR: dataDir, CALLPLANE_MEDIA_MAX_SESSIONS: '2', CALLPLANE_MEDIA_IDLE_TIMEOUT_MS: '400', CALLPLANE_MEDIA_START_TIMEOUT_MS: '200',
      },
    });
    try {
      const user = await svc.signup();
      const auth = { token: user.token };
      const wf = await svc.post('/workflow/create/definition', { name: 'W', workflow_definition: exampleWorkflowDefinition }, auth);
      const cfg = await svc.post('/organizations/telephony-configs', { name: 'Sim', config: { provider: 'simulator', account_id: 'limits', talk_ms: 600000 } }, auth);
      await svc.post(`/organizations/telephony-configs/${cfg.body.id}/phone-numbers`, { address: SIM_NUMBER, inbound_workflow_id: wf.body.id }, auth);
      const tokens = svc.container.get(MediaTokens);
      const newRun = async () => (await svc.post('/telephony/simulator/inbound', { account_id: 'limits', from: '+1555', to: SIM_NUMBER }, auth)).body.run_id as number;
      const pathOf = (runId: number) => `/api/v1/telephony/simulator/media/${runId}?token=${encodeURIComponent(tokens.issue('simulator', runId))}`;

      const idle = await connect(svc, pathOf(await newRun()));
      expect(await idle.closed).toEqual({ code: 4408, reason: 'idle timeout' });

      // two live sessions fill the cap; keep them busy so they do not idle out
      const a = await newRun();
      const b = await newRun();
      const first = await connect(svc, pathOf(a));
      const second = await connect(svc, pathOf(b));
      const keepAlive = setInterval(() => {
        for (const s of [first, second]) if (s.ws.readyState === WebSocket.OPEN) s.ws.send(Buffer.alloc(160, 0x7f), { binary: true });
      }, 50);
      try {
        await send(first.ws, { event: 'start' });
        await send(second.ws, { event: 'start' });
        expect(await refused(svc, pathOf(await newRun()))).toMatchObject({ status: 503, body: { code: 'media_sessions_exhausted' } });
        await new Promise((r) => setTimeout(r, 120));
        await svc.close();
      } finally {
        clearInterval(keepAlive);
      }
      expect((await first.closed).code).toBe(1001);
      expect((await second.closed).code).toBe(1001);
      const runs = svc.container.get<RunRepository>(RunRepository);
      for (const id of [a, b]) {
        const run = await runs.get(user.organizationId, id);
        expect(run?.recordingKey).toBe(`runs/${user.organizationId}/${id}/recording.wav`);
        expect(run?.annotations.media_stream).toMatchObject({ end_reason: 'shutdown' });
        expect((run?.annotations.media_stream as { recorded_bytes: number }).recorded_bytes).toBeGreaterThan(0);
      }
    } finally {
      await svc.close();
      db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('closes a Twilio stream that sends no authorized start in time with 1008', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callplane-media-'));
    const fake = await FakeTwilioServer.start({ numbers: [] });
    const providers = ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [createTwilioPlugin({ apiBaseUrl: fake.url }), simulator]);
    const svc = await startTestService({ providers, env: { CALLPLANE_DATA_DIR: dataDir, CALLPLANE_MEDIA_START_TIMEOUT_MS: '200' } });
    try {
      const user = await svc.signup();
      const auth = { token: user.token };
      const wf = await svc.post('/workflow/create/definition', { name: 'W', workflow_definition: exampleWorkflowDefinition }, auth);
      const cfg = await svc.post('/organizations/telephony-configs', { name: 'T', config: { provider: 'twilio', account_sid: fake.accountSid, auth_token: fake.authToken } }, auth);
      const runs = svc.container.get<RunRepository>(RunRepository);
      const run = await runs.create(user.organizationId, {
        workflowId: wf.body.id, definitionId: wf.body.current_definition_id, name: 'out', mode: 'outbound', telephonyConfigurationId: cfg.body.id,
        provider: 'twilio', calledNumber: '+15557654321', initialContext: {}, now: new Date(),
      });
      const { ws, closed } = await connect(svc, `/api/v1/telephony/twilio/media/${run.id}`);
      await send(ws, { event: 'connected', protocol: 'Call', version: '1.0.0' });
      expect(await closed).toEqual({ code: 1008, reason: 'no authorized start' });
      expect((await runs.get(user.organizationId, run.id))?.status).toBe('queued');
    } finally {
      await svc.close();
      await fake.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
