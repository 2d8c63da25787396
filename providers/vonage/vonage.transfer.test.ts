import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { TransferOptions } from '../../core/ports/telephony-provider.port.js';
import { FakeVonageServer } from '../../test/fakes/vonage/fake-vonage-server.js';
import { VonageClient } from './vonage.client.js';
import { VonageProvider } from './vonage.provider.js';

const PUBLIC = 'https://cp.example.com';
const OPTIONS: TransferOptions = {
  runId: 3, answerUrl: `${PUBLIC}/api/v1/telephony/vonage/answer/3?transfer_to=x`, statusCallbackUrl: `${PUBLIC}/api/v1/telephony/vonage/status/3`,
  callerId: '+15550001111', ringTimeoutSeconds: 25,
};

describe('VonageProvider.transfer against the fake Vonage Voice API', () => {
  let fake: FakeVonageServer;
  let provider: VonageProvider;

  beforeEach(async () => {
    fake = await FakeVonageServer.start();
    const client = new VonageClient({
      applicationId: fake.applicationId, apiKey: fake.apiKey, apiSecret: fake.apiSecret, privateKey: fake.privateKeyPem,
      apiBaseUrl: fake.url, restBaseUrl: fake.url, maxRetries: 0, sleep: async () => undefined,
    });
    provider = new VonageProvider(client, { applicationId: fake.applicationId, apiKey: fake.apiKey, signatureSecret: fake.signatureSecret, publicUrl: PUBLIC });
  });
  afterEach(async () => fake.close());

  async function answeredCall(): Promise<string> {
    const placed = await provider.placeCall({
      attemptKey: 'a', organizationId: 1, runId: 3, to: '+15550002222', from: '+15550001111', statusCallbackUrl: OPTIONS.statusCallbackUrl,
      answerUrl: `${PUBLIC}/a`, mediaUrl: 'wss://cp.example.com/m?token=t', machineDetection: false, ringTimeoutSeconds: 30,
    });
    fake.calls.get(placed.providerCallId)!.status = 'answered';
    return placed.providerCallId;
  }

  it('PUT /v1/calls/{uuid} {action: transfer, destination: {type: ncco, ncco: [connect phone]}}', async () => {
    const uuid = await answeredCall();
    expect(await provider.transfer(uuid, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: true });
    expect(fake.calls.get(uuid)!.transfer).toEqual({
      action: 'transfer',
      destination: { type: 'ncco', ncco: [{ action: 'connect', timeout: 25, from: '15550001111', endpoint: [{ type: 'phone', number: '15553334444' }] }] },
    });
  });

  it('a SIP target is a sip endpoint', async () => {
    const uuid = await answeredCall();
    await provider.transfer(uuid, { kind: 'sip', address: 'sips:desk@pbx.example.com' }, { ...OPTIONS, callerId: null });
    expect(fake.calls.get(uuid)!.transfer).toMatchObject({ destination: { ncco: [{ action: 'connect', endpoint: [{ type: 'sip', uri: 'sips:desk@pbx.example.com' }] }] } });
  });

  it('a call not in progress or unknown: call_not_active with Vonage\'s words; other refusals carrier_refused; 5xx unreachable', async () => {
    const uuid = await answeredCall();
    fake.calls.get(uuid)!.status = 'completed';
    expect(await provider.transfer(uuid, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toEqual({
      ok: false, reason: 'call_not_active', detail: 'Vonage HTTP 400: Bad Request: Call is not in progress (status completed)',
    });
    expect(await provider.transfer('00000000-0000-0000-0000-000000000000', { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: false, reason: 'call_not_active' });
    const live = await answeredCall();
    fake.failNext(1, 403, 'Forbidden', 'Destination not permitted');
    expect(await provider.transfer(live, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toEqual({
      ok: false, reason: 'carrier_refused', detail: 'Vonage HTTP 403: Forbidden: Destination not permitted',
    });
    fake.failNext(1, 500, 'Internal Server Error', 'boom');
    expect(await provider.transfer(live, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: false, reason: 'unreachable' });
  });
});
