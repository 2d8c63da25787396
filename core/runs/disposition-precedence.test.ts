import { describe, expect, it } from '@jest/globals';
import type { RunStatusUpdate } from '../ports/run.repository.port.js';
import { isLateDispositionAllowed, resolveDisposition } from './disposition-precedence.js';
import type { Run } from './run.js';
import { planRunStatusUpdate } from './run-status.js';

const T0 = new Date('2026-11-24T10:00:00Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);

function run(over: Partial<Run> = {}): Run {
  return {
    id: 1, organizationId: 1, workflowId: 1, definitionId: 1, name: 'r', mode: 'inbound', status: 'in_progress', disposition: null,
    campaignId: null, attemptId: null, telephonyConfigurationId: 1, provider: 'twilio', providerCallId: 'CA1', callerNumber: '+15550001111',
    calledNumber: '+15550002222', initialContext: {}, gatheredContext: {}, logs: [], annotations: {},
    costInfo: { call_duration_seconds: 0, service_token_usage: 0, charge_usd: 0 }, durationSeconds: null, transcriptKey: null,
    recordingKey: null, createdAt: T0, startedAt: T0, endedAt: null, updatedAt: T0, ...over,
  };
}

describe('resolveDisposition: the one rule for which disposition a run keeps', () => {
  it.each([
    [null, 'completed', 'completed'],
    ['completed', null, 'completed'],
    ['booked', 'completed', 'completed'], // ordinary: the newest wins
    ['completed', 'transferred', 'transferred'],
    ['transferred', 'completed', 'transferred'], // the carrier's later "caller leg completed" never replaces a transfer
    ['transferred', 'failed', 'transferred'],
    ['transfer_failed', 'completed', 'transfer_failed'],
    ['transferred', 'transfer_failed', 'transfer_failed'], // a failure outranks the agent's intent
    ['transfer_failed', 'transferred', 'transfer_failed'], // never the reverse
    ['transferred', 'transferred', 'transferred'],
  ])('%s then %s → %s', (current, incoming, expected) => {
    expect(resolveDisposition(current, incoming)).toBe(expected);
  });

  it('lets only a transfer outcome change a final run', () => {
    expect(isLateDispositionAllowed('completed', 'transferred')).toBe(true);
    expect(isLateDispositionAllowed('transferred', 'transfer_failed')).toBe(true);
    expect(isLateDispositionAllowed('transfer_failed', 'transferred')).toBe(false);
    expect(isLateDispositionAllowed('completed', 'busy')).toBe(false);
    expect(isLateDispositionAllowed('completed', null)).toBe(false);
  });
});

describe('planRunStatusUpdate applies the rule', () => {
  const transferred: RunStatusUpdate = {
    status: 'in_progress', disposition: 'transferred', gatheredContext: { transfer_to: '+15553334444', transferred_at: at(5).toISOString() },
    log: { ts: at(5).toISOString(), event: 'call_transferred' }, at: at(5),
  };

  it('a final completed status after a transfer keeps transferred (and mapped_call_disposition)', () => {
    const live = planRunStatusUpdate(run(), transferred)!;
    expect(live.disposition).toBe('transferred');
    const ended = planRunStatusUpdate(live, { status: 'completed', disposition: 'completed', gatheredContext: { mapped_call_disposition: 'completed' }, durationSeconds: 90, at: at(95) })!;
    expect(ended).toMatchObject({ status: 'completed', disposition: 'transferred', durationSeconds: 90 });
    expect(ended.gatheredContext).toMatchObject({ mapped_call_disposition: 'transferred', transfer_to: '+15553334444' });
  });

  it('a transfer outcome learned after the final status still lands; status, times and cost stay', () => {
    const ended = run({ status: 'completed', disposition: 'completed', gatheredContext: { mapped_call_disposition: 'completed' }, endedAt: at(4), durationSeconds: 4 });
    const next = planRunStatusUpdate(ended, transferred)!;
    expect(next).toMatchObject({ status: 'completed', disposition: 'transferred', endedAt: at(4), durationSeconds: 4 });
    expect(next.gatheredContext.mapped_call_disposition).toBe('transferred');
    expect(next.logs.map((l) => l.event)).toEqual(['call_transferred']);
    // replayed: nothing new
    expect(planRunStatusUpdate(next, transferred)).toBeNull();
  });

  it('a final run still refuses everything else (a late failed status, a late ordinary disposition)', () => {
    const ended = run({ status: 'completed', disposition: 'transferred', endedAt: at(4) });
    expect(planRunStatusUpdate(ended, { status: 'failed', disposition: 'failed', at: at(6) })).toBeNull();
    expect(planRunStatusUpdate(ended, { status: 'completed', disposition: 'completed', at: at(6) })).toBeNull();
    const failed = run({ status: 'completed', disposition: 'transfer_failed', endedAt: at(4) });
    expect(planRunStatusUpdate(failed, transferred)).toBeNull();
  });

  it('the agent-set transferred (from the conversation) gives way to a transfer failure', () => {
    const intent = planRunStatusUpdate(run(), { status: 'in_progress', disposition: 'transferred', gatheredContext: { transfer_to: '+15553334400' }, at: at(3) })!;
    const failed = planRunStatusUpdate(intent, {
      status: 'in_progress', disposition: 'transfer_failed', gatheredContext: { transfer_failure_reason: 'target_rejected' }, at: at(4),
    })!;
    expect(failed.disposition).toBe('transfer_failed');
    expect(failed.gatheredContext).toMatchObject({ mapped_call_disposition: 'transfer_failed', transfer_failure_reason: 'target_rejected' });
  });
});
