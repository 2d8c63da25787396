import { generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import { silentLogger } from '../../core/ports/logger.port.js';
import type { PlaceCallRequest, WebhookRequest } from '../../core/ports/telephony-provider.port.js';
import { FakeTelnyxServer } from '../../test/fakes/telnyx/fake-telnyx-server.js';
import { runTelephonyProviderContract } from '../../test/contracts/telephony-provider.contract.js';
import { createTelnyxPlugin } from './index.js';
import { telnyxPublicKey, verifyTelnyxSignature } from './telnyx-signature.js';
import { TelnyxClient } from './telnyx.client.js';
import { TelnyxProvider } from './telnyx.provider.js';
import { mapTelnyxAmd, mapTelnyxHangup, TELNYX_HANGUP_CAUSE } from './telnyx.status-map.js';

const PUBLIC = 'https://cp.example.org';
const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const CONNECTION = '1494404757140276705';
/** Nothing listens there: instances built for parsing never reach the real Telnyx API. */
const DEAD_API = 'http://127.0.0.1:9';

const fixture = (name: string) => (JSON.parse(readFileSync(join(fixturesDir, `${name}.json`), 'utf8')) as { request: { body: Record<string, unknown> } }).request.body;

function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = (publicKey.export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('base64');
  return { raw, privateKey };
}
const keys = keyPair();

let contractFake: FakeTelnyxServer | undefined;
runTelephonyProviderContract('telnyx', () => ({
  plugin: createTelnyxPlugin({ apiBaseUrl: contractFake?.url ?? DEAD_API, client: { maxRetries: 0, sleep: async () => undefined } }),
  fixturesDir,
  validConfig: { api_key: 'KEY0123456789ABCDEF_secretpart', connection_id: CONNECTION, webhook_public_key: keys.raw },
  otherAccountConfig: { api_key: 'KEYFEDCBA9876543210_other', connection_id: '2222222222222222222', webhook_public_key: keyPair().raw },
  publicFieldsThatLookSecret: { webhook_public_key: 'a public key: it only verifies signatures, Telnyx publishes it in the Portal' },
  placeCall: {
    async setup() {
      contractFake = await FakeTelnyxServer.start();
      return {
        config: { api_key: contractFake.apiKey, connection_id: contractFake.connectionId, webhook_public_key: contractFake.publicKeyBase64 },
        teardown: async () => {
          await contractFake?.close();
          contractFake = undefined;
        },
      };
    },
    request: {
      attemptKey: 'attempt-42', organizationId: 1, runId: 42, to: '+15557654321', from: '+15550001111',
      statusCallbackUrl: `${PUBLIC}/api/v1/telephony/telnyx/status/42`, answerUrl: `${PUBLIC}/api/v1/telephony/telnyx/answer/42`,
      mediaUrl: 'wss://cp.example.org/api/v1/telephony/telnyx/media/42', machineDetection: true, ringTimeoutSeconds: 30,
    },
    verify(placed, reported) {
      expect(reported).toEqual([]);
      expect(placed.providerCallId).toMatch(/^v3:/);
      const dial = contractFake?.requests.find((r) => r.path === '/v2/calls');
      expect(dial?.authorized).toBe(true);
      expect(dial?.json).toMatchObject({
        to: '+15557654321', from: '+15550001111', connection_id: contractFake?.connectionId,
        webhook_url: `${PUBLIC}/api/v1/telephony/telnyx/status/42`, stream_url: 'wss://cp.example.org/api/v1/telephony/telnyx/media/42',
        answering_machine_detection: 'detect', timeout_secs: 30,
      });
    },
  },
}));

describe('Telnyx status map', () => {
  it('maps hang-up causes to outcomes, busy/no-answer/canceled as completed calls', () => {
    expect(Object.keys(TELNYX_HANGUP_CAUSE).sort()).toEqual(
      ['call_rejected', 'no_answer', 'normal_clearing', 'not_found', 'originator_cancel', 'time_limit', 'timeout', 'unspecified', 'user_busy'],
    );
    expect(mapTelnyxHangup('normal_clearing')).toEqual({ status: 'completed', outcome: 'completed' });
    expect(mapTelnyxHangup('USER_BUSY')).toEqual({ status: 'completed', outcome: 'busy' });
    expect(mapTelnyxHangup('timeout')).toEqual({ status: 'completed', outcome: 'no_answer' });
    expect(mapTelnyxHangup('originator_cancel')).toEqual({ status: 'completed', outcome: 'canceled' });
    expect(mapTelnyxHangup('not_found')).toEqual({ status: 'failed', outcome: 'failed' });
    expect(mapTelnyxHangup('teleported')).toEqual({ status: 'failed', outcome: 'failed' });
    expect(mapTelnyxHangup(undefined)).toEqual({ status: 'failed', outcome: 'failed' });
    expect(mapTelnyxAmd('machine')).toBe('machine');
    expect(mapTelnyxAmd('human_business')).toBe('human');
    expect(mapTelnyxAmd('not_sure')).toBe('unknown');
    expect(mapTelnyxAmd(undefined)).toBe('unknown');
  });
});

describe('Telnyx Ed25519 webhook signatures', () => {
  const body = JSON.stringify(fixture('status-answered'));
  const now = 1_715_076_000;
  const signed = (ts: number, text = body, key = keys.privateKey) => sign(null, Buffer.from(`${ts}|${text}`), key).toString('base64');

  it('verifies timestamp|raw body with the raw base64 public key (wrapped as SPKI) within the tolerance', () => {
    const publicKey = telnyxPublicKey(keys.raw);
    expect(publicKey?.asymmetricKeyType).toBe('ed25519');
    const ok = { publicKey, rawBody: Buffer.from(body), signature: signed(now), timestamp: String(now), nowSeconds: now + 10 };
    expect(verifyTelnyxSignature(ok)).toBe(true);
    expect(verifyTelnyxSignature({ ...ok, rawBody: body })).toBe(true);
    // tampered body, other timestamp, other key, stale, missing parts
    expect(verifyTelnyxSignature({ ...ok, rawBody: Buffer.from(body.replace('answered', 'hangup')) })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, timestamp: String(now + 1) })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, signature: signed(now, body, keyPair().privateKey) })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, nowSeconds: now + 301 })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, nowSeconds: now - 301 })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, nowSeconds: now + 300 })).toBe(true);
    expect(verifyTelnyxSignature({ ...ok, nowSeconds: now - 300 })).toBe(true);
    // the 5-minute replay window can be narrowed, never widened
    expect(verifyTelnyxSignature({ ...ok, nowSeconds: now + 600, toleranceSeconds: 900 })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, nowSeconds: now + 61, toleranceSeconds: 60 })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, nowSeconds: now + 60, toleranceSeconds: 60 })).toBe(true);
    expect(verifyTelnyxSignature({ ...ok, signature: undefined })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, rawBody: undefined })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, timestamp: 'yesterday' })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, signature: 'AAAA' })).toBe(false);
    expect(verifyTelnyxSignature({ ...ok, publicKey: null })).toBe(false);
  });

  it('reads no key from garbage, and accepts an SPKI DER key too', () => {
    expect(telnyxPublicKey('not a key')).toBeNull();
    expect(telnyxPublicKey('')).toBeNull();
    const { publicKey } = generateKeyPairSync('ed25519');
    expect(telnyxPublicKey((publicKey.export({ format: 'der', type: 'spki' }) as Buffer).toString('base64'))).not.toBeNull();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'der', type: 'spki' }) as Buffer;
    expect(telnyxPublicKey(rsa.toString('base64'))).toBeNull();
  });
});

