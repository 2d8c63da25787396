import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../core/ports/logger.port.js';
import type { TransferOptions } from '../../core/ports/telephony-provider.port.js';
import { FakeTelnyxServer } from '../../test/fakes/telnyx/fake-telnyx-server.js';
import { TelnyxClient } from './telnyx.client.js';
import { TelnyxProvider } from './telnyx.provider.js';

const OPTIONS: TransferOptions = {
  runId: 9,
  answerUrl: 'https://cp.example.com/api/v1/telephony/telnyx/answer/9?transfer_to=x',
  statusCallbackUrl: 'https://cp.example.com/api/v1/telephony/telnyx/status/9',
  callerId: '+15550001111',
  ringTimeoutSeconds: 20,
};

describe('TelnyxProvider.transfer against the fake Telnyx API', () => {
  let fake: FakeTelnyxServer;
  let provider: TelnyxProvider;

  beforeEach(async () => {
    fake = await FakeTelnyxServer.start();
    const client = new TelnyxClient({ apiKey: fake.apiKey, baseUrl: fake.url, maxRetries: 0, sleep: async () => {} });
    provider = new TelnyxProvider(client, { connectionId: fake.connectionId, webhookPublicKey: fake.publicKeyBase64, publicUrl: 'https://cp.example.com', log: silentLogger });
  });
  afterEach(async () => fake.close());

  function answeredInbound(): string {
    const call = fake.incomingCall('+15557770000', '+15550001111');
    call.answered = true;
    return call.callControlId;
  }

  it('sends POST /v2/calls/{id}/actions/transfer {to, from, timeout_secs, command_id}', async () => {
    const id = answeredInbound();
    expect(await provider.transfer(id, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toEqual({ ok: true, detail: 'Telnyx accepted the transfer' });
    expect(fake.calls.get(id)!.transferRequest).toEqual({ to: '+15553334444', from: '+15550001111', timeout_secs: 20, command_id: 'transfer-run-9' });
  });

  it('passes a SIP URI as it is', async () => {
    const id = answeredInbound();
    await provider.transfer(id, { kind: 'sip', address: 'sip:desk@pbx.example.com' }, { ...OPTIONS, callerId: null });
    expect(fake.calls.get(id)!.transferRequest).toEqual({ to: 'sip:desk@pbx.example.com', timeout_secs: 20, command_id: 'transfer-run-9' });
  });

  it('an ended call: call_not_active with Telnyx\'s 90018 words', async () => {
    const id = answeredInbound();
    fake.endCall(id);
    expect(await provider.transfer(id, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toEqual({
      ok: false, reason: 'call_not_active',
      detail: "Telnyx HTTP 422, error 90018: Call has already ended: This call is no longer active and can't receive commands.",
    });
    expect(await provider.transfer('v3:unknown', { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: false, reason: 'call_not_active' });
  });

  it('a refused target is target_rejected; another refusal carrier_refused; a 5xx unreachable; never a throw', async () => {
    const id = answeredInbound();
    fake.failNext(1, 422, '10032', 'Invalid parameter', 'The destination is not allowed by your outbound voice profile');
    expect(await provider.transfer(id, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: false, reason: 'target_rejected' });
    const unanswered = fake.incomingCall('+15557770000', '+15550001111').callControlId;
    expect(await provider.transfer(unanswered, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: false, reason: 'carrier_refused', detail: expect.stringContaining('90015') });
    fake.failNext(1, 503, '10007', 'Unexpected error', 'down');
    expect(await provider.transfer(id, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: false, reason: 'unreachable' });
  });
});
