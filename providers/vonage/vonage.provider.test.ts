import { createHash, createHmac, generateKeyPairSync, randomUUID, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import type { PlaceCallRequest, WebhookRequest } from '../../core/ports/telephony-provider.port.js';
import { FakeVonageServer } from '../../test/fakes/vonage/fake-vonage-server.js';
import { runTelephonyProviderContract } from '../../test/contracts/telephony-provider.contract.js';
import { createVonagePlugin } from './index.js';
import { decodeJwtClaims, verifyHs256Jwt, verifyVonageWebhook, vonageApplicationJwt } from './vonage-jwt.js';
import { VonageClient } from './vonage.client.js';
import { VonageProvider } from './vonage.provider.js';
import { mapVonageStatus, VONAGE_CALL_STATUS } from './vonage.status-map.js';

const PUBLIC = 'https://cp.example.org';
const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string) => (JSON.parse(readFileSync(join(fixturesDir, `${name}.json`), 'utf8')) as { request: { body: Record<string, unknown> } }).request.body;
const pem = (generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
const APP = 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab';
const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** An HS256 webhook JWT as Vonage signs it. */
function webhookJwt(secret: string, claims: Record<string, unknown>): string {
  const h = b64url({ alg: 'HS256', typ: 'JWT' });
  const p = b64url(claims);
  return `${h}.${p}.${createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url')}`;
}

let contractFake: FakeVonageServer | undefined;
runTelephonyProviderContract('vonage', () => ({
  plugin: createVonagePlugin({ apiBaseUrl: contractFake?.url ?? 'http://127.0.0.1:9', client: { maxRetries: 0 } }),
  fixturesDir,
  validConfig: { application_id: APP, api_key: 'a1b2c3d4', api_secret: 'secret0123456789', private_key: pem, signature_secret: 'sigsecret0123456789abcdef' },
  otherAccountConfig: { application_id: randomUUID(), api_key: 'f9e8d7c6', api_secret: 'othersecret', private_key: pem, signature_secret: 'othersig0123456789' },
  publicFieldsThatLookSecret: { api_key: "Vonage's API key is the public account identifier (shown in the Dashboard, carried in every signed webhook); its secret is api_secret" },
  placeCall: {
    async setup() {
      contractFake = await FakeVonageServer.start();
      const f = contractFake;
      return {
        config: { application_id: f.applicationId, api_key: f.apiKey, api_secret: f.apiSecret, private_key: f.privateKeyPem, signature_secret: f.signatureSecret },
        teardown: async () => {
          await contractFake?.close();
          contractFake = undefined;
        },
      };
    },
    request: {
      attemptKey: 'attempt-42', organizationId: 1, runId: 42, to: '+15557654321', from: '+15550001111',
      statusCallbackUrl: `${PUBLIC}/api/v1/telephony/vonage/status/42`, answerUrl: `${PUBLIC}/api/v1/telephony/vonage/answer/42`,
      mediaUrl: 'wss://cp.example.org/api/v1/telephony/vonage/media/42', machineDetection: true, ringTimeoutSeconds: 30,
    },
    verify(placed, reported) {
      expect(reported).toEqual([]);
      const create = contractFake?.requests.find((r) => r.path === '/v1/calls');
      expect(create?.authorized).toBe(true);
      expect(create?.json).toMatchObject({
        to: [{ type: 'phone', number: '15557654321' }], from: { type: 'phone', number: '15550001111' },
        event_url: [`${PUBLIC}/api/v1/telephony/vonage/status/42`], event_method: 'POST', machine_detection: 'hangup', ringing_timer: 30,
        ncco: [{ action: 'connect', endpoint: [{ type: 'websocket', uri: 'wss://cp.example.org/api/v1/telephony/vonage/media/42', 'content-type': 'audio/l16;rate=16000', headers: { run_id: '42' } }] }],
      });
      expect(contractFake?.calls.has(placed.providerCallId)).toBe(true);
    },
  },
}));

describe('Vonage status map', () => {
  it('maps every event status; busy/rejected/timeout/unanswered/cancelled are completed calls with that outcome', () => {
    expect(Object.keys(VONAGE_CALL_STATUS).sort()).toEqual(
      ['answered', 'busy', 'cancelled', 'completed', 'failed', 'human', 'machine', 'rejected', 'ringing', 'started', 'timeout', 'unanswered'],
    );
    expect(mapVonageStatus('started')).toEqual({ status: 'queued' });
    expect(mapVonageStatus('Answered')).toEqual({ status: 'in_progress' });
    expect(mapVonageStatus('machine')).toEqual({ status: 'completed', outcome: 'voicemail' });
    expect(mapVonageStatus('unanswered')).toEqual({ status: 'completed', outcome: 'no_answer' });
    expect(mapVonageStatus('cancelled')).toEqual({ status: 'completed', outcome: 'canceled' });
    expect(mapVonageStatus('failed')).toEqual({ status: 'failed', outcome: 'failed' });
    expect(mapVonageStatus('disconnected')).toBeUndefined();
  });
});

describe('Vonage JWTs', () => {
  it('signs the application JWT with RS256 and the documented claims', () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const token = vonageApplicationJwt({ applicationId: APP, privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, nowSeconds: 1_700_000_000 });
    const [h, p, s] = token.split('.');
    expect(JSON.parse(Buffer.from(h!, 'base64url').toString())).toEqual({ alg: 'RS256', typ: 'JWT' });
    expect(decodeJwtClaims(token)).toEqual({ application_id: APP, iat: 1_700_000_000, exp: 1_700_000_900, jti: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(verify('sha256', Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s!, 'base64url'))).toBe(true);
    expect(() => vonageApplicationJwt({ applicationId: APP, privateKeyPem: 'not a key', nowSeconds: 1 })).toThrow();
  });

  it('verifies the HS256 webhook JWT: secret, account, application, expiry and the body hash', () => {
    const secret = 'sig-secret-0123456789';
    const body = Buffer.from(JSON.stringify(fixture('status-completed')));
    const now = 1_715_076_000;
    const claims = { iat: now, jti: randomUUID(), iss: 'Vonage', api_key: 'a1b2c3d4', application_id: APP, payload_hash: createHash('sha256').update(body).digest('hex') };
    const check = (authorization: string | undefined, extra: Partial<Parameters<typeof verifyVonageWebhook>[0]> = {}) =>
      verifyVonageWebhook({ authorization, signatureSecret: secret, apiKey: 'a1b2c3d4', applicationId: APP, rawBody: body, nowSeconds: now + 5, ...extra });
    const good = `Bearer ${webhookJwt(secret, claims)}`;
    expect(check(good)).toBe(true);
    expect(verifyHs256Jwt(webhookJwt(secret, claims), secret)).toMatchObject({ api_key: 'a1b2c3d4' });
    expect(check(`Bearer ${webhookJwt('other-secret', claims)}`)).toBe(false);
    expect(check(good, { rawBody: Buffer.from(`${body.toString()} `) })).toBe(false);
    expect(check(`Bearer ${webhookJwt(secret, { ...claims, api_key: 'someone' })}`)).toBe(false);
    expect(check(`Bearer ${webhookJwt(secret, { ...claims, application_id: 'other-app' })}`)).toBe(false);
    expect(check(`Bearer ${webhookJwt(secret, { ...claims, exp: now - 3600 })}`)).toBe(false);
    expect(check(`Bearer ${webhookJwt(secret, { ...claims, iat: now + 3600 })}`)).toBe(false);
    expect(check(`Bearer ${webhookJwt(secret, { ...claims, payload_hash: undefined })}`)).toBe(false);
    expect(check(`Bearer ${webhookJwt(secret, { ...claims, payload_hash: undefined })}`, { rawBody: Buffer.alloc(0) })).toBe(true);
    // alg confusion and malformed tokens
    const none = `${b64url({ alg: 'none' })}.${b64url(claims)}.`;
    expect(check(`Bearer ${none}`)).toBe(false);
    for (const bad of [undefined, '', 'Bearer', 'Basic abc', 'Bearer a.b', 'Bearer x.y.z']) expect(check(bad)).toBe(false);
  });

  it('refuses a webhook JWT older than 5 minutes, from more than 5 minutes ahead, or without iat, whatever its exp says', () => {
    const secret = 'sig-secret-0123456789';
    const body = Buffer.from(JSON.stringify(fixture('status-completed')));
    const now = 1_715_076_000;
    const claims = { jti: randomUUID(), iss: 'Vonage', api_key: 'a1b2c3d4', application_id: APP, payload_hash: createHash('sha256').update(body).digest('hex') };
    const at = (c: Record<string, unknown>, nowSeconds = now) =>
      verifyVonageWebhook({ authorization: `Bearer ${webhookJwt(secret, c)}`, signatureSecret: secret, apiKey: 'a1b2c3d4', applicationId: APP, rawBody: body, nowSeconds });
    // the replay the attack sweep found: a year-old token without exp
    expect(at({ ...claims, iat: now - 365 * 86_400 })).toBe(false);
    expect(at({ ...claims, iat: now - 365 * 86_400, exp: now + 3600 })).toBe(false);
    expect(at(claims)).toBe(false);
    expect(at({ ...claims, iat: String(now) })).toBe(false);
    expect(at({ ...claims, iat: now - 300 })).toBe(true);
    expect(at({ ...claims, iat: now - 301 })).toBe(false);
    expect(at({ ...claims, iat: now + 300 })).toBe(true);
    expect(at({ ...claims, iat: now + 301 })).toBe(false);
  });
});

describe('VonageProvider (pure parts)', () => {
  const provider = new VonageProvider({} as never, { applicationId: APP, apiKey: 'a1b2c3d4', signatureSecret: 'sig', publicUrl: PUBLIC });
  const webhook = (body: unknown, extra: Partial<WebhookRequest> = {}): WebhookRequest =>
    ({ publicUrl: `${PUBLIC}/api/v1/telephony/vonage/status/7`, method: 'POST', headers: {}, body, query: {}, runId: 7, ...extra }) as WebhookRequest;

  it('normalizes recorded events with their time and duration', () => {
    expect(provider.parseStatusCallback(webhook(fixture('status-completed')))).toEqual({
      kind: 'status', runId: 7, providerCallId: '63f61863-4a51-4f6b-86e1-46edebcf9356', callIds: ['CON-f972836a-550f-45fa-956c-12a2ab5b7d22'], status: 'completed', outcome: 'completed', durationSeconds: 42, at: new Date('2024-05-07T10:00:05.000Z'),
    });
    expect(provider.parseStatusCallback(webhook({ ...fixture('status-completed'), duration: 42 }))).toMatchObject({ durationSeconds: 42 });
    expect(provider.parseStatusCallback(webhook(fixture('status-answered')))).not.toHaveProperty('durationSeconds');
    expect(provider.parseStatusCallback(webhook({ status: ['answered'] }))).toMatchObject({ kind: 'ignored' });
  });

  it('reads the inbound account from the JWT and gives numbers back their +', () => {
    const body = fixture('inbound-call');
    const token = webhookJwt('whatever', { api_key: 'f00dcafe' });
    expect(provider.parseInboundCall(webhook(body, { headers: { authorization: `Bearer ${token}` } }))).toMatchObject({ to: '+15550001111', from: '+15559876543', accountId: 'f00dcafe' });
    expect(provider.parseInboundCall(webhook(body))).toMatchObject({ accountId: null });
    // the run's call id is the conversation the media leg's events share (its uuid when there is none)
    expect(provider.parseInboundCall(webhook(body))).toMatchObject({ providerCallId: (body as { conversation_uuid: string }).conversation_uuid });
    expect(provider.parseInboundCall(webhook({ ...(body as object), conversation_uuid: undefined }))).toMatchObject({ providerCallId: (body as { uuid: string }).uuid });
    expect(provider.parseInboundCall(webhook({ ...body, to: 'sip:agent@example.com' }))).toMatchObject({ to: 'sip:agent@example.com' });
    expect(provider.parseInboundCall(webhook({ to: '15550001111' }))).toEqual({ ignored: 'no uuid in the answer webhook' });
  });

  it('answers with a connect NCCO to the media WebSocket and the run status URL; refuses with a talk', () => {
    const answer = provider.inboundAnswer({ runId: 12, mediaUrl: `${PUBLIC}/api/v1/telephony/vonage/media/12`, statusCallbackUrl: `${PUBLIC}/api/v1/telephony/vonage/status/12` });
    expect(answer.contentType).toBe('application/json');
    expect(JSON.parse(answer.body)).toEqual([{
      action: 'connect', eventUrl: [`${PUBLIC}/api/v1/telephony/vonage/status/12`], eventMethod: 'POST',
      endpoint: [{ type: 'websocket', uri: 'wss://cp.example.org/api/v1/telephony/vonage/media/12', 'content-type': 'audio/l16;rate=16000', headers: { run_id: '12' } }],
    }]);
    const reject = createVonagePlugin().inboundReject!('workflow_archived');
    expect(JSON.parse(reject.body)).toEqual([{ action: 'talk', text: expect.stringMatching(/^Sorry/) }]);
  });
});

describe('VonageProvider against the fake Vonage API', () => {
  let fake: FakeVonageServer;
  let provider: VonageProvider;
  const inboundUrl = `${PUBLIC}/api/v1/telephony/vonage/inbound`;
  const client = (extra: Partial<ConstructorParameters<typeof VonageClient>[0]> = {}) =>
    new VonageClient({ applicationId: fake.applicationId, apiKey: fake.apiKey, apiSecret: fake.apiSecret, privateKey: fake.privateKeyPem, apiBaseUrl: fake.url, restBaseUrl: fake.url, sleep: async () => undefined, ...extra });

  beforeAll(async () => {
    fake = await FakeVonageServer.start({ numbers: [{ msisdn: '15550001111' }, { msisdn: '15550002222', appId: 'another-app' }], answerUrl: inboundUrl, answerMethod: 'POST' });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    provider = new VonageProvider(client(), { applicationId: fake.applicationId, apiKey: fake.apiKey, signatureSecret: fake.signatureSecret, publicUrl: PUBLIC });
  });

  const request: PlaceCallRequest = {
    attemptKey: 'attempt-1', organizationId: 1, runId: 7, to: '+1 555 765 4321', from: '+15550001111',
    statusCallbackUrl: `${PUBLIC}/api/v1/telephony/vonage/status/7`, answerUrl: `${PUBLIC}/api/v1/telephony/vonage/answer/7`,
    mediaUrl: `${PUBLIC}/api/v1/telephony/vonage/media/7`, machineDetection: false, ringTimeoutSeconds: 600,
  };

  it('creates the call with the JWT, digits-only numbers, no AMD unless asked and a bounded ringing timer', async () => {
    const placed = await provider.placeCall(request);
    const create = fake.requests.find((r) => r.path === '/v1/calls')!;
    expect(create.authorized).toBe(true);
    expect(create.json).toMatchObject({ to: [{ type: 'phone', number: '15557654321' }], ringing_timer: 120 });
    expect(create.json).not.toHaveProperty('machine_detection');
    expect(placed).toEqual({ providerCallId: expect.stringMatching(/^[0-9a-f-]{36}$/), alreadyPlaced: false });
    await expect(provider.placeCall({ ...request, to: 'sip:someone@example.com' })).rejects.toBeInstanceOf(ProviderApiError);
    await expect(provider.placeCall({ ...request, from: null })).rejects.toBeInstanceOf(ProviderApiError);
  });

  it('surfaces refusals as ProviderApiError without secrets, and an unreadable key as such', async () => {
    fake.failNext(1, 400, 'Bad Request', `Invalid number (secret ${fake.apiSecret})`);
    const err = (await provider.placeCall(request).catch((e: unknown) => e)) as ProviderApiError;
    expect(err).toBeInstanceOf(ProviderApiError);
    expect(err.detail).toContain('HTTP 400: Bad Request');
    expect(err.detail).not.toContain(fake.apiSecret);
    expect(err.retryable).toBe(false);
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const wrong = new VonageProvider(client({ privateKey: otherKey }), { applicationId: fake.applicationId, apiKey: fake.apiKey, signatureSecret: 's', publicUrl: PUBLIC });
    await expect(wrong.placeCall(request)).rejects.toMatchObject({ detail: expect.stringContaining('HTTP 401') });
    const garbage = new VonageProvider(client({ privateKey: 'garbage' }), { applicationId: fake.applicationId, apiKey: fake.apiKey, signatureSecret: 's', publicUrl: PUBLIC });
    await expect(garbage.placeCall(request)).rejects.toMatchObject({ detail: 'The Vonage private key is not a readable PEM private key' });
  });

  it('retries 429 with Retry-After inside the client', async () => {
    const waits: number[] = [];
    const p = new VonageProvider(client({ maxRetries: 2, sleep: async (ms) => { waits.push(ms); } }), { applicationId: fake.applicationId, apiKey: fake.apiKey, signatureSecret: 's', publicUrl: PUBLIC });
    fake.rateLimitNext(2, 1);
    await expect(p.placeCall(request)).resolves.toMatchObject({ alreadyPlaced: false });
    expect(waits).toEqual([1000, 1000]);
    expect(fake.requests.filter((r) => r.path === '/v1/calls').map((r) => r.status)).toEqual([429, 429, 201]);
    fake.rateLimitNext(3);
    await expect(p.placeCall(request)).rejects.toMatchObject({ retryable: true });
  });

  it('reads the call for reconciliation and hangs up idempotently', async () => {
    const { providerCallId } = await provider.placeCall(request);
    expect(await provider.getCallStatus(providerCallId)).toEqual({ kind: 'status', providerCallId, status: 'queued' });
    fake.setCallStatus(providerCallId, 'answered');
    await provider.hangup(providerCallId);
    expect(fake.calls.get(providerCallId)?.status).toBe('completed');
    fake.setCallStatus(providerCallId, 'completed', 31);
    expect(await provider.getCallStatus(providerCallId)).toEqual({ kind: 'status', providerCallId, status: 'completed', outcome: 'completed', durationSeconds: 31 });
    await expect(provider.hangup(providerCallId)).resolves.toBeUndefined();
    await expect(provider.hangup(randomUUID())).resolves.toBeUndefined();
    expect(await provider.getCallStatus(randomUUID())).toBeNull();
  });

  it('links a number to the application, checks the answer URL and signed callbacks, never throws', async () => {
    expect(await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl })).toEqual({
      ok: true, message: `Linked +15550001111 to application ${fake.applicationId}; its answer URL is ${inboundUrl}`,
    });
    expect(fake.numbers.get('15550001111')?.appId).toBe(fake.applicationId);
    const update = fake.requests.find((r) => r.path === '/number/update')!;
    expect(update.form).toMatchObject({ country: 'US', msisdn: '15550001111', app_id: fake.applicationId });
    const updates = () => fake.requests.filter((r) => r.path === '/number/update').length;
    const before = updates();
    expect((await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl })).ok).toBe(true);
    expect(updates()).toBe(before);
    fake.application = { answerUrl: 'https://elsewhere.example.com/answer', answerMethod: 'GET', signedCallbacks: false };
    const wrongApp = await provider.syncInboundWebhook({ address: '+15550002222', addressNormalized: '+15550002222', inboundUrl });
    expect(wrongApp.ok).toBe(false);
    expect(wrongApp.message).toContain(`set its Answer URL to ${inboundUrl} with HTTP POST`);
    expect(wrongApp.message).toContain('signed callbacks');
    expect(fake.numbers.get('15550002222')?.appId).toBe(fake.applicationId);
    fake.application = { answerUrl: inboundUrl, answerMethod: 'POST', signedCallbacks: true };
    expect((await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl: null })).ok).toBe(true);
    expect(await provider.syncInboundWebhook({ address: '+15559999999', addressNormalized: '+15559999999', inboundUrl })).toMatchObject({ ok: false });
    expect(await provider.syncInboundWebhook({ address: '100', addressNormalized: '100', inboundUrl })).toMatchObject({ ok: false });
    const badSecret = new VonageProvider(client({ apiSecret: 'wrong' }), { applicationId: fake.applicationId, apiKey: fake.apiKey, signatureSecret: 's', publicUrl: PUBLIC });
    const failed = await badSecret.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl });
    expect(failed).toMatchObject({ ok: false, message: expect.stringContaining('HTTP 401') });
    expect(failed.message).not.toContain('wrong');
  });

  it('verifies webhooks the fake signs as Vonage does', () => {
    const body = fixture('status-ringing');
    const s = fake.signWebhook(body);
    const req = { publicUrl: `${PUBLIC}/x`, method: 'POST', headers: s.headers, body, rawBody: Buffer.from(s.rawBody), query: {} } as WebhookRequest;
    expect(provider.verifyWebhook(req)).toBe(true);
    expect(provider.verifyWebhook({ ...req, headers: fake.signWebhook(body, { secret: 'nope' }).headers })).toBe(false);
    expect(provider.verifyWebhook({ ...req, rawBody: Buffer.from(s.rawBody.replace('ringing', 'answered')) })).toBe(false);
  });
});
