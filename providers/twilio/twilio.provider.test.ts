import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import type { PlaceCallRequest, WebhookRequest } from '../../core/ports/telephony-provider.port.js';
import { FakeTwilioServer } from '../../test/fakes/twilio/fake-twilio-server.js';
import { fakeProviderContext, runTelephonyProviderContract } from '../../test/contracts/telephony-provider.contract.js';
import twilioPlugin, { createTwilioPlugin } from './index.js';
import { computeTwilioSignature } from './twilio-signature.js';
import { TwilioClient } from './twilio.client.js';
import { TwilioProvider } from './twilio.provider.js';
import { mapTwilioStatus, TWILIO_CALL_STATUS } from './twilio.status-map.js';

const PUBLIC = 'https://cp.example.org';
const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const FIXTURE_ACCOUNT_SID = 'AC0123456789abcdef0123456789abcdef';

/** The form body of a recorded fixture (fixtures/<name>.json). */
function form(name: string): Record<string, string> {
  return (JSON.parse(readFileSync(join(fixturesDir, `${name}.json`), 'utf8')) as { request: { body: Record<string, string> } }).request.body;
}
const twilioStatusFixtures = Object.fromEntries(
  readdirSync(fixturesDir).filter((f) => f.startsWith('status-')).map((f) => [f.slice(7, -5).replace(/-(\w)/g, (_m, c: string) => c.toUpperCase()), form(f.slice(0, -5))]),
) as Record<string, Record<string, string>>;
const twilioInboundFixture = form('inbound-call');
const twilioAnswerFixtures = { human: form('answer-human'), machine: form('answer-machine'), noAmd: form('status-answered') };
const callbackFor = (f: Record<string, string>, accountSid: string) => ({ ...f, AccountSid: accountSid });

let contractFake: FakeTwilioServer | undefined;
runTelephonyProviderContract('twilio', () => ({
  plugin: contractFake ? createTwilioPlugin({ apiBaseUrl: contractFake.url }) : twilioPlugin,
  fixturesDir,
  validConfig: { account_sid: FIXTURE_ACCOUNT_SID, auth_token: '0123456789abcdef0123456789abcdef' },
  otherAccountConfig: { account_sid: `AC${'a'.repeat(32)}`, auth_token: 'fedcba9876543210fedcba9876543210' },
  placeCall: {
    async setup() {
      contractFake = await FakeTwilioServer.start();
      return {
        config: { account_sid: contractFake.accountSid, auth_token: contractFake.authToken },
        teardown: async () => {
          await contractFake?.close();
          contractFake = undefined;
        },
      };
    },
    request: {
      attemptKey: 'attempt-42', organizationId: 1, runId: 42, to: '+15557654321', from: '+15550001111',
      statusCallbackUrl: `${PUBLIC}/api/v1/telephony/twilio/status/42`, answerUrl: `${PUBLIC}/api/v1/telephony/twilio/answer/42`,
      mediaUrl: 'wss://cp.example.org/api/v1/telephony/twilio/media/42', machineDetection: true, ringTimeoutSeconds: 30,
    },
    verify(placed, reported) {
      expect(reported).toEqual([]); // Twilio reports through HTTP callbacks only
      // The default plugin talks to api.twilio.com; the contract instance is built by a plugin pointed at the fake.
      expect(placed.providerCallId).toMatch(/^CA[0-9a-f]{32}$/);
      const form = contractFake?.requests.find((r) => r.path.endsWith('/Calls.json'))?.form;
      expect(form).toMatchObject({ To: '+15557654321', From: '+15550001111', Url: `${PUBLIC}/api/v1/telephony/twilio/answer/42`, MachineDetection: 'Enable' });
    },
  },
}));

function webhook(body: Record<string, string>, extra: Partial<WebhookRequest> = {}): WebhookRequest {
  return { publicUrl: `${PUBLIC}/api/v1/telephony/twilio/status/7`, method: 'POST', headers: {}, body, query: {}, runId: 7, ...extra };
}