describe('TelnyxProvider (pure parts)', () => {
  const hangups: string[] = [];
  const api = { hangup: async (id: string) => { hangups.push(id); return 'ok' as const; } } as never;
  const now = 1_715_076_000;
  const provider = new TelnyxProvider(api, { connectionId: CONNECTION, webhookPublicKey: keys.raw, publicUrl: PUBLIC, log: silentLogger, nowSeconds: () => now });
  const webhook = (body: unknown, extra: Partial<WebhookRequest> = {}): WebhookRequest =>
    ({ publicUrl: `${PUBLIC}/api/v1/telephony/telnyx/status/7`, method: 'POST', headers: {}, body, query: {}, runId: 7, ...extra }) as WebhookRequest;

  it('normalizes the recorded events, with the time they occurred', () => {
    expect(provider.parseStatusCallback(webhook(fixture('status-answered')))).toEqual({
      kind: 'status', runId: 7, providerCallId: 'v3:u5OAKGEPT3Dx8SZSSDRWEMdNH2OripQhO', status: 'in_progress', at: new Date('2024-05-07T10:00:11.000Z'),
    });
    expect(provider.parseStatusCallback(webhook(fixture('status-hangup-busy')))).toMatchObject({ status: 'completed', outcome: 'busy', detail: 'hangup_cause=user_busy hangup_source=callee sip=486' });
  });

  it('hangs up a call a machine answered, once, and reports it as voicemail', async () => {
    hangups.length = 0;
    const body = fixture('status-machine');
    expect(provider.parseStatusCallback(webhook(body))).toMatchObject({ status: 'completed', outcome: 'voicemail', amd: { verdict: 'machine', source: 'carrier' } });
    provider.parseStatusCallback(webhook(body)); // a retried webhook
    await new Promise((r) => setImmediate(r));
    expect(hangups).toEqual(['v3:u5OAKGEPT3Dx8SZSSDRWEMdNH2OripQhO']);
    provider.parseStatusCallback(webhook(fixture('status-human')));
    await new Promise((r) => setImmediate(r));
    expect(hangups).toHaveLength(1);
  });

  it('carries the AMD verdict and the greeting\'s end for the live session', () => {
    expect(provider.parseStatusCallback(webhook(fixture('status-human')))).toMatchObject({ status: 'in_progress', amd: { verdict: 'human', source: 'carrier' } });
    const machine = fixture('status-machine') as { data: { payload: Record<string, unknown> } };
    const ended = (type: string, result: string) => provider.parseStatusCallback(webhook({ data: { ...machine.data, event_type: type, payload: { ...machine.data.payload, result } } }));
    expect(ended('call.machine.greeting.ended', 'beep_detected')).toMatchObject({ kind: 'status', status: 'in_progress', amd: { verdict: 'machine', greetingEnded: { beep: true } } });
    expect(ended('call.machine.premium.greeting.ended', 'ended')).toMatchObject({ amd: { verdict: 'machine', greetingEnded: { beep: false } } });
  });

  it('verifies the headers against the raw body it was given', () => {
    const body = JSON.stringify(fixture('status-hangup-completed'));
    const sig = sign(null, Buffer.from(`${now}|${body}`), keys.privateKey).toString('base64');
    const headers = { 'telnyx-signature-ed25519': sig, 'telnyx-timestamp': String(now) };
    expect(provider.verifyWebhook(webhook(JSON.parse(body), { headers, rawBody: Buffer.from(body) }))).toBe(true);
    expect(provider.verifyWebhook(webhook(JSON.parse(body), { headers: { 'Telnyx-Signature-Ed25519': sig, 'Telnyx-Timestamp': String(now) }, rawBody: Buffer.from(body) }))).toBe(true);
    // a parsed body alone is not enough: the signature covers the exact bytes
    expect(provider.verifyWebhook(webhook(JSON.parse(body), { headers }))).toBe(false);
    expect(provider.verifyWebhook(webhook(JSON.parse(body), { headers, rawBody: Buffer.from(`${body} `) }))).toBe(false);
    const other = new TelnyxProvider(api, { connectionId: CONNECTION, webhookPublicKey: keyPair().raw, publicUrl: PUBLIC, log: silentLogger, nowSeconds: () => now });
    expect(other.verifyWebhook(webhook(JSON.parse(body), { headers, rawBody: Buffer.from(body) }))).toBe(false);
    const unreadableKey = new TelnyxProvider(api, { connectionId: CONNECTION, webhookPublicKey: 'garbage', publicUrl: PUBLIC, log: silentLogger });
    expect(unreadableKey.verifyWebhook(webhook(JSON.parse(body), { headers, rawBody: Buffer.from(body) }))).toBe(false);
  });

  it('parses only incoming call.initiated as an inbound call', () => {
    expect(provider.parseInboundCall(webhook(fixture('inbound-call')))).toEqual({
      providerCallId: 'v3:inbound0000000000000000000001', from: '+15559876543', to: '+15550001111', accountId: CONNECTION,
    });
    expect(provider.parseInboundCall(webhook(fixture('status-initiated')))).toEqual({ ignored: 'not an incoming call (direction outgoing)' });
    expect(provider.parseInboundCall(webhook({ data: { event_type: 'call.initiated', payload: { direction: 'incoming', to: '+1555' } } }))).toEqual({ ignored: 'no call_control_id in the webhook' });
    expect(provider.parseInboundCall(webhook('x'))).toEqual({ ignored: 'not a Telnyx Call Control webhook' });
  });
});

