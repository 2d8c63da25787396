import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../core/ports/logger.port.js';
import type { NormalizedCallEvent, ProviderContext, TransferOptions, TransferResult } from '../../core/ports/telephony-provider.port.js';
import { FakeAriServer } from '../../test/fakes/ari/fake-ari-server.js';
import { TRANSFER_MARK, transferReasonOfCause } from './ari-transfer.js';
import { AriProvider } from './ari.provider.js';
import { createAriPlugin } from './index.js';
import { until } from '../../test/support/until.js';

const APP = 'callplane';
const PASSWORD = 'ari-secret-1234';
const plugin = createAriPlugin({ client: { reconnect: { initialDelayMs: 20, maxDelayMs: 200, jitter: false }, pingIntervalMs: 0 }, connectWaitMs: 2000 });
const OPTIONS: TransferOptions = { runId: 42, answerUrl: '', statusCallbackUrl: '', callerId: '+15550001111', ringTimeoutSeconds: 20 };

describe('AriProvider.transfer against the fake Asterisk: originate the target, bridge on answer', () => {
  let fake: FakeAriServer;
  let provider: AriProvider;
  let reported: NormalizedCallEvent[];
  let id = 500;

  beforeAll(async () => {
    fake = await FakeAriServer.start({ username: APP, password: PASSWORD });
  });
  afterAll(async () => fake.close());
  afterEach(async () => provider.close());

  async function answeredCall(dialTemplate = 'PJSIP/{number}@trunk'): Promise<string> {
    reported = [];
    const context: ProviderContext = {
      publicUrl: 'https://cp.example.org', allowPrivateNetwork: true, log: silentLogger,
      reportStatus: async (e) => { reported.push(e); },
      reportInbound: async () => ({ refused: 'phone_number_not_found' }),
    };
    provider = plugin.create({ ari_endpoint: fake.url, app_name: APP, app_password: PASSWORD, ws_client_name: '', dial_template: dialTemplate, configurationId: ++id, organizationId: 1 }, context) as AriProvider;
    const attemptKey = `attempt-${id}`;
    await provider.placeCall({
      attemptKey, organizationId: 1, runId: 42, to: '+15557654321', from: '+15550001111', statusCallbackUrl: '', answerUrl: '', mediaUrl: '',
      machineDetection: false, ringTimeoutSeconds: 30,
    });
    fake.simulateAnswer(attemptKey);
    await until('the call answered', () => reported.some((e) => e.kind === 'status' && e.status === 'in_progress'));
    return attemptKey;
  }

  function transferLeg(caller: string): string {
    const leg = [...fake.channels.values()].find((c) => c.appArgs[0] === TRANSFER_MARK && c.appArgs[2] === caller);
    if (!leg) throw new Error('no transfer leg originated');
    return leg.id;
  }

  it('answered: the target leg is originated into the app and bridged with the caller; ok', async () => {
    const caller = await answeredCall();
    const pending = provider.transfer(caller, { kind: 'phone', address: '+15553334444' }, OPTIONS);
    await until('the transfer leg', () => [...fake.channels.values()].some((c) => c.appArgs[0] === TRANSFER_MARK));
    const leg = transferLeg(caller);
    const originate = fake.requests.find((r) => r.method === 'POST' && r.path.startsWith('/ari/channels') && r.query.appArgs?.startsWith(TRANSFER_MARK));
    expect(originate?.query).toMatchObject({ endpoint: 'PJSIP/+15553334444@trunk', app: APP, appArgs: `${TRANSFER_MARK},42,${caller}`, callerId: '+15550001111', timeout: '20' });
    fake.simulateAnswer(leg);
    const result = await pending;
    expect(result).toMatchObject({ ok: true });
    const bridge = [...fake.bridges.values()].find((b) => b.channels.includes(caller));
    expect(bridge?.channels.sort()).toEqual([caller, leg].sort());
    // the leg's events never become statuses of a call; the pair ends together
    fake.simulateHangup(leg, 16);
    await until('the caller hung up with the target', () => !fake.channels.has(caller));
    await until('the bridge destroyed', () => !fake.bridges.has(bridge!.id));
    await until('the caller\'s final status', () => reported.some((e) => e.kind === 'status' && e.status === 'completed'));
    expect(reported.every((e) => e.kind !== 'status' || e.providerCallId === caller)).toBe(true);
  });

  it('busy target: ok false, reason busy, with the Asterisk cause; the caller stays up', async () => {
    const caller = await answeredCall();
    const pending = provider.transfer(caller, { kind: 'phone', address: '+15553334444' }, OPTIONS);
    await until('the transfer leg', () => [...fake.channels.values()].some((c) => c.appArgs[0] === TRANSFER_MARK));
    fake.simulateHangup(transferLeg(caller), 17);
    expect(await pending).toEqual({ ok: false, reason: 'busy', detail: 'Asterisk cause 17 (User busy)' });
    expect(fake.channels.has(caller)).toBe(true);
    expect(fake.bridges.size === 0 || [...fake.bridges.values()].every((b) => !b.channels.includes(caller))).toBe(true);
  });

  it('a refused originate: carrier_refused with Asterisk\'s words; a gone caller: call_not_active', async () => {
    const caller = await answeredCall();
    fake.failNext(1, 400, 'Invalid endpoint specified', (method, path) => method === 'POST' && path.startsWith('/ari/channels'));
    const refused: TransferResult = await provider.transfer(caller, { kind: 'sip', address: 'sip:desk@pbx.example.com' }, OPTIONS);
    expect(refused).toMatchObject({ ok: false, reason: 'carrier_refused', detail: expect.stringContaining('Invalid endpoint specified') });
    expect(await provider.transfer('no-such-channel', { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: false, reason: 'call_not_active' });
  });

  it('maps Asterisk causes to reasons', () => {
    expect([17, 21, 19, 18, 16, 1, 28, 34, undefined].map(transferReasonOfCause)).toEqual([
      'busy', 'target_rejected', 'no_answer', 'no_answer', 'no_answer', 'target_rejected', 'target_rejected', 'carrier_refused', 'carrier_refused',
    ]);
  });
});