describe('Twilio status map', () => {
  it('maps every Twilio call status, busy/no-answer/canceled as completed calls with that outcome', () => {
    expect(Object.keys(TWILIO_CALL_STATUS).sort()).toEqual(
      ['answered', 'busy', 'canceled', 'completed', 'failed', 'in-progress', 'initiated', 'no-answer', 'queued', 'ringing'],
    );
    expect(mapTwilioStatus('queued')).toEqual({ status: 'queued' });
    expect(mapTwilioStatus('ringing')).toEqual({ status: 'ringing' });
    expect(mapTwilioStatus('in-progress')).toEqual({ status: 'in_progress' });
    expect(mapTwilioStatus('busy')).toEqual({ status: 'completed', outcome: 'busy' });
    expect(mapTwilioStatus('no-answer')).toEqual({ status: 'completed', outcome: 'no_answer' });
    expect(mapTwilioStatus('failed')).toEqual({ status: 'failed', outcome: 'failed' });
    expect(mapTwilioStatus('canceled')).toEqual({ status: 'completed', outcome: 'canceled' });
    expect(mapTwilioStatus('nonsense')).toBeUndefined();
  });

  it('turns a machine or fax answer of a completed call into voicemail, a human one stays completed', () => {
    for (const m of ['machine_start', 'machine_end_beep', 'machine_end_silence', 'machine_end_other', 'fax']) {
      expect(mapTwilioStatus('completed', m)).toEqual({ status: 'completed', outcome: 'voicemail' });
    }
    expect(mapTwilioStatus('completed', 'human')).toEqual({ status: 'completed', outcome: 'completed' });
    expect(mapTwilioStatus('completed', 'unknown')).toEqual({ status: 'completed', outcome: 'completed' });
    // AMD does not change a call that did not connect.
    expect(mapTwilioStatus('busy', 'machine_start')).toEqual({ status: 'completed', outcome: 'busy' });
  });
});

