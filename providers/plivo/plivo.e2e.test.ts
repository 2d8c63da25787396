/**
 * Plivo end to end: the running service (startTestService) with the plivo plugin's REST client pointed at the
 * fake Plivo API, and webhooks signed as Plivo signs them (X-Plivo-Signature-V3 over CALLPLANE_PUBLIC_URL +
 * path + query, the form parameters and a nonce).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { BUILT_IN_PROVIDER_PLUGINS } from '../../plugins/provider-registry.builtins.js';
import { FakePlivoServer } from '../../test/fakes/plivo/fake-plivo-server.js';
import { BOUND, PUBLIC, startProviderE2e, UNBOUND, type ProviderE2e } from '../../test/support/provider-e2e.js';
import type { TestService } from '../../test/support/test-service.js';
import simulator from '../simulator/index.js';
import { createPlivoPlugin } from './index.js';

const APP = '20372631212782780';

describe('Plivo through the running service', () => {
  let fake: FakePlivoServer;
  let svc: TestService;
  let auth: { token: string };
  let workflowId: number;
  let configId: number;
  let e2e: ProviderE2e;
  let dataDir: string;

  /** POSTs a form to the service as Plivo does, signed over the public URL (path + query) unless headers are given. */
  async function plivoPost(pathAndQuery: string, form: Record<string, string>, headers?: Record<string, string>) {
    const url = `/api/v1${pathAndQuery}`;
    return svc.request('POST', url, {
      rawBody: new URLSearchParams(form).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(headers ?? fake.signWebhook(PUBLIC + url, form)) },
    });
  }

  /** Creates an outbound Plivo run and places it through the provider instance, as the campaign engine does. */
  async function placeOutbound(to: string, machineDetection: boolean) {
    const { run, providerCallId } = await e2e.placeOutbound(to, machineDetection);
    return { run, requestUuid: providerCallId };
  }

  const runOf = (runId: number) => e2e.runOf(runId);

  beforeAll(async () => {
    fake = await FakePlivoServer.start({ applications: { [APP]: { answerUrl: 'https://old.example.com/answer' } }, numbers: [{ number: BOUND }, { number: UNBOUND }] });
    dataDir = mkdtempSync(join(tmpdir(), 'callplane-plivo-'));
    e2e = await startProviderE2e({
      provider: 'plivo',
      plugins: [createPlivoPlugin({ apiBaseUrl: fake.url, client: { sleep: async () => undefined } }), simulator],
      env: { CALLPLANE_DATA_DIR: dataDir },
      configuration: {
        name: 'Plivo', config: { provider: 'plivo', auth_id: fake.authId, auth_token: fake.authToken, application_id: APP },
      },
    });
    ({ svc, auth, workflowId, configId } = e2e);
    expect(e2e.configBody.credentials.auth_token).not.toBe(fake.authToken);
    expect(e2e.configBody.credentials).toMatchObject({ auth_id: fake.authId, application_id: APP });
  });
  afterAll(async () => {
    await svc?.close();
    await fake?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('is a built-in provider, listed by the metadata endpoint with its three fields', async () => {
    expect(BUILT_IN_PROVIDER_PLUGINS.map((p) => p.manifest.id)).toContain('plivo');
    const meta = await svc.get('/organizations/telephony-providers/metadata', auth);
    const plivo = meta.body.providers.find((p: { provider: string }) => p.provider === 'plivo');
    expect(plivo.fields.map((f: { name: string }) => f.name)).toEqual(['auth_id', 'auth_token', 'application_id']);
  });

  it('binds a number: linked to the application, whose answer URL becomes our inbound URL with the account', async () => {
    const r = await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: BOUND, inbound_workflow_id: workflowId }, auth);
    expect(r.status).toBe(200);
    expect(r.body.provider_sync).toMatchObject({ ok: true });
    expect(fake.numbers.get('15550001111')?.appId).toBe(APP);
    expect(fake.applications.get(APP)?.answerUrl).toBe(`${PUBLIC}/api/v1/telephony/plivo/inbound?auth_id=${fake.authId}`);
    const missing = await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: '+15550009999', inbound_workflow_id: workflowId }, auth);
    expect(missing.status).toBe(200);
    expect(missing.body.provider_sync).toMatchObject({ ok: false });
    expect((await svc.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: UNBOUND }, auth)).status).toBe(200);
  });

  it('places a call; the answer URL streams to the media WebSocket; signed callbacks move the run ringing → in_progress → completed', async () => {
    const { run, requestUuid } = await placeOutbound('+15557654321', false);
    expect(fake.calls.get(requestUuid)?.request).toMatchObject({
      answer_url: `${PUBLIC}/api/v1/telephony/plivo/answer/${run.id}`, hangup_url: `${PUBLIC}/api/v1/telephony/plivo/status/${run.id}`,
      ring_url: `${PUBLIC}/api/v1/telephony/plivo/status/${run.id}`, from: '15550001111', to: '15557654321',
    });
    const call = fake.answer(requestUuid);
    const base = { CallUUID: call.callUuid, RequestUUID: requestUuid, From: '15550001111', To: '15557654321', Direction: 'outbound' };
    const status = `/telephony/plivo/status/${run.id}`;

    expect((await plivoPost(status, { ...base, CallStatus: 'ringing', Event: 'Ring' })).status).toBe(200);
    expect((await runOf(run.id)).status).toBe('ringing');
    const answer = await plivoPost(`/telephony/plivo/answer/${run.id}`, { ...base, CallStatus: 'in-progress' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/xml/);
    expect(answer.text).toMatch(new RegExp(
      `<Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">wss://cp\\.example\\.test/api/v1/telephony/plivo/media/${run.id}\\?token=\\d+\\.[0-9a-f]{64}</Stream>`,
    ));
    expect((await plivoPost(status, { ...base, CallStatus: 'in-progress', Machine: 'false' })).status).toBe(200);
    expect((await runOf(run.id)).status).toBe('in_progress');
    fake.end(requestUuid, 'NORMAL_CLEARING', 42);
    const hangup = await plivoPost(status, { ...base, CallStatus: 'completed', Event: 'Hangup', HangupCause: 'NORMAL_CLEARING', Duration: '42', BillDuration: '60' });
    expect(hangup.body).toEqual({ received: true, applied: true });
    expect(await runOf(run.id)).toMatchObject({ status: 'completed', disposition: 'completed', duration_seconds: 42 });
    // a late ringing callback never moves the call backwards
    await plivoPost(status, { ...base, CallStatus: 'ringing' });
    expect((await runOf(run.id)).status).toBe('completed');
  });

  it('refuses forged and tampered callbacks and answer requests with 403, changing nothing', async () => {
    const { run, requestUuid } = await placeOutbound('+15557654322', false);
    const form = { CallUUID: 'c-1', RequestUUID: requestUuid, CallStatus: 'completed', Duration: '5' };
    const status = `/telephony/plivo/status/${run.id}`;
    const signed = fake.signWebhook(PUBLIC + `/api/v1${status}`, form);
    expect((await plivoPost(status, { ...form, CallStatus: 'busy' }, signed)).status).toBe(403);
    expect((await plivoPost(status, form, { 'x-plivo-signature-v3-nonce': signed['x-plivo-signature-v3-nonce']! })).status).toBe(403);
    const otherUrl = fake.signWebhook(`${PUBLIC}/api/v1/telephony/plivo/status/999999`, form);
    const r = await plivoPost(status, form, otherUrl);
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ code: 'signature_invalid' });
    const answerForged = await plivoPost(`/telephony/plivo/answer/${run.id}`, form, { 'x-plivo-signature-v3': 'AAAA', 'x-plivo-signature-v3-nonce': 'n' });
    expect(answerForged.status).toBe(403);
    expect((await runOf(run.id)).status).toBe('queued');
  });

  it('asks for machine detection; a machine ends the run as voicemail and the answer URL hangs up', async () => {
    const { run, requestUuid } = await placeOutbound('+15557654323', true);
    expect(fake.calls.get(requestUuid)?.request).toMatchObject({ machine_detection: 'hangup', machine_detection_url: `${PUBLIC}/api/v1/telephony/plivo/status/${run.id}` });
    const call = fake.answer(requestUuid);
    const base = { CallUUID: call.callUuid, RequestUUID: requestUuid, Direction: 'outbound' };
    const answer = await plivoPost(`/telephony/plivo/answer/${run.id}`, { ...base, CallStatus: 'in-progress', Machine: 'true' });
    expect(answer.text).toContain('<Hangup/>');
    await plivoPost(`/telephony/plivo/status/${run.id}`, { ...base, CallStatus: 'in-progress', Machine: 'true' });
    expect(await runOf(run.id)).toMatchObject({ status: 'completed', disposition: 'voicemail' });
    await plivoPost(`/telephony/plivo/status/${run.id}`, { ...base, CallStatus: 'completed', HangupCause: 'NORMAL_CLEARING', Duration: '3' });
    expect((await runOf(run.id)).disposition).toBe('voicemail');
  });

  it('answers an inbound call to a bound number with <Stream>, others with <Speak> + <Hangup/>; refuses forgeries', async () => {
    const inbound = `/telephony/plivo/inbound?auth_id=${fake.authId}`;
    const form = { CallUUID: 'in-0001', From: '15559876543', To: '15550001111', CallStatus: 'ringing', Direction: 'inbound' };
    const r = await plivoPost(inbound, form);
    expect(r.status).toBe(200);
    const m = new RegExp(`statusCallbackUrl="${PUBLIC.replace(/\./g, '\\.')}/api/v1/telephony/plivo/status/(\\d+)" statusCallbackMethod="POST">wss://cp\\.example\\.test/api/v1/telephony/plivo/media/(\\d+)\\?token=`).exec(r.text);
    expect(m).not.toBeNull();
    const runId = Number(m![1]);
    expect(Number(m![2])).toBe(runId);
    expect(await runOf(runId)).toMatchObject({ status: 'queued', initial_context: { caller_number: '+15559876543', called_number: BOUND } });
    // the stream's status callbacks move the inbound run
    const stream = { CallUUID: 'in-0001', StreamID: 's-1' };
    await plivoPost(`/telephony/plivo/status/${runId}`, { ...stream, Event: 'StartStream' });
    expect((await runOf(runId)).status).toBe('in_progress');
    await plivoPost(`/telephony/plivo/status/${runId}`, { ...stream, Event: 'StopStream', Duration: '31' });
    expect(await runOf(runId)).toMatchObject({ status: 'completed', disposition: 'completed', duration_seconds: 31 });

    const refused = await plivoPost(inbound, { ...form, CallUUID: 'in-0002', To: '15550002222' });
    expect(refused.status).toBe(200);
    expect(refused.text).toMatch(/<Response><Speak>[^<]+<\/Speak><Hangup\/><\/Response>$/);
    // the account comes from the signed URL: another account's id finds no number
    const otherAccount = await plivoPost('/telephony/plivo/inbound?auth_id=MAOTHER', { ...form, CallUUID: 'in-0003' });
    expect(otherAccount.text).toContain('<Hangup/>');
    const forged = await plivoPost(inbound, { ...form, CallUUID: 'in-0004' }, fake.signWebhook(`${PUBLIC}/api/v1${inbound}`, { ...form, CallUUID: 'in-9999' }));
    expect(forged.status).toBe(403);
  });
  it('streams the call audio over the media WebSocket in Plivo framing: start moves the run to in_progress, caller audio is recorded', async () => {
    const { run, requestUuid } = await placeOutbound('+15557654324', false);
    const call = fake.answer(requestUuid);
    const answer = await plivoPost(`/telephony/plivo/answer/${run.id}`, { CallUUID: call.callUuid, RequestUUID: requestUuid, Direction: 'outbound', CallStatus: 'in-progress' });
    const streamUrl = new URL(/<Stream[^>]*>([^<]+)<\/Stream>/.exec(answer.text)![1]!.replace(/&amp;/g, '&'));
    expect(streamUrl.pathname).toBe(`/api/v1/telephony/plivo/media/${run.id}`);
    const wsBase = svc.url.replace(/^http/, 'ws');

    // a forged token never gets a socket
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${wsBase}${streamUrl.pathname}?token=1.${'0'.repeat(64)}`);
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => { ws.close(); resolve(101); });
      ws.on('error', () => undefined);
    });
    expect(refused).toBeGreaterThanOrEqual(400);

    const ws = new WebSocket(`${wsBase}${streamUrl.pathname}${streamUrl.search}`);
    await new Promise<void>((resolve, reject) => { ws.once('open', () => resolve()); ws.once('error', reject); });
    const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
    const send = (m: unknown) => new Promise<void>((resolve) => ws.send(JSON.stringify(m), () => resolve()));
    await send({ event: 'start', sequenceNumber: 0, start: { callId: call.callUuid, streamId: 'st-1', accountId: fake.authId, tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 } } });
    for (let i = 0; i < 10; i++) await send({ event: 'media', sequenceNumber: i + 1, streamId: 'st-1', media: { track: 'inbound', timestamp: String(i * 20), chunk: i + 1, payload: randomBytes(160).toString('base64') } });
    await send({ event: 'stop', sequenceNumber: 11, streamId: 'st-1' });
    expect(await closed).toBe(1000);
    let after = await runOf(run.id);
    for (let i = 0; i < 50 && !after.recording_url; i++) {
      await new Promise((r) => setTimeout(r, 20));
      after = await runOf(run.id);
    }
    expect(after.status).toBe('in_progress');
    expect(after.recording_url).toEqual(expect.any(String));
    expect(after.annotations.media_stream).toMatchObject({ provider: 'plivo', stream_id: 'st-1', end_reason: 'stop', inbound_bytes: 1600, recorded_bytes: 1600 });
  });
});
