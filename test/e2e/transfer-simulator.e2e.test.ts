/**
 * Transfers end to end on the simulator (docs/voice.md "Transfers"): the running service, a simulator call placed
 * as the campaign engine places it, and the `CallTransfer` port the voice session calls when an endCall node with
 * `transfer_to` has said its last words. The run shows the outcome (GET run) and keeps it when the carrier later
 * reports the caller's leg completed.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CallTransfer } from '../../core/ports/call-transfer.port.js';
import simulator from '../../providers/simulator/index.js';
import { startProviderE2e, type ProviderE2e } from '../support/provider-e2e.js';

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 8000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('transfers on the simulator, end to end', () => {
  let e2e: ProviderE2e;

  beforeAll(async () => {
    e2e = await startProviderE2e({
      provider: 'simulator',
      plugins: [simulator],
      configuration: { name: 'Sim', config: { provider: 'simulator', ring_ms: 0, talk_ms: 1500 } },
    });
  });
  afterAll(async () => e2e.svc.close());

  async function liveCall(to: string) {
    const { run } = await e2e.placeOutbound(to, false);
    await until('the call answered', () => e2e.runOf(run.id), (r) => r.status === 'in_progress');
    return run;
  }

  it('a run reaching a transfer ends transferred, and the carrier\'s later completed keeps it', async () => {
    const run = await liveCall('+15557650010');
    const transfer = e2e.svc.container.get<CallTransfer>(CallTransfer);
    expect(await transfer.transfer({ organizationId: e2e.organizationId, runId: run.id, to: '+1 555 333 4444' })).toEqual({ disposition: 'transferred', to: '+15553334444' });
    const during = await e2e.runOf(run.id);
    expect(during).toMatchObject({ status: 'in_progress', disposition: 'transferred' });
    expect(during.gathered_context).toMatchObject({ mapped_call_disposition: 'transferred', transfer_to: '+15553334444' });
    const ended = await until('the call completed', () => e2e.runOf(run.id), (r) => r.status === 'completed');
    expect(ended.disposition).toBe('transferred');
    expect(ended.gathered_context.mapped_call_disposition).toBe('transferred');
    expect(ended.logs.entries.map((l: { event: string }) => l.event)).toEqual(expect.arrayContaining(['call_transferred', 'call_completed']));
  });

  it('a target ending 00 ends transfer_failed with the simulator\'s reason, visible in the run', async () => {
    const run = await liveCall('+15557650011');
    const transfer = e2e.svc.container.get<CallTransfer>(CallTransfer);
    expect(await transfer.transfer({ organizationId: e2e.organizationId, runId: run.id, to: '+15553334400' })).toMatchObject({ disposition: 'transfer_failed', reason: 'failed' });
    const ended = await until('the call completed', () => e2e.runOf(run.id), (r) => r.status === 'completed');
    expect(ended.disposition).toBe('transfer_failed');
    expect(ended.gathered_context).toMatchObject({ transfer_failure_reason: 'failed', transfer_to: '+15553334400', mapped_call_disposition: 'transfer_failed' });
    const log = ended.logs.entries.find((l: { event: string }) => l.event === 'transfer_failed');
    expect(log.message).toBe('Transfer to +15553334400 failed: failed (simulator: transfer to +15553334400 failed (ends in 00))');
  });

  it('a busy target (01) fails with reason busy', async () => {
    const run = await liveCall('+15557650012');
    const outcome = await e2e.svc.container.get<CallTransfer>(CallTransfer).transfer({ organizationId: e2e.organizationId, runId: run.id, to: '+15553334401' });
    expect(outcome).toMatchObject({ disposition: 'transfer_failed', reason: 'busy' });
    expect((await e2e.runOf(run.id)).gathered_context.transfer_failure_reason).toBe('busy');
  });
});
