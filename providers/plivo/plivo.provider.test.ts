import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import type { PlaceCallRequest, WebhookRequest } from '../../core/ports/telephony-provider.port.js';
import { fakeProviderContext, runTelephonyProviderContract } from '../../test/contracts/telephony-provider.contract.js';
import { FakePlivoServer } from '../../test/fakes/plivo/fake-plivo-server.js';
import { computePlivoV3Signature, plivoV3SignedText, verifyPlivoV3Signature } from './plivo-signature.js';
import { PlivoClient } from './plivo.client.js';
import { PlivoProvider } from './plivo.provider.js';
import { mapPlivoCallStatus, outcomeOfHangupCause, PLIVO_CALL_STATUS } from './plivo.status-map.js';
import { createPlivoPlugin } from './index.js';

const PUBLIC = 'https://cp.example.org';
const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
/** Nothing listens there: instances built for parsing never reach the real Plivo API. */
const DEAD_API = 'http://127.0.0.1:9';
const AUTH_ID = 'MAODU2YJMXNZM5NGY4ZT';
const AUTH_TOKEN = 'plivo-auth-token-0123456789abcdef';

const fixture = (name: string) => (JSON.parse(readFileSync(join(fixturesDir, `${name}.json`), 'utf8')) as { request: { body: Record<string, string> } }).request.body;
const noSleep = { maxRetries: 3, sleep: async () => undefined };

let contractFake: FakePlivoServer | undefined;
runTelephonyProviderContract('plivo', () => ({
  plugin: createPlivoPlugin({ apiBaseUrl: contractFake?.url ?? DEAD_API, client: { maxRetries: 0, sleep: async () => undefined } }),
  fixturesDir,
  validConfig: { auth_id: AUTH_ID, auth_token: AUTH_TOKEN, application_id: '12345678901234567' },
  otherAccountConfig: { auth_id: 'SAOTHERACCOUNT000001', auth_token: 'another-token-abcdef0123' },
  placeCall: {
    async setup() {
      contractFake = await FakePlivoServer.start();
      return {
        config: { auth_id: contractFake.authId, auth_token: contractFake.authToken },
        teardown: async () => {
          await contractFake?.close();
          contractFake = undefined;
        },
      };
    },
    request: {
      attemptKey: 'attempt-42', organizationId: 1, runId: 42, to: '+15557654321', from: '+15550001111',
      statusCallbackUrl: `${PUBLIC}/api/v1/telephony/plivo/status/42`, answerUrl: `${PUBLIC}/api/v1/telephony/plivo/answer/42`,
      mediaUrl: 'wss://cp.example.org/api/v1/telephony/plivo/media/42', machineDetection: true, ringTimeoutSeconds: 30,
    },
    verify(placed, reported) {
      expect(reported).toEqual([]);
      const call = contractFake?.calls.get(placed.providerCallId);
      expect(call).toBeDefined();
      const sent = contractFake?.requests.find((r) => r.method === 'POST' && r.path.endsWith('/Call/'));
      expect(sent?.authorized).toBe(true);
      expect(sent?.path).toBe(`/v1/Account/${contractFake?.authId}/Call/`);
      expect(sent?.json).toEqual({
        from: '15550001111', to: '15557654321',
        answer_url: `${PUBLIC}/api/v1/telephony/plivo/answer/42`, answer_method: 'POST',
        hangup_url: `${PUBLIC}/api/v1/telephony/plivo/status/42`, hangup_method: 'POST',
        ring_url: `${PUBLIC}/api/v1/telephony/plivo/status/42`, ring_method: 'POST', ring_timeout: 30,
        machine_detection: 'hangup', machine_detection_url: `${PUBLIC}/api/v1/telephony/plivo/status/42`, machine_detection_method: 'POST',
      });
    },
  },
}));