describe('TwilioProvider (pure parts)', () => {
  const provider = new TwilioProvider(
    {} as never, // parsing and signatures never call the API
    { accountSid: FIXTURE_ACCOUNT_SID, authToken: 'tok-0123456789', publicUrl: PUBLIC },
  );

  it('normalizes each recorded status callback', () => {
    const f = twilioStatusFixtures;
    expect(provider.parseStatusCallback(webhook(f.initiated))).toMatchObject({ kind: 'status', runId: 7, status: 'queued' });
    expect(provider.parseStatusCallback(webhook(f.ringing))).toMatchObject({ kind: 'status', status: 'ringing', providerCallId: f.ringing.CallSid });
    expect(provider.parseStatusCallback(webhook(f.answered))).toEqual({
      kind: 'status', runId: 7, providerCallId: f.answered.CallSid, status: 'in_progress', at: new Date('2024-05-07T10:00:07Z'),
    });
    expect(provider.parseStatusCallback(webhook(f.completed))).toMatchObject({ status: 'completed', outcome: 'completed', durationSeconds: 42 });
    expect(provider.parseStatusCallback(webhook(f.completedHuman))).toMatchObject({ outcome: 'completed', durationSeconds: 65 });
    expect(provider.parseStatusCallback(webhook(f.completedMachine))).toMatchObject({ status: 'completed', outcome: 'voicemail', detail: 'answered_by=machine_end_beep' });
    expect(provider.parseStatusCallback(webhook(f.completedFax))).toMatchObject({ outcome: 'voicemail' });
    expect(provider.parseStatusCallback(webhook(f.busy))).toMatchObject({ status: 'completed', outcome: 'busy', durationSeconds: 0, detail: 'sip=486' });
    expect(provider.parseStatusCallback(webhook(f.noAnswer))).toMatchObject({ outcome: 'no_answer' });
    expect(provider.parseStatusCallback(webhook(f.failed))).toMatchObject({ status: 'failed', outcome: 'failed', detail: 'sip=404 twilio_error=32009' });
    expect(provider.parseStatusCallback(webhook(f.canceled))).toMatchObject({ outcome: 'canceled' });
    // The in-progress AMD verdict is kept as a detail; the outcome comes with the final callback.
    const machine = provider.parseStatusCallback(webhook(f.answeredMachine));
    expect(machine).toMatchObject({ status: 'in_progress', detail: 'answered_by=machine_start', amd: { verdict: 'machine', source: 'carrier' } });
    expect(machine).not.toHaveProperty('outcome');
    // a final status carries its verdict as the outcome, not as a live-session verdict
    expect(provider.parseStatusCallback(webhook(f.completedMachine))).not.toHaveProperty('amd');
  });

  it('normalizes the async AMD callback (AsyncAmdStatusCallback: AnsweredBy, no CallStatus) into a verdict for the live session', () => {
    const amd = (answeredBy: string, extra: Record<string, string> = {}) =>
      provider.parseStatusCallback(webhook({ AccountSid: FIXTURE_ACCOUNT_SID, CallSid: 'CA42', AnsweredBy: answeredBy, MachineDetectionDuration: '4120', ...extra }));
    expect(amd('machine_end_beep')).toEqual({
      kind: 'status', runId: 7, providerCallId: 'CA42', status: 'in_progress', detail: 'answered_by=machine_end_beep',
      amd: { verdict: 'machine', source: 'carrier', reason: 'answered_by=machine_end_beep after 4120 ms', greetingEnded: { beep: true } },
    });
    expect(amd('machine_end_silence')).toMatchObject({ amd: { verdict: 'machine', greetingEnded: { beep: false } } });
    expect(amd('machine_start')).toMatchObject({ amd: { verdict: 'machine' } });
    expect(amd('machine_start')).not.toHaveProperty('amd.greetingEnded');
    expect(amd('human')).toMatchObject({ status: 'in_progress', amd: { verdict: 'human', source: 'carrier' } });
    expect(amd('unknown')).toMatchObject({ amd: { verdict: 'unknown' } });
    expect(amd('martian')).toEqual({ kind: 'ignored', reason: 'no CallStatus in the callback' });
  });

  it('ignores unknown or foreign payloads with a reason and never throws', () => {
    const f = twilioStatusFixtures;
    expect(provider.parseStatusCallback(webhook(f.unknown))).toEqual({ kind: 'ignored', reason: 'unknown Twilio CallStatus "teleported"' });
    expect(provider.parseStatusCallback(webhook({ AccountSid: FIXTURE_ACCOUNT_SID, CallSid: 'CA1' }))).toEqual({ kind: 'ignored', reason: 'no CallStatus in the callback' });
    expect(provider.parseStatusCallback(webhook(f.streamStopped))).toMatchObject({ kind: 'status', status: 'completed', outcome: 'completed' });
    expect(provider.parseStatusCallback(webhook(f.streamError))).toMatchObject({ kind: 'ignored' });
    expect(provider.parseStatusCallback(webhook(f.empty)).kind).toBe('ignored');
    expect(provider.parseStatusCallback(webhook(callbackFor(f.completed, `AC${'9'.repeat(32)}`)))).toEqual({ kind: 'ignored', reason: 'callback of another Twilio account' });
    for (const body of [null, undefined, 'text', 42, { CallStatus: { nested: true } }, { CallStatus: ['ringing', 'completed'] }]) {
      expect(() => provider.parseStatusCallback(webhook(body as never))).not.toThrow();
    }
    expect(provider.parseStatusCallback(webhook({ CallStatus: ['ringing', 'completed'] } as never))).toMatchObject({ status: 'completed' });
  });

  it('verifies X-Twilio-Signature against the exact public URL and form', () => {
    const url = `${PUBLIC}/api/v1/telephony/twilio/status/7`;
    const body = twilioStatusFixtures.completed;
    const good = computeTwilioSignature('tok-0123456789', url, body);
    expect(provider.verifyWebhook(webhook(body, { headers: { 'x-twilio-signature': good } }))).toBe(true);
    expect(provider.verifyWebhook(webhook(body, { headers: { 'X-Twilio-Signature': good } }))).toBe(true);
    // Other URL, tampered form, other token, missing header.
    expect(provider.verifyWebhook(webhook(body, { headers: { 'x-twilio-signature': good }, publicUrl: `${PUBLIC}/api/v1/telephony/twilio/status/8` }))).toBe(false);
    expect(provider.verifyWebhook(webhook({ ...body, CallDuration: '4200' }, { headers: { 'x-twilio-signature': good } }))).toBe(false);
    expect(provider.verifyWebhook(webhook(body, { headers: { 'x-twilio-signature': computeTwilioSignature('other', url, body) } }))).toBe(false);
    expect(provider.verifyWebhook(webhook(body))).toBe(false);
    expect(provider.verifyWebhook(webhook(null as never, { headers: { 'x-twilio-signature': good } }))).toBe(false);
  });

  it('verifies a JSON webhook signed through bodySHA256: the URL signature and the raw body hash', () => {
    const raw = JSON.stringify({ CallSid: 'CA1', CallStatus: 'completed' });
    const url = `${PUBLIC}/api/v1/telephony/twilio/status/7?bodySHA256=${createHash('sha256').update(raw).digest('hex')}`;
    const sig = computeTwilioSignature('tok-0123456789', url, {});
    const json = (rawBody: string) => webhook(JSON.parse(rawBody), { publicUrl: url, rawBody: Buffer.from(rawBody), headers: { 'x-twilio-signature': sig, 'content-type': 'application/json' } });
    expect(provider.verifyWebhook(json(raw))).toBe(true);
    expect(provider.verifyWebhook(json(raw.replace('completed', 'busy')))).toBe(false);
  });

  it('parses the inbound voice webhook', () => {
    expect(provider.parseInboundCall(webhook(twilioInboundFixture))).toEqual({
      providerCallId: 'CA11112222333344445555666677778888', from: '+15559876543', to: '+15550001111', accountId: FIXTURE_ACCOUNT_SID,
    });
    expect(provider.parseInboundCall(webhook({ From: '+1555' }))).toEqual({ ignored: 'no CallSid in the inbound webhook' });
    expect(provider.parseInboundCall(webhook({ ...twilioInboundFixture, Direction: 'outbound-api' }))).toEqual({ ignored: 'not an inbound call (Direction outbound-api)' });
  });

  it('answers with <Connect><Stream> to the media WebSocket, refuses with a polite <Say> and <Hangup/>', () => {
    // Twilio refuses query strings on stream URLs: the signed media token (and any other query parameter) becomes a <Parameter>.
    const answer = provider.inboundAnswer({ runId: 12, mediaUrl: `${PUBLIC}/api/v1/telephony/twilio/media/12?token=1700000000.ab%2Bc&b=<2>`, statusCallbackUrl: `${PUBLIC}/api/v1/telephony/twilio/status/12` });
    expect(answer.contentType).toBe('text/xml');
    expect(answer.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://cp.example.org/api/v1/telephony/twilio/media/12"' +
        ' statusCallback="https://cp.example.org/api/v1/telephony/twilio/status/12" statusCallbackMethod="POST">' +
        '<Parameter name="run_id" value="12"/><Parameter name="token" value="1700000000.ab+c"/><Parameter name="b" value="&lt;2&gt;"/>' +
        '</Stream></Connect></Response>',
    );
    const reject = provider.inboundReject('workflow_archived <secret>');
    expect(reject.body).toMatch(/^<\?xml[^>]*\?><Response><Say>[^<]+<\/Say><Hangup\/><\/Response>$/);
    expect(reject.body).not.toContain('workflow_archived');
  });

  it('hangs up on an answering machine at the answer URL and streams a human', () => {
    const input = { runId: 3, mediaUrl: 'wss://cp.example.org/api/v1/telephony/twilio/media/3' };
    expect(provider.answerOutbound(webhook(twilioAnswerFixtures.machine), input).body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>');
    expect(provider.answerOutbound(webhook(twilioAnswerFixtures.human), input).body).toContain('<Stream url="wss://cp.example.org/api/v1/telephony/twilio/media/3">');
    expect(provider.answerOutbound(webhook(twilioAnswerFixtures.noAmd), input).body).toContain('<Connect>');
    const signed = provider.answerOutbound(webhook(twilioAnswerFixtures.human), { ...input, mediaUrl: `${input.mediaUrl}?token=1.abc` }).body;
    expect(signed).toContain('<Stream url="wss://cp.example.org/api/v1/telephony/twilio/media/3"><Parameter name="run_id" value="3"/><Parameter name="token" value="1.abc"/></Stream>');
  });
});

describe('TwilioProvider against the fake Twilio API', () => {
  let fake: FakeTwilioServer;
  let provider: TwilioProvider;

  beforeAll(async () => {
    fake = await FakeTwilioServer.start({ numbers: [{ phoneNumber: '+15550001111' }, { phoneNumber: '+15550002222', voiceUrl: 'https://elsewhere.example.com/voice' }] });
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.requests.length = 0;
    const client = new TwilioClient({ accountSid: fake.accountSid, authToken: fake.authToken, baseUrl: fake.url, sleep: async () => undefined });
    provider = new TwilioProvider(client, { accountSid: fake.accountSid, authToken: fake.authToken, publicUrl: PUBLIC });
  });

  const request: PlaceCallRequest = {
    attemptKey: 'attempt-1', organizationId: 1, runId: 7, to: '+15557654321', from: '+15550001111',
    statusCallbackUrl: `${PUBLIC}/api/v1/telephony/twilio/status/7`, answerUrl: `${PUBLIC}/api/v1/telephony/twilio/answer/7`,
    mediaUrl: 'wss://cp.example.org/api/v1/telephony/twilio/media/7', machineDetection: true, ringTimeoutSeconds: 2,
  };

  it('places a call with the answer URL, the status callback for the four events and AMD', async () => {
    const placed = await provider.placeCall(request);
    expect(placed).toEqual({ providerCallId: expect.stringMatching(/^CA[0-9a-f]{32}$/), alreadyPlaced: false });
    const form = fake.requests.find((r) => r.path.endsWith('/Calls.json'))?.form;
    expect(form).toMatchObject({
      To: '+15557654321', From: '+15550001111', Url: request.answerUrl, Method: 'POST', StatusCallback: request.statusCallbackUrl,
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'], StatusCallbackMethod: 'POST', MachineDetection: 'Enable',
      Timeout: '5',
    });
    const noAmd = await provider.placeCall({ ...request, machineDetection: false, ringTimeoutSeconds: 30 });
    const second = fake.requests.filter((r) => r.path.endsWith('/Calls.json')).at(-1)?.form;
    expect(second?.MachineDetection).toBeUndefined();
    expect(second?.Timeout).toBe('30');
    expect(noAmd.providerCallId).not.toBe(placed.providerCallId);
  });

  it('asks for async AMD to the run\'s status URL when the voice session acts on the verdict (hangup and leave_message alike)', async () => {
    for (const machineDetection of [true, false]) {
      await provider.placeCall({ ...request, machineDetection, asyncMachineDetection: true });
      const form = fake.requests.filter((r) => r.path.endsWith('/Calls.json')).at(-1)?.form;
      expect(form).toMatchObject({
        Url: request.answerUrl, StatusCallback: request.statusCallbackUrl, MachineDetection: 'DetectMessageEnd', AsyncAmd: 'true',
        AsyncAmdStatusCallback: request.statusCallbackUrl, AsyncAmdStatusCallbackMethod: 'POST',
      });
    }
  });

  it('refuses a call without a caller number and surfaces Twilio refusals as ProviderApiError', async () => {
    await expect(provider.placeCall({ ...request, from: null })).rejects.toBeInstanceOf(ProviderApiError);
    fake.failNext(1, 400, 21211, "The 'To' number +1555 is not a valid phone number.");
    const err = await provider.placeCall(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderApiError);
    expect((err as ProviderApiError).detail).toContain('21211');
    expect((err as ProviderApiError).detail).not.toContain(fake.authToken);
  });

  it('retries a 429 inside the client, so placing still succeeds', async () => {
    fake.rateLimitNext(2, 0);
    await expect(provider.placeCall(request)).resolves.toMatchObject({ alreadyPlaced: false });
    expect(fake.requests.filter((r) => r.path.endsWith('/Calls.json')).map((r) => r.status)).toEqual([429, 429, 201]);
  });

  it('reads a call status for reconciliation, with AMD', async () => {
    const { providerCallId } = await provider.placeCall(request);
    expect(await provider.getCallStatus(providerCallId)).toEqual({ kind: 'status', providerCallId, status: 'queued' });
    fake.setCallStatus(providerCallId, 'completed', 'machine_start');
    expect(await provider.getCallStatus(providerCallId)).toMatchObject({ status: 'completed', outcome: 'voicemail', detail: 'answered_by=machine_start' });
    expect(await provider.getCallStatus(`CA${'0'.repeat(32)}`)).toBeNull();
  });

  it('hangs up idempotently', async () => {
    const { providerCallId } = await provider.placeCall(request);
    await provider.hangup(providerCallId);
    expect(fake.calls.get(providerCallId)?.status).toBe('canceled');
    await expect(provider.hangup(providerCallId)).resolves.toBeUndefined();
    await expect(provider.hangup(`CA${'0'.repeat(32)}`)).resolves.toBeUndefined();
  });

  it('syncs the inbound webhook through IncomingPhoneNumbers, and never throws', async () => {
    const inboundUrl = `${PUBLIC}/api/v1/telephony/twilio/inbound`;
    const num = () => [...fake.numbers.values()].find((n) => n.phoneNumber === '+15550001111');
    expect(await provider.syncInboundWebhook({ address: '+1 555 000 1111', addressNormalized: '+15550001111', inboundUrl })).toEqual({
      ok: true, message: `Set the voice webhook of +15550001111 to ${inboundUrl} (POST)`,
    });
    expect(num()).toMatchObject({ voiceUrl: inboundUrl, voiceMethod: 'POST' });
    // A reconcile: repeating it changes nothing.
    const updates = () => fake.requests.filter((r) => r.method === 'POST' && r.path.includes('/IncomingPhoneNumbers/')).length;
    const before = updates();
    expect((await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl })).ok).toBe(true);
    expect(updates()).toBe(before);
    // Unbind clears our URL; a foreign URL is left alone.
    expect(await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl: null })).toEqual({ ok: true, message: 'Cleared the voice webhook of +15550001111' });
    expect(num()?.voiceUrl).toBe('');
    const foreign = await provider.syncInboundWebhook({ address: '+15550002222', addressNormalized: '+15550002222', inboundUrl: null });
    expect(foreign.ok).toBe(true);
    expect([...fake.numbers.values()].find((n) => n.phoneNumber === '+15550002222')?.voiceUrl).toBe('https://elsewhere.example.com/voice');
    // Failures are warnings.
    expect(await provider.syncInboundWebhook({ address: '+15559999999', addressNormalized: '+15559999999', inboundUrl })).toMatchObject({ ok: false });
    expect(await provider.syncInboundWebhook({ address: '1000', addressNormalized: '1000', inboundUrl })).toMatchObject({ ok: false });
    fake.failNext(1, 500, 20500, 'Internal Server Error');
    const failed = await provider.syncInboundWebhook({ address: '+15550001111', addressNormalized: '+15550001111', inboundUrl });
    expect(failed.ok).toBe(false);
    expect(failed.message).toContain('500');
  });
});