describe('TelnyxProvider against the fake Telnyx API', () => {
  let fake: FakeTelnyxServer;
  let provider: TelnyxProvider;
  const inboundUrl = `${PUBLIC}/api/v1/telephony/telnyx/inbound`;

  beforeAll(async () => {
    fake = await FakeTelnyxServer.start({ numbers: [{ phoneNumber: '+15550001111' }, { phoneNumber: '+15550002222', connectionId: 'someone-else' }] });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    const client = new TelnyxClient({ apiKey: fake.apiKey, baseUrl: fake.url, sleep: async () => undefined });
    provider = new TelnyxProvider(client, { connectionId: fake.connectionId, webhookPublicKey: fake.publicKeyBase64, publicUrl: PUBLIC, log: silentLogger });
  });

  const request: PlaceCallRequest = {
    attemptKey: 'attempt-1', organizationId: 1, runId: 7, to: '+15557654321', from: '+15550001111',
    statusCallbackUrl: `${PUBLIC}/api/v1/telephony/telnyx/status/7`, answerUrl: `${PUBLIC}/api/v1/telephony/telnyx/answer/7`,
    mediaUrl: `${PUBLIC}/api/v1/telephony/telnyx/media/7`, machineDetection: false, ringTimeoutSeconds: 2,
  };

  it('dials with the webhook URL, a wss stream URL, the run in client_state and a bounded ring timeout', async () => {
    const placed = await provider.placeCall(request);
    expect(placed.alreadyPlaced).toBe(false);
    const dial = fake.requests.find((r) => r.path === '/v2/calls')!;
    expect(dial.json).toMatchObject({ webhook_url: request.statusCallbackUrl, webhook_url_method: 'POST', stream_url: 'wss://cp.example.org/api/v1/telephony/telnyx/media/7', stream_track: 'both_tracks', stream_bidirectional_mode: 'rtp', stream_bidirectional_codec: 'PCMU', timeout_secs: 5 });
    expect(dial.json).not.toHaveProperty('answering_machine_detection');
    expect(JSON.parse(Buffer.from(String(dial.json?.client_state), 'base64').toString('utf8'))).toEqual({ run_id: 7 });
    expect(fake.calls.get(placed.providerCallId)?.isAlive).toBe(true);
  });

  it('refuses a call without a caller number; Telnyx errors become ProviderApiError without the key', async () => {
    await expect(provider.placeCall({ ...request, from: null })).rejects.toBeInstanceOf(ProviderApiError);
    fake.failNext(1, 422, '10016', 'Invalid phone number', `The 'to' number is not valid (key ${fake.apiKey})`);
    const err = (await provider.placeCall(request).catch((e: unknown) => e)) as ProviderApiError;
    expect(err).toBeInstanceOf(ProviderApiError);
    expect(err.detail).toContain('HTTP 422, error 10016: Invalid phone number');
    expect(err.detail).not.toContain(fake.apiKey);
    expect(err.retryable).toBe(false);
    fake.failNext(1, 503, '10007', 'Unexpected error', 'try later');
    expect(((await provider.placeCall(request).catch((e: unknown) => e)) as ProviderApiError).retryable).toBe(true);
    const wrongKey = new TelnyxProvider(new TelnyxClient({ apiKey: 'KEYwrong', baseUrl: fake.url }), { connectionId: fake.connectionId, webhookPublicKey: fake.publicKeyBase64, publicUrl: PUBLIC, log: silentLogger });
    await expect(wrongKey.placeCall(request)).rejects.toMatchObject({ detail: expect.stringContaining('HTTP 401') });
  });

  it('retries 429 with Retry-After, then gives up as a retryable error', async () => {
    const waits: number[] = [];
    const client = new TelnyxClient({ apiKey: fake.apiKey, baseUrl: fake.url, maxRetries: 2, sleep: async (ms) => { waits.push(ms); } });
    const p = new TelnyxProvider(client, { connectionId: fake.connectionId, webhookPublicKey: fake.publicKeyBase64, publicUrl: PUBLIC, log: silentLogger });
    fake.rateLimitNext(2, 3);
    await expect(p.placeCall(request)).resolves.toMatchObject({ alreadyPlaced: false });
    expect(waits).toEqual([3000, 3000]);
    expect(fake.requests.filter((r) => r.path === '/v2/calls').map((r) => r.status)).toEqual([429, 429, 200]);
    waits.length = 0;
    fake.rateLimitNext(3);
    const err = (await p.placeCall(request).catch((e: unknown) => e)) as ProviderApiError;
    expect(err.retryable).toBe(true);
    expect(err.detail).toContain('HTTP 429');
    expect(waits).toEqual([500, 1000]);
  });

  it('hangs up idempotently and reads live state for reconciliation', async () => {
    const { providerCallId } = await provider.placeCall(request);
    expect(await provider.getCallStatus(providerCallId)).toMatchObject({ kind: 'status', status: 'in_progress' });
    await provider.hangup(providerCallId);
    expect(fake.calls.get(providerCallId)?.isAlive).toBe(false);
    await expect(provider.hangup(providerCallId)).resolves.toBeUndefined();
    await expect(provider.hangup('v3:unknown')).resolves.toBeUndefined();
    expect(await provider.getCallStatus(providerCallId)).toMatchObject({ status: 'failed', outcome: 'failed' });
    expect(await provider.getCallStatus('v3:unknown')).toBeNull();
  });

  it('answers an inbound call through the API with the stream and the run status URL', async () => {
    const { providerCallId } = await provider.placeCall(request); // any live call the fake knows
    const markup = provider.inboundAnswer({ runId: 9, providerCallId, mediaUrl: 'wss://cp.example.org/api/v1/telephony/telnyx/media/9', statusCallbackUrl: `${PUBLIC}/api/v1/telephony/telnyx/status/9` });
    expect(markup).toEqual({ contentType: 'application/json', body: '{"received":true,"run_id":9}' });
    for (let i = 0; i < 50 && !fake.calls.get(providerCallId)?.answered; i++) await new Promise((r) => setTimeout(r, 10));
    expect(fake.calls.get(providerCallId)?.answerRequest).toMatchObject({
      stream_url: 'wss://cp.example.org/api/v1/telephony/telnyx/media/9', webhook_url: `${PUBLIC}/api/v1/telephony/telnyx/status/9`, command_id: 'answer-9',
    });
  });

  it('syncs a number: moves it to the application, sets an empty webhook URL, reports a foreign one, never throws', async () => {
    const num = () => [...fake.numbers.values()].find((n) => n.phoneNumber === '+15550001111')!;
    expect(await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl })).toEqual({
      ok: true, message: `Assigned +15550001111 to Call Control application ${fake.connectionId}; set its webhook URL to ${inboundUrl}`,
    });
    expect(num().connectionId).toBe(fake.connectionId);
    expect(fake.application.webhookEventUrl).toBe(inboundUrl);
    const patches = () => fake.requests.filter((r) => r.method === 'PATCH').length;
    const before = patches();
    expect((await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl })).ok).toBe(true);
    expect(patches()).toBe(before);
    fake.application.webhookEventUrl = 'https://elsewhere.example.com/hooks';
    const foreign = await provider.syncInboundWebhook({ address: '+15550002222', addressNormalized: '+15550002222', inboundUrl });
    expect(foreign.ok).toBe(false);
    expect(foreign.message).toContain('https://elsewhere.example.com/hooks');
    expect(fake.application.webhookEventUrl).toBe('https://elsewhere.example.com/hooks');
    fake.application.webhookEventUrl = inboundUrl;
    expect((await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl: null })).ok).toBe(true);
    expect(num().connectionId).toBe(fake.connectionId);
    expect(await provider.syncInboundWebhook({ address: '+15559999999', addressNormalized: '+15559999999', inboundUrl })).toMatchObject({ ok: false });
    expect(await provider.syncInboundWebhook({ address: '100', addressNormalized: '100', inboundUrl })).toMatchObject({ ok: false });
    fake.failNext(1, 500, '10007', 'Unexpected error', 'boom');
    const failed = await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl });
    expect(failed).toMatchObject({ ok: false, message: expect.stringContaining('HTTP 500') });
  });
});
