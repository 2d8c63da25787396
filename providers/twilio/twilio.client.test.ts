import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import { FakeTwilioServer } from '../../test/fakes/twilio/fake-twilio-server.js';
import { TwilioClient, type TwilioClientOptions } from './twilio.client.js';

describe('TwilioClient against the fake Twilio API', () => {
  let fake: FakeTwilioServer;
  let sleeps: number[];
  let client: TwilioClient;

  function newClient(extra: Partial<TwilioClientOptions> = {}): TwilioClient {
    return new TwilioClient({
      accountSid: fake.accountSid,
      authToken: fake.authToken,
      baseUrl: fake.url,
      maxRetries: 3,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      ...extra,
    });
  }

  beforeEach(async () => {
    fake = await FakeTwilioServer.start({
      numbers: [
        { phoneNumber: '+15550001111', voiceUrl: 'https://old.example.com/voice', voiceMethod: 'GET' },
        { phoneNumber: '+15550001112' },
      ],
    });
    sleeps = [];
    client = newClient();
  });

  afterEach(async () => {
    await fake.close();
  });

  it('creates a call with the answer URL, status callback events and AMD as Twilio expects them', async () => {
    const result = await client.createCall({
      to: '+15557654321',
      from: '+15550001111',
      url: 'https://cp.example.org/v1/telephony/twilio/answer?run=7',
      statusCallback: 'https://cp.example.org/v1/telephony/twilio/status?run=7',
      statusCallbackEvents: ['initiated', 'ringing', 'answered', 'completed'],
      machineDetection: 'Enable',
      timeoutSeconds: 30,
    });
    expect(result.sid).toMatch(/^CA[0-9a-f]{32}$/);
    expect(result.status).toBe('queued');

    const req = fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/Calls.json'));
    expect(req?.path).toBe(`/2010-04-01/Accounts/${fake.accountSid}/Calls.json`);
    expect(req?.authorized).toBe(true);
    expect(req?.form).toEqual({
      To: '+15557654321',
      From: '+15550001111',
      Url: 'https://cp.example.org/v1/telephony/twilio/answer?run=7',
      Method: 'POST',
      StatusCallback: 'https://cp.example.org/v1/telephony/twilio/status?run=7',
      StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      StatusCallbackMethod: 'POST',
      MachineDetection: 'Enable',
      Timeout: '30',
    });
    expect(fake.calls.get(result.sid)?.to).toBe('+15557654321');
  });

  it('sends async AMD parameters only when asked', async () => {
    await client.createCall({
      to: '+15557654321', from: '+15550001111', url: 'https://a/answer', statusCallback: 'https://a/status',
      statusCallbackEvents: ['completed'], machineDetection: 'DetectMessageEnd', asyncAmd: true,
      asyncAmdStatusCallback: 'https://a/amd', machineDetectionTimeoutSeconds: 20,
    });
    const form = fake.requests.at(-1)?.form;
    expect(form).toMatchObject({
      MachineDetection: 'DetectMessageEnd', AsyncAmd: 'true', AsyncAmdStatusCallback: 'https://a/amd',
      AsyncAmdStatusCallbackMethod: 'POST', MachineDetectionTimeout: '20', StatusCallbackEvent: 'completed',
    });
    await client.createCall({ to: '+1555', from: '+1556', url: 'https://a/answer', statusCallback: 'https://a/s', statusCallbackEvents: ['completed'] });
    const plain = fake.requests.at(-1)?.form ?? {};
    expect(Object.keys(plain).filter((k) => /Amd|Machine|Timeout/.test(k))).toEqual([]);
  });

  it('retries 429 honouring Retry-After, then succeeds with a single call created', async () => {
    fake.rateLimitNext(2, 2);
    const result = await client.createCall({
      to: '+15557654321', from: '+15550001111', url: 'https://a/answer', statusCallback: 'https://a/status', statusCallbackEvents: ['completed'],
    });
    expect(result.sid).toMatch(/^CA/);
    expect(fake.requests.map((r) => r.status)).toEqual([429, 429, 201]);
    expect(sleeps).toEqual([2000, 2000]);
    expect(fake.calls.size).toBe(1);
  });

  it('backs off exponentially without Retry-After, bounded by maxRetryDelayMs', async () => {
    client = newClient({ retryBaseDelayMs: 100, maxRetryDelayMs: 300 });
    fake.rateLimitNext(3);
    expect(await client.getCallStatus('CA00000000000000000000000000000000')).toBeNull();
    expect(sleeps).toEqual([100, 200, 300]);
    fake.rateLimitNext(1, 3600);
    await client.findIncomingNumber('+15550001111');
    expect(sleeps.at(-1)).toBe(300);
  });

  it('gives up after maxRetries 429s with a retryable ProviderApiError', async () => {
    fake.rateLimitNext(4, 1);
    const err = (await client
      .createCall({ to: '+1', from: '+2', url: 'https://a', statusCallback: 'https://b', statusCallbackEvents: ['completed'] })
      .catch((e: unknown) => e)) as ProviderApiError;
    expect(err).toBeInstanceOf(ProviderApiError);
    expect(err).toMatchObject({ provider: 'twilio', retryable: true });
    expect(err.detail).toContain('HTTP 429');
    expect(fake.requests).toHaveLength(4);
    expect(sleeps).toHaveLength(3);
  });

  it('maps a 400 to a non-retryable ProviderApiError carrying Twilio\'s code and message, never the token', async () => {
    fake.failNext(1, 400, 21211, "The 'To' number +1555 is not a valid phone number.");
    const err = (await client
      .createCall({ to: '+1555', from: '+15550001111', url: 'https://a', statusCallback: 'https://b', statusCallbackEvents: ['completed'] })
      .catch((e: unknown) => e)) as ProviderApiError;
    expect(err).toBeInstanceOf(ProviderApiError);
    expect(err.retryable).toBe(false);
    expect(err.detail).toContain('21211');
    expect(err.detail).toContain('is not a valid phone number');
    expect(err.detail).not.toContain(fake.authToken);
    expect(sleeps).toEqual([]);
  });

  it('maps wrong credentials (401) and 5xx; 5xx is retryable', async () => {
    const wrong = newClient({ authToken: 'not-the-token' });
    const e401 = (await wrong.findIncomingNumber('+15550001111').catch((e: unknown) => e)) as ProviderApiError;
    expect(e401).toMatchObject({ provider: 'twilio', retryable: false });
    expect(e401.detail).toContain('20003');
    expect(e401.detail).not.toContain('not-the-token');

    fake.failNext(1, 503, 20500, 'Service Unavailable');
    await expect(client.findIncomingNumber('+15550001111')).rejects.toMatchObject({ retryable: true });
  });

  it('an unreachable API is a retryable ProviderApiError', async () => {
    const url = fake.url;
    await fake.close();
    const gone = new TwilioClient({ accountSid: fake.accountSid, authToken: fake.authToken, baseUrl: url });
    const err = (await gone.getCallStatus('CA1').catch((e: unknown) => e)) as ProviderApiError;
    expect(err).toBeInstanceOf(ProviderApiError);
    expect(err.retryable).toBe(true);
    expect(err.detail).toContain('unreachable');
    fake = await FakeTwilioServer.start();
  });

  it('hangs up with Status=completed, idempotently, and reads call status back', async () => {
    const { sid } = await client.createCall({ to: '+1', from: '+2', url: 'https://a', statusCallback: 'https://b', statusCallbackEvents: ['completed'] });
    fake.setCallStatus(sid, 'in-progress', 'human');
    expect(await client.getCallStatus(sid)).toEqual({ sid, status: 'in-progress', answeredBy: 'human' });
    expect(await client.hangupCall(sid)).toEqual({ status: 'completed' });
    const update = fake.requests.at(-1);
    expect(update).toMatchObject({ method: 'POST', path: `/2010-04-01/Accounts/${fake.accountSid}/Calls/${sid}.json`, form: { Status: 'completed' } });
    expect(await client.hangupCall(sid)).toEqual({ status: 'completed' });
    expect(await client.hangupCall('CA0123456789abcdef0123456789abcdef')).toBe('not_found');
    expect(await client.getCallStatus('CA0123456789abcdef0123456789abcdef')).toBeNull();
  });

  it('finds an incoming number by exact E.164 and sets, then clears, its voice webhook', async () => {
    expect(await client.findIncomingNumber('+15559999999')).toBeNull();
    const found = await client.findIncomingNumber('+15550001111');
    expect(found).toMatchObject({ phoneNumber: '+15550001111', voiceUrl: 'https://old.example.com/voice', voiceMethod: 'GET' });
    expect(found?.sid).toMatch(/^PN/);
    const list = fake.requests.at(-1);
    expect(list?.method).toBe('GET');
    expect(list?.query.PhoneNumber).toBe('+15550001111');

    const set = await client.setIncomingNumberVoiceUrl(found!.sid, 'https://cp.example.org/v1/telephony/twilio/inbound', 'POST');
    expect(set).toMatchObject({ voiceUrl: 'https://cp.example.org/v1/telephony/twilio/inbound', voiceMethod: 'POST' });
    expect(fake.requests.at(-1)?.form).toEqual({ VoiceUrl: 'https://cp.example.org/v1/telephony/twilio/inbound', VoiceMethod: 'POST' });
    expect(fake.numbers.get(found!.sid)?.voiceUrl).toBe('https://cp.example.org/v1/telephony/twilio/inbound');

    const cleared = await client.setIncomingNumberVoiceUrl(found!.sid, null, 'POST');
    expect(cleared.voiceUrl).toBeNull();
    expect(fake.requests.at(-1)?.form).toEqual({ VoiceUrl: '', VoiceMethod: 'POST' });
    expect((await client.findIncomingNumber('+15550001111'))?.voiceUrl).toBeNull();

    await expect(client.setIncomingNumberVoiceUrl('PN0123456789abcdef0123456789abcdef', 'https://x', 'POST')).rejects.toMatchObject({
      provider: 'twilio', retryable: false,
    });
  });

  it('refuses a malformed account SID up front without echoing the token', () => {
    let err: unknown;
    try {
      new TwilioClient({ accountSid: 'XX123', authToken: 'tok-secret' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProviderApiError);
    expect((err as ProviderApiError).detail).not.toContain('tok-secret');
  });
});