describe('Plivo status map', () => {
  it('maps every CallStatus, busy/no-answer/timeout/cancel as completed calls with that outcome', () => {
    expect(Object.keys(PLIVO_CALL_STATUS).sort()).toEqual(
      ['answered', 'busy', 'cancel', 'canceled', 'completed', 'early-media', 'failed', 'in-progress', 'no-answer', 'queued', 'ringing', 'timeout'],
    );
    expect(mapPlivoCallStatus('ringing')).toEqual({ status: 'ringing' });
    expect(mapPlivoCallStatus('In-Progress')).toEqual({ status: 'in_progress' });
    expect(mapPlivoCallStatus('completed')).toEqual({ status: 'completed', outcome: 'completed' });
    expect(mapPlivoCallStatus('busy')).toEqual({ status: 'completed', outcome: 'busy' });
    expect(mapPlivoCallStatus('no-answer')).toEqual({ status: 'completed', outcome: 'no_answer' });
    expect(mapPlivoCallStatus('timeout')).toEqual({ status: 'completed', outcome: 'no_answer' });
    expect(mapPlivoCallStatus('cancel')).toEqual({ status: 'completed', outcome: 'canceled' });
    expect(mapPlivoCallStatus('failed')).toEqual({ status: 'failed', outcome: 'failed' });
    expect(mapPlivoCallStatus('teleported')).toBeNull();
    expect(mapPlivoCallStatus(undefined)).toBeNull();
    expect(outcomeOfHangupCause('Busy Line')).toBe('busy');
    expect(outcomeOfHangupCause('USER_BUSY')).toBe('busy');
    expect(outcomeOfHangupCause('Ring Timeout Reached')).toBe('no_answer');
    expect(outcomeOfHangupCause('Machine Detected')).toBe('voicemail');
    expect(outcomeOfHangupCause('NORMAL_CLEARING')).toBeUndefined();
  });
});

describe('Plivo V3 webhook signatures', () => {
  const url = `${PUBLIC}/api/v1/telephony/plivo/status/7`;
  const params = { CallUUID: 'abc', CallStatus: 'completed', Duration: '42' };

  it('signs base URL + sorted form params + nonce (and sorted query params with a dot before the form)', () => {
    expect(plivoV3SignedText('POST', url, params, 'n1')).toBe(`${url}?CallStatuscompletedCallUUIDabcDuration42.n1`);
    expect(plivoV3SignedText('POST', `${url}?b=2&a=1`, params, 'n1')).toBe(`${url}?a=1&b=2.CallStatuscompletedCallUUIDabcDuration42.n1`);
    expect(plivoV3SignedText('POST', url, {}, 'n1')).toBe(`${url}.n1`);
    expect(plivoV3SignedText('GET', `${url}?x=1`, params, 'n1')).toBe(`${url}?x=1.n1`);
    expect(plivoV3SignedText('POST', url, { k: ['b', 'a'] }, 'n')).toBe(`${url}?kakb.n`);
  });

  it('verifies signatures made by the fake (an independent signer), several comma-separated, and refuses tampering', async () => {
    const fake = await FakePlivoServer.start({ authToken: AUTH_TOKEN });
    try {
      const headers = fake.signWebhook(`${url}?auth_id=${AUTH_ID}`, params);
      const input = { authToken: AUTH_TOKEN, method: 'POST', url: `${url}?auth_id=${AUTH_ID}`, params, signature: headers['x-plivo-signature-v3'], nonce: headers['x-plivo-signature-v3-nonce'] };
      expect(verifyPlivoV3Signature(input)).toBe(true);
      expect(input.signature).toBe(computePlivoV3Signature(AUTH_TOKEN, 'POST', input.url, params, input.nonce!));
      expect(verifyPlivoV3Signature({ ...input, signature: `AAAA,${input.signature}` })).toBe(true);
      expect(verifyPlivoV3Signature({ ...input, params: { ...params, Duration: '43' } })).toBe(false);
      expect(verifyPlivoV3Signature({ ...input, url: `${url}?auth_id=SOMEONEELSE` })).toBe(false);
      expect(verifyPlivoV3Signature({ ...input, nonce: 'other' })).toBe(false);
      expect(verifyPlivoV3Signature({ ...input, authToken: 'wrong' })).toBe(false);
      expect(verifyPlivoV3Signature({ ...input, signature: undefined })).toBe(false);
      expect(verifyPlivoV3Signature({ ...input, nonce: undefined })).toBe(false);
      expect(verifyPlivoV3Signature({ ...input, url: 'not a url' })).toBe(false);
      const get = fake.signWebhook(`${url}?a=1`, {}, 'GET');
      expect(verifyPlivoV3Signature({ ...input, method: 'GET', url: `${url}?a=1`, params: {}, signature: get['x-plivo-signature-v3'], nonce: get['x-plivo-signature-v3-nonce'] })).toBe(true);
    } finally {
      await fake.close();
    }
  });

  it('the provider verifies the exact public URL, headers in any case', () => {
    const provider = createPlivoPlugin({ apiBaseUrl: DEAD_API }).create({ auth_id: AUTH_ID, auth_token: AUTH_TOKEN, configurationId: 1, organizationId: 1 }, fakeProviderContext());
    const nonce = '12345678901234567890';
    const signature = computePlivoV3Signature(AUTH_TOKEN, 'POST', url, params, nonce);
    const request: WebhookRequest = { publicUrl: url, method: 'POST', headers: { 'X-Plivo-Signature-V3': signature, 'X-Plivo-Signature-V3-Nonce': nonce }, body: params, query: {} };
    expect(provider.verifyWebhook(request)).toBe(true);
    expect(provider.verifyWebhook({ ...request, publicUrl: `${PUBLIC}/api/v1/telephony/plivo/status/8` })).toBe(false);
    expect(provider.verifyWebhook({ ...request, body: { ...params, CallStatus: 'busy' } })).toBe(false);
  });
});

