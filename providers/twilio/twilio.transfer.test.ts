import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { FakeTwilioServer } from '../../test/fakes/twilio/fake-twilio-server.js';
import type { TransferOptions } from '../../core/ports/telephony-provider.port.js';
import { TwilioClient } from './twilio.client.js';
import { TwilioProvider } from './twilio.provider.js';

const OPTIONS: TransferOptions = {
  runId: 7,
  answerUrl: 'https://cp.example.com/api/v1/telephony/twilio/answer/7?transfer_to=%2B15553334444',
  statusCallbackUrl: 'https://cp.example.com/api/v1/telephony/twilio/status/7',
  callerId: '+15550001111',
  ringTimeoutSeconds: 25,
};

describe('TwilioProvider.transfer against the fake Twilio API', () => {
  let fake: FakeTwilioServer;
  let provider: TwilioProvider;

  beforeEach(async () => {
    fake = await FakeTwilioServer.start();
    const client = new TwilioClient({ accountSid: fake.accountSid, authToken: fake.authToken, baseUrl: fake.url, maxRetries: 0, sleep: async () => {} });
    provider = new TwilioProvider(client, { accountSid: fake.accountSid, authToken: fake.authToken, publicUrl: 'https://cp.example.com' });
  });
  afterEach(async () => fake.close());

  async function liveCall(): Promise<string> {
    const placed = await provider.placeCall({
      attemptKey: 'run-7', organizationId: 1, runId: 7, to: '+15550002222', from: '+15550001111', statusCallbackUrl: OPTIONS.statusCallbackUrl,
      answerUrl: 'https://cp.example.com/a', mediaUrl: 'wss://cp.example.com/m', machineDetection: false, ringTimeoutSeconds: 30,
    });
    fake.setCallStatus(placed.providerCallId, 'in-progress');
    return placed.providerCallId;
  }

  it('updates the live call with <Dial><Number> TwiML (POST Calls/{sid}.json Twiml=...)', async () => {
    const sid = await liveCall();
    expect(await provider.transfer(sid, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toEqual({ ok: true, detail: 'Twilio call in-progress' });
    const update = fake.requests.filter((r) => r.path.endsWith(`/Calls/${sid}.json`) && r.method === 'POST').at(-1)!;
    expect(update.form.Twiml).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="+15550001111" timeout="25"><Number>+15553334444</Number></Dial></Response>');
  });

  it('dials a SIP URI with <Sip>, escaped', async () => {
    const sid = await liveCall();
    await provider.transfer(sid, { kind: 'sip', address: 'sip:desk@pbx.example.com;transport=tls&x=1' }, OPTIONS);
    expect(fake.calls.get(sid)!.twiml).toContain('<Sip>sip:desk@pbx.example.com;transport=tls&amp;x=1</Sip></Dial>');
  });

  it('a call that is no longer in progress: call_not_active with Twilio 21220 in the detail', async () => {
    const sid = await liveCall();
    fake.setCallStatus(sid, 'completed');
    expect(await provider.transfer(sid, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toEqual({
      ok: false, reason: 'call_not_active', detail: 'Twilio HTTP 400 error 21220: Call is not in-progress. Cannot redirect.',
    });
  });

  it('an unknown call is call_not_active; another refusal is carrier_refused; a 5xx is unreachable, never a throw', async () => {
    expect(await provider.transfer(`CA${'0'.repeat(32)}`, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: false, reason: 'call_not_active' });
    const sid = await liveCall();
    fake.failNext(1, 400, 13223, 'Dial: Invalid phone number format');
    expect(await provider.transfer(sid, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toEqual({
      ok: false, reason: 'carrier_refused', detail: 'Twilio HTTP 400 error 13223: Dial: Invalid phone number format',
    });
    fake.failNext(1, 503, 20503, 'Service unavailable');
    expect(await provider.transfer(sid, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: false, reason: 'unreachable' });
  });

  it('declares the capability in its manifest', () => {
    expect(provider.manifest.capabilities).toEqual({ transfer: true });
  });
});
