import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { CallUrls } from '../../core/calls/call-urls.js';
import type { TransferOptions } from '../../core/ports/telephony-provider.port.js';
import { FakePlivoServer } from '../../test/fakes/plivo/fake-plivo-server.js';
import { computePlivoV3Signature } from './plivo-signature.js';
import { PlivoClient } from './plivo.client.js';
import { PlivoProvider } from './plivo.provider.js';

const PUBLIC = 'https://cp.example.com';
const urls = new CallUrls(PUBLIC, { signUrl: (_p: string, _r: number, url: string) => `${url}?token=t` });

function options(target: string): TransferOptions {
  return { runId: 5, answerUrl: urls.transferAnswer('plivo', 5, target), statusCallbackUrl: urls.status('plivo', 5), callerId: '+15550001111', ringTimeoutSeconds: 30 };
}

describe('PlivoProvider.transfer against the fake Plivo API', () => {
  let fake: FakePlivoServer;
  let provider: PlivoProvider;

  beforeEach(async () => {
    fake = await FakePlivoServer.start();
    provider = new PlivoProvider(new PlivoClient({ authId: fake.authId, authToken: fake.authToken, baseUrl: fake.url, maxRetries: 0, sleep: async () => {} }), {
      authId: fake.authId, authToken: fake.authToken, applicationId: null,
    });
  });
  afterEach(async () => fake.close());

  async function liveCall(): Promise<string> {
    const placed = await provider.placeCall({
      attemptKey: 'a', organizationId: 1, runId: 5, to: '+15550002222', from: '+15550001111', statusCallbackUrl: urls.status('plivo', 5),
      answerUrl: urls.answer('plivo', 5), mediaUrl: 'wss://cp.example.com/m', machineDetection: false, ringTimeoutSeconds: 30,
    });
    const call = fake.calls.get(placed.providerCallId)!;
    call.state = 'in-progress';
    return call.callUuid;
  }

  it('transfers the A leg to the transfer answer URL (POST /Call/{uuid}/ legs=aleg, aleg_url, aleg_method)', async () => {
    const uuid = await liveCall();
    expect(await provider.transfer(uuid, { kind: 'phone', address: '+15553334444' }, options('+15553334444'))).toMatchObject({ ok: true });
    const call = [...fake.calls.values()].find((c) => c.callUuid === uuid)!;
    expect(call.transfer).toEqual({ legs: 'aleg', aleg_url: `${PUBLIC}/api/v1/telephony/plivo/answer/5?transfer_to=%2B15553334444`, aleg_method: 'POST' });
  });

  it('a call that is not live: call_not_active with Plivo\'s words; a 5xx: unreachable', async () => {
    expect(await provider.transfer('no-such-call', { kind: 'phone', address: '+15553334444' }, options('+15553334444'))).toEqual({
      ok: false, reason: 'call_not_active', detail: 'Plivo HTTP 404: call not found',
    });
    const uuid = await liveCall();
    fake.failNext(1, 400, { aleg_url: ['invalid url'] });
    expect(await provider.transfer(uuid, { kind: 'phone', address: '+15553334444' }, options('+15553334444'))).toEqual({
      ok: false, reason: 'carrier_refused', detail: 'Plivo HTTP 400: aleg_url: invalid url',
    });
    fake.failNext(1, 500, 'internal error');
    expect(await provider.transfer(uuid, { kind: 'phone', address: '+15553334444' }, options('+15553334444'))).toMatchObject({ ok: false, reason: 'unreachable' });
  });

  it('the transfer answer URL serves <Dial> to the target, signed like every Plivo webhook', () => {
    const url = urls.transferAnswer('plivo', 5, 'sip:desk@pbx.example.com');
    const body = { CallUUID: 'u-1', Direction: 'outbound', From: '15550001111', To: '15550002222' };
    const nonce = '12345';
    const request = {
      publicUrl: url, method: 'POST', body, query: { transfer_to: 'sip:desk@pbx.example.com' },
      headers: { 'X-Plivo-Signature-V3': computePlivoV3Signature(fake.authToken, 'POST', url, body, nonce), 'X-Plivo-Signature-V3-Nonce': nonce },
    };
    expect(provider.verifyWebhook(request)).toBe(true);
    // the target is covered by the signature: another target in the URL does not verify
    expect(provider.verifyWebhook({ ...request, publicUrl: urls.transferAnswer('plivo', 5, '+19990000000') })).toBe(false);
    const markup = provider.answerOutbound(request, { runId: 5, mediaUrl: 'wss://m', statusCallbackUrl: urls.status('plivo', 5) });
    expect(markup.body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="15550001111" timeout="30"><User>sip:desk@pbx.example.com</User></Dial></Response>');
    const phone = provider.answerOutbound({ ...request, query: { transfer_to: '+15553334444' }, body: { ...body, Direction: 'inbound' } }, { runId: 5, mediaUrl: 'wss://m', statusCallbackUrl: '' });
    expect(phone.body).toContain('<Dial callerId="15550002222" timeout="30"><Number>15553334444</Number></Dial>');
    // an unusable target never dials
    expect(provider.answerOutbound({ ...request, query: { transfer_to: 'nonsense' } }, { runId: 5, mediaUrl: 'wss://m', statusCallbackUrl: '' }).body).toContain('<Hangup/>');
  });
});