describe('Plivo provider', () => {
  let fake: FakePlivoServer;
  let provider: PlivoProvider;
  const request = (over: Partial<PlaceCallRequest> = {}): PlaceCallRequest => ({
    attemptKey: 'a-1', organizationId: 1, runId: 7, to: '+15557654321', from: '+15550001111',
    statusCallbackUrl: `${PUBLIC}/api/v1/telephony/plivo/status/7`, answerUrl: `${PUBLIC}/api/v1/telephony/plivo/answer/7`,
    mediaUrl: 'wss://cp.example.org/api/v1/telephony/plivo/media/7', machineDetection: false, ringTimeoutSeconds: 1000, ...over,
  });
  const webhook = (body: Record<string, unknown>, runId = 7): WebhookRequest => ({ publicUrl: `${PUBLIC}/x`, method: 'POST', headers: {}, body, query: {}, runId });

  beforeAll(async () => {
    fake = await FakePlivoServer.start({ applications: { '111': { answerUrl: 'https://old.example.com/answer' } }, numbers: [{ number: '15550001111' }, { number: '15550002222', appId: '111' }] });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    provider = new PlivoProvider(new PlivoClient({ authId: fake.authId, authToken: fake.authToken, baseUrl: fake.url, ...noSleep }), {
      authId: fake.authId, authToken: fake.authToken, applicationId: '111',
    });
  });

  it('places a call without AMD, clamping the ring timeout; refuses a call without caller number', async () => {
    const placed = await provider.placeCall(request());
    expect(fake.calls.get(placed.providerCallId)?.request).toEqual({
      from: '15550001111', to: '15557654321', answer_url: `${PUBLIC}/api/v1/telephony/plivo/answer/7`, answer_method: 'POST',
      hangup_url: `${PUBLIC}/api/v1/telephony/plivo/status/7`, hangup_method: 'POST', ring_url: `${PUBLIC}/api/v1/telephony/plivo/status/7`, ring_method: 'POST', ring_timeout: 600,
    });
    await expect(provider.placeCall(request({ from: null }))).rejects.toBeInstanceOf(ProviderApiError);
  });

  it('retries 429 honouring Retry-After, then fails with provider_api_error carrying Plivo\'s error and no secret', async () => {
    const waits: number[] = [];
    const client = new PlivoClient({ authId: fake.authId, authToken: fake.authToken, baseUrl: fake.url, maxRetries: 2, sleep: async (ms) => { waits.push(ms); } });
    fake.rateLimitNext(2, 3);
    const ok = await client.createCall({ from: '+15550001111', to: '+15557654321', answerUrl: 'https://a', hangupUrl: 'https://h' });
    expect(ok.requestUuid).toEqual(expect.any(String));
    expect(waits).toEqual([3000, 3000]);
    fake.rateLimitNext(3);
    const limited = await client.createCall({ from: '1', to: '2', answerUrl: 'https://a', hangupUrl: 'https://h' }).catch((e: unknown) => e);
    expect(limited).toMatchObject({ provider: 'plivo', retryable: true, code: 'provider_api_error' });
    expect(waits.slice(2)).toEqual([500, 1000]);
    fake.failNext(1, 400, { to: [`invalid number ${fake.authToken}`] });
    const bad = (await client.createCall({ from: '1', to: '2', answerUrl: 'https://a', hangupUrl: 'https://h' }).catch((e: unknown) => e)) as ProviderApiError;
    expect(bad).toBeInstanceOf(ProviderApiError);
    expect(bad.retryable).toBe(false);
    expect(bad.detail).toContain('HTTP 400: to: invalid number ***');
    expect(bad.detail).not.toContain(fake.authToken);
    const wrong = new PlivoClient({ authId: fake.authId, authToken: 'wrong-token', baseUrl: fake.url, ...noSleep });
    const unauthorized = (await wrong.getNumber('+15550001111').catch((e: unknown) => e)) as ProviderApiError;
    expect(unauthorized.detail).toMatch(/HTTP 401/);
    const down = new PlivoClient({ authId: 'MA1', authToken: 't', baseUrl: DEAD_API, ...noSleep });
    await expect(down.getCall('x')).rejects.toMatchObject({ retryable: true });
  });

  it('hangs up: cancels a ringing request, hangs up an answered call by its CallUUID learned from callbacks, and ignores ended ones', async () => {
    const ringing = await provider.placeCall(request());
    await provider.hangup(ringing.providerCallId);
    expect(fake.calls.get(ringing.providerCallId)).toMatchObject({ state: 'ended', hangupCause: 'ORIGINATOR_CANCEL' });
    const answered = await provider.placeCall(request());
    const call = fake.answer(answered.providerCallId);
    provider.parseStatusCallback(webhook({ CallUUID: call.callUuid, RequestUUID: answered.providerCallId, CallStatus: 'in-progress', Machine: 'false' }));
    await provider.hangup(answered.providerCallId);
    expect(fake.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/v1/Account/${fake.authId}/Call/${call.callUuid}/`, status: 204 });
    expect(call.state).toBe('ended');
    await expect(provider.hangup(answered.providerCallId)).resolves.toBeUndefined();
    await expect(provider.hangup('unknown-uuid')).resolves.toBeUndefined();
  });

  it('reconciles: an ended call by its record, a live one as in progress, an unknown one as null', async () => {
    const placed = await provider.placeCall(request());
    const call = fake.answer(placed.providerCallId);
    expect(await provider.getCallStatus(call.callUuid)).toMatchObject({ status: 'in_progress', providerCallId: call.callUuid });
    fake.end(placed.providerCallId, 'NORMAL_CLEARING', 33);
    expect(await provider.getCallStatus(call.callUuid)).toEqual({
      kind: 'status', providerCallId: call.callUuid, status: 'completed', outcome: 'completed', durationSeconds: 33, detail: 'hangup_cause=NORMAL_CLEARING',
    });
    const busy = await provider.placeCall(request());
    const busyCall = fake.end(busy.providerCallId, 'USER_BUSY', 0);
    expect(await provider.getCallStatus(busyCall.callUuid)).toMatchObject({ status: 'completed', outcome: 'busy' });
    const failed = await provider.placeCall(request());
    const failedCall = fake.end(failed.providerCallId, 'UNALLOCATED_NUMBER', 0);
    expect(await provider.getCallStatus(failedCall.callUuid)).toMatchObject({ status: 'failed', outcome: 'failed' });
    expect(await provider.getCallStatus('nope')).toBeNull();
  });

  it('links a bound number to the application and points its answer URL at the inbound webhook with the account', async () => {
    const inboundUrl = `${PUBLIC}/api/v1/telephony/plivo/inbound`;
    const r = await provider.syncInboundWebhook({ address: '+1 555 000 1111', addressNormalized: '+15550001111', inboundUrl });
    expect(r.ok).toBe(true);
    expect(fake.applications.get('111')).toMatchObject({ answerUrl: `${inboundUrl}?auth_id=${fake.authId}`, answerMethod: 'POST' });
    expect(fake.numbers.get('15550001111')?.appId).toBe('111');
    const again = await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl });
    expect(again).toEqual({ ok: true, message: expect.stringContaining('is linked to application 111') });
    const writes = fake.requests.filter((q) => q.method === 'POST').length;
    expect((await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl: null })).ok).toBe(true);
    expect(fake.requests.filter((q) => q.method === 'POST').length).toBe(writes);
    expect(await provider.syncInboundWebhook({ address: '+15550009999', addressNormalized: '+15550009999', inboundUrl })).toMatchObject({ ok: false });
    expect(await provider.syncInboundWebhook({ address: 'sip:a@b', addressNormalized: 'sip:a@b', inboundUrl })).toMatchObject({ ok: false });
    const noApp = new PlivoProvider(new PlivoClient({ authId: fake.authId, authToken: fake.authToken, baseUrl: fake.url, ...noSleep }), { authId: fake.authId, authToken: fake.authToken, applicationId: null });
    expect(await noApp.syncInboundWebhook({ address: '+15550002222', addressNormalized: '+15550002222', inboundUrl })).toMatchObject({ ok: false, message: expect.stringContaining('application_id') });
    fake.failNext(1, 500, 'internal error');
    expect(await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl })).toMatchObject({ ok: false, message: expect.stringContaining('HTTP 500') });
  });

  it('answers the outbound answer URL with a bidirectional μ-law <Stream>, or <Hangup/> for a machine', () => {
    const media = 'wss://cp.example.org/api/v1/telephony/plivo/media/7?token=1700000000.ab&x=<1>';
    const human = provider.answerOutbound(webhook({ CallUUID: 'c', CallStatus: 'in-progress' }), { runId: 7, mediaUrl: media, statusCallbackUrl: `${PUBLIC}/s` });
    expect(human).toEqual({
      contentType: 'application/xml',
      body: '<?xml version="1.0" encoding="UTF-8"?><Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">' +
        'wss://cp.example.org/api/v1/telephony/plivo/media/7?token=1700000000.ab&amp;x=&lt;1&gt;</Stream></Response>',
    });
    expect(provider.answerOutbound(webhook({ CallUUID: 'c', Machine: 'true' }), { runId: 7, mediaUrl: media, statusCallbackUrl: `${PUBLIC}/s` }).body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>',
    );
  });

  it('answers inbound calls with a <Stream> whose status callback is the run, refuses with <Speak> and <Hangup/>', () => {
    const answer = provider.inboundAnswer({ runId: 12, providerCallId: 'c', mediaUrl: 'https://cp.example.org/api/v1/telephony/plivo/media/12?token=t', statusCallbackUrl: `${PUBLIC}/api/v1/telephony/plivo/status/12` });
    expect(answer.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000" ' +
        `statusCallbackUrl="${PUBLIC}/api/v1/telephony/plivo/status/12" statusCallbackMethod="POST">wss://cp.example.org/api/v1/telephony/plivo/media/12?token=t</Stream></Response>`,
    );
    const refusal = createPlivoPlugin().inboundReject!('workflow_archived');
    expect(refusal.contentType).toBe('application/xml');
    expect(refusal.body).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><Response><Speak>Sorry, [^<]+<\/Speak><Hangup\/><\/Response>$/);
  });

  it('reads the duration and cause of a hang-up callback, and the CallUUID as the provider call id', () => {
    expect(provider.parseStatusCallback(webhook(fixture('status-completed')))).toEqual({
      kind: 'status', runId: 7, providerCallId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d', callIds: ['7c8e1f0a-3b5d-4e2f-9a61-0d2c4b6e8f10'], status: 'completed', outcome: 'completed', durationSeconds: 42,
      detail: 'hangup_cause=NORMAL_CLEARING hangup_source=Callee',
    });
    expect(provider.parseStatusCallback(webhook(fixture('status-ringing')))).toMatchObject({ kind: 'status', runId: 7, providerCallId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d', status: 'ringing' });
    expect(provider.parseStatusCallback(webhook(fixture('status-busy')))).toMatchObject({ status: 'completed', outcome: 'busy', durationSeconds: 0, detail: 'hangup_cause=USER_BUSY hangup_source=Carrier' });
    expect(provider.parseStatusCallback(webhook(fixture('status-ringing')))).not.toHaveProperty('durationSeconds');
  });
});
