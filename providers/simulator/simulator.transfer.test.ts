import { afterEach, describe, expect, it } from '@jest/globals';
import type { NormalizedCallEvent, TransferOptions } from '../../core/ports/telephony-provider.port.js';
import { fakeProviderContext } from '../../test/contracts/telephony-provider.contract.js';
import { SimulatorProvider, simulatorConfig } from './simulator.provider.js';

const OPTIONS: TransferOptions = { runId: 1, answerUrl: '', statusCallbackUrl: '', callerId: null, ringTimeoutSeconds: 30 };

async function until(cond: () => boolean, timeoutMs = 3000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('SimulatorProvider.transfer', () => {
  const live: SimulatorProvider[] = [];
  afterEach(async () => Promise.all(live.splice(0).map((p) => p.close())));

  async function answered(talkMs = 60_000): Promise<{ provider: SimulatorProvider; id: string; events: NormalizedCallEvent[] }> {
    const events: NormalizedCallEvent[] = [];
    const provider = new SimulatorProvider(simulatorConfig({ ring_ms: 0, talk_ms: talkMs }), fakeProviderContext(events));
    live.push(provider);
    const { providerCallId } = await provider.placeCall({
      attemptKey: `a${live.length}`, organizationId: 1, runId: 1, to: '+15550002299', from: null, statusCallbackUrl: '', answerUrl: '', mediaUrl: '',
      machineDetection: false, ringTimeoutSeconds: 30,
    });
    await until(() => events.some((e) => e.kind === 'status' && e.status === 'in_progress'));
    return { provider, id: providerCallId, events };
  }

  it('succeeds for an ordinary target; the caller then talks talk_ms and the call completes', async () => {
    const { provider, id, events } = await answered();
    // talk_ms restarts from the hand-over: the call does not end on its original timer
    (provider as unknown as { config: { talkMs: number } }).config.talkMs = 20;
    expect(await provider.transfer(id, { kind: 'phone', address: '+15553334444' }, OPTIONS)).toEqual({ ok: true, detail: 'simulator: connected to +15553334444' });
    await until(() => events.some((e) => e.kind === 'status' && e.status === 'completed'));
    expect(events.at(-1)).toMatchObject({ status: 'completed', outcome: 'completed' });
  });

  it.each([
    ['+15553334400', 'failed'],
    ['+15553334401', 'busy'],
    ['+15553334402', 'no_answer'],
  ])('a target ending %s fails with reason %s and leaves the call up', async (to, reason) => {
    const { provider, id } = await answered();
    expect(await provider.transfer(id, { kind: 'phone', address: to }, OPTIONS)).toMatchObject({ ok: false, reason });
    expect(await provider.getCallStatus(id)).toMatchObject({ status: 'in_progress' });
  });

  it('reads the digits of a SIP user part; a call not in progress is call_not_active', async () => {
    const { provider, id } = await answered();
    expect(await provider.transfer(id, { kind: 'sip', address: 'sip:5551201@pbx.example.com' }, OPTIONS)).toMatchObject({ ok: false, reason: 'busy' });
    expect(await provider.transfer(id, { kind: 'sip', address: 'sip:desk@pbx.example.com' }, OPTIONS)).toMatchObject({ ok: true });
    expect(await provider.transfer('sim-none', { kind: 'phone', address: '+15553334444' }, OPTIONS)).toMatchObject({ ok: false, reason: 'call_not_active' });
    expect(provider.manifest.capabilities).toEqual({ transfer: true });
  });
});
