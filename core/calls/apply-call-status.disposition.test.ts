import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../ports/logger.port.js';
import type { RunRepository, RunStatusUpdate } from '../ports/run.repository.port.js';
import type { Run } from '../runs/run.js';
import { planRunStatusUpdate } from '../runs/run-status.js';
import { ApplyCallStatus } from './apply-call-status.use-case.js';
import { CallOutcomeListeners } from './call-outcome-listener.js';

const T0 = new Date('2026-11-24T10:00:00Z');

function memoryRuns(initial: Run) {
  const runs = new Map<number, Run>([[initial.id, initial]]);
  return {
    runs,
    async findForProviderEvent(id: number) {
      return runs.get(id) ?? null;
    },
    async applyStatus(_o: number, id: number, update: RunStatusUpdate) {
      const run = runs.get(id)!;
      const next = planRunStatusUpdate(run, update);
      if (!next) return { applied: false, run };
      runs.set(id, next);
      return { applied: true, run: next };
    },
  };
}

const run = (over: Partial<Run> = {}): Run => ({
  id: 7, organizationId: 1, workflowId: 1, definitionId: 1, name: 'r', mode: 'inbound', status: 'in_progress', disposition: null,
  campaignId: null, attemptId: null, telephonyConfigurationId: 3, provider: 'twilio', providerCallId: 'CA1', callerNumber: null,
  calledNumber: null, initialContext: {}, gatheredContext: {}, logs: [], annotations: {},
  costInfo: { call_duration_seconds: 0, service_token_usage: 0, charge_usd: 0 }, durationSeconds: null, transcriptKey: null,
  recordingKey: null, createdAt: T0, startedAt: T0, endedAt: null, updatedAt: T0, ...over,
});

describe('ApplyCallStatus: a disposition Callplane decided (a call it could not serve)', () => {
  it('a failed status carrying agent_not_configured ends the run failed with that disposition, and the carrier\'s later completed changes nothing', async () => {
    const runs = memoryRuns(run());
    const apply = new ApplyCallStatus(runs as unknown as RunRepository, new CallOutcomeListeners(), { now: () => T0 }, silentLogger);
    const r = await apply.execute('twilio', { kind: 'status', runId: 7, status: 'failed', outcome: 'failed', disposition: 'agent_not_configured' }, 7);
    expect(r.applied).toBe(true);
    expect(runs.runs.get(7)).toMatchObject({ status: 'failed', disposition: 'agent_not_configured', gatheredContext: { mapped_call_disposition: 'agent_not_configured' } });
    const late = await apply.execute('twilio', { kind: 'status', runId: 7, status: 'completed', outcome: 'completed', durationSeconds: 3 }, 7);
    expect(late.applied).toBe(false);
    expect(runs.runs.get(7)).toMatchObject({ status: 'failed', disposition: 'agent_not_configured' });
  });

  it('without one, a failed call keeps the outcome as its disposition (unchanged rule)', async () => {
    const runs = memoryRuns(run({ gatheredContext: { mapped_call_disposition: 'appointment_confirmed' } }));
    const apply = new ApplyCallStatus(runs as unknown as RunRepository, new CallOutcomeListeners(), { now: () => T0 }, silentLogger);
    await apply.execute('twilio', { kind: 'status', runId: 7, status: 'failed', outcome: 'failed' }, 7);
    expect(runs.runs.get(7)).toMatchObject({ status: 'failed', disposition: 'failed' });
  });
});

describe('ApplyCallStatus: a call the voice session ended on an answering machine (docs/voicemail.md)', () => {
  const finishedWith = async (disposition: string) => {
    const runs = memoryRuns(run({ campaignId: 2, attemptId: 3, disposition, gatheredContext: { mapped_call_disposition: disposition } }));
    const listeners = new CallOutcomeListeners();
    const heard: string[] = [];
    listeners.add({ onRunFinished: async (_run, outcome) => void heard.push(outcome) });
    const apply = new ApplyCallStatus(runs as unknown as RunRepository, listeners, { now: () => T0 }, silentLogger);
    await apply.execute('twilio', { kind: 'status', runId: 7, status: 'completed', outcome: 'completed', durationSeconds: 9 }, 7);
    return { heard, run: runs.runs.get(7)! };
  };

  it('keeps the voicemail disposition when the carrier reports completed, and the listeners hear voicemail (retry_on_voicemail applies)', async () => {
    const { heard, run: r } = await finishedWith('voicemail');
    expect(r).toMatchObject({ status: 'completed', disposition: 'voicemail' });
    expect(heard).toEqual(['voicemail']);
  });

  it('a left message is a completed call', async () => {
    const { heard, run: r } = await finishedWith('voicemail_left');
    expect(r).toMatchObject({ status: 'completed', disposition: 'voicemail_left' });
    expect(heard).toEqual(['completed']);
  });
});

describe('ApplyCallStatus: the carrier\'s AMD verdict (docs/voicemail.md "The carrier\'s detection and ours")', () => {
  const machineEndBeep = { verdict: 'machine' as const, source: 'carrier' as const, reason: 'answered_by=machine_end_beep', greetingEnded: { beep: true } };

  it('tells onCarrierAmd listeners about a verdict on a live run, even when its status changes nothing; never for a final run or another call', async () => {
    const runs = memoryRuns(run({ mode: 'outbound' }));
    const listeners = new CallOutcomeListeners();
    const told: Array<[number, string]> = [];
    listeners.add({ onRunFinished: async () => undefined, onCarrierAmd: (r, amd) => void told.push([r.id, amd.reason]) });
    listeners.add({ onRunFinished: async () => undefined, onCarrierAmd: () => { throw new Error('broken listener'); } });
    const apply = new ApplyCallStatus(runs as unknown as RunRepository, listeners, { now: () => T0 }, silentLogger);
    const r = await apply.execute('twilio', { kind: 'status', runId: 7, providerCallId: 'CA1', status: 'in_progress', amd: machineEndBeep }, 7);
    expect(r.applied).toBe(false);
    expect(told).toEqual([[7, 'answered_by=machine_end_beep']]);
    await apply.execute('twilio', { kind: 'status', runId: 7, providerCallId: 'CA9', status: 'in_progress', amd: machineEndBeep }, 7);
    expect(told).toHaveLength(1);
    await apply.execute('twilio', { kind: 'status', runId: 7, status: 'completed', outcome: 'completed', durationSeconds: 9 }, 7);
    await apply.execute('twilio', { kind: 'status', runId: 7, status: 'in_progress', amd: machineEndBeep }, 7);
    expect(told).toHaveLength(1);
  });

  it('a carrier\'s voicemail outcome keeps the message the agent left (voicemail_left, not retried)', async () => {
    const runs = memoryRuns(run({ campaignId: 2, attemptId: 3, disposition: 'voicemail_left', gatheredContext: { mapped_call_disposition: 'voicemail_left' } }));
    const listeners = new CallOutcomeListeners();
    const heard: string[] = [];
    listeners.add({ onRunFinished: async (_run, outcome) => void heard.push(outcome) });
    const apply = new ApplyCallStatus(runs as unknown as RunRepository, listeners, { now: () => T0 }, silentLogger);
    await apply.execute('twilio', { kind: 'status', runId: 7, status: 'completed', outcome: 'voicemail', durationSeconds: 20 }, 7);
    expect(runs.runs.get(7)).toMatchObject({ status: 'completed', disposition: 'voicemail_left' });
    expect(heard).toEqual(['completed']);
  });
});
