import { describe, expect, it, jest } from '@jest/globals';
import { NotFoundError } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import { silentLogger } from '../ports/logger.port.js';
import type { RunRepository, RunStatusUpdate } from '../ports/run.repository.port.js';
import type { TelephonyProvider, TransferOptions, TransferResult } from '../ports/telephony-provider.port.js';
import type { Run } from '../runs/run.js';
import { planRunStatusUpdate } from '../runs/run-status.js';
import type { ProviderManifest } from '../telephony/provider-manifest.js';
import type { TelephonyConfiguration } from '../telephony/telephony-configuration.js';
import { ApplyCallStatus } from './apply-call-status.use-case.js';
import { CallOutcomeListeners } from './call-outcome-listener.js';
import { CallUrls } from './call-urls.js';
import type { TransferTarget } from './transfer-target.js';
import { TransferCall } from './transfer-call.use-case.js';

const T0 = new Date('2026-11-24T10:00:00Z');
const clock: Clock = { now: () => T0 };

/** The two RunRepository operations, on the rule every adapter applies (`planRunStatusUpdate`). */
class MemoryRuns {
  readonly runs = new Map<number, Run>();
  async get(organizationId: number, id: number) {
    const run = this.runs.get(id);
    return run && run.organizationId === organizationId ? structuredClone(run) : null;
  }
  async applyStatus(organizationId: number, id: number, update: RunStatusUpdate) {
    const run = await this.get(organizationId, id);
    if (!run) return { applied: false, run: null };
    const next = planRunStatusUpdate(run, update);
    if (!next) return { applied: false, run };
    this.runs.set(id, next);
    return { applied: true, run: structuredClone(next) };
  }
  async findForProviderEvent(id: number) {
    return this.runs.get(id) ?? null;
  }
  async findByProviderCallId() {
    return null;
  }
}

function run(over: Partial<Run> = {}): Run {
  return {
    id: 7, organizationId: 1, workflowId: 1, definitionId: 1, name: 'r', mode: 'inbound', status: 'in_progress', disposition: null,
    campaignId: null, attemptId: null, telephonyConfigurationId: 3, provider: 'twilio', providerCallId: 'CA1', callerNumber: '+15557770000',
    calledNumber: '+15550001111', initialContext: {}, gatheredContext: {}, logs: [], annotations: {},
    costInfo: { call_duration_seconds: 0, service_token_usage: 0, charge_usd: 0 }, durationSeconds: null, transcriptKey: null,
    recordingKey: null, createdAt: T0, startedAt: T0, endedAt: null, updatedAt: T0, ...over,
  };
}

type TransferFn = (id: string, target: TransferTarget, options: TransferOptions) => Promise<TransferResult>;

function setup(opts: { transfer?: TransferFn | null; capability?: boolean; run?: Partial<Run> } = {}) {
  const runs = new MemoryRuns();
  runs.runs.set(7, run(opts.run));
  const transfer = jest.fn<TransferFn>(opts.transfer ?? (async () => ({ ok: true })));
  const manifest = { id: 'twilio', displayName: 'Twilio', ...(opts.capability === false ? {} : { capabilities: { transfer: true } }) } as unknown as ProviderManifest;
  const provider = { manifest, ...(opts.transfer === null ? {} : { transfer }) } as unknown as TelephonyProvider;
  const configuration = { id: 3, provider: 'twilio' } as TelephonyConfiguration;
  const urls = new CallUrls('https://cp.example.com', { signUrl: (_p: string, _r: number, u: string) => u });
  const useCase = new TransferCall({
    runs: runs as unknown as RunRepository,
    configurations: { get: async (org, id) => (org === 1 && id === 3 ? configuration : null) },
    instances: { forConfiguration: () => provider },
    urls, clock, log: silentLogger,
  });
  return { runs, transfer, useCase };
}

describe('TransferCall', () => {
  it('asks the run\'s provider with the parsed target and our URLs, then records transferred', async () => {
    const { runs, transfer, useCase } = setup();
    expect(await useCase.transfer({ organizationId: 1, runId: 7, to: ' +1 (555) 333-4444 ' })).toEqual({ disposition: 'transferred', to: '+15553334444' });
    expect(transfer).toHaveBeenCalledWith('CA1', { kind: 'phone', address: '+15553334444' }, {
      runId: 7,
      answerUrl: 'https://cp.example.com/api/v1/telephony/twilio/answer/7?transfer_to=%2B15553334444',
      statusCallbackUrl: 'https://cp.example.com/api/v1/telephony/twilio/status/7',
      callerId: '+15550001111', // inbound: the number the caller dialed
      ringTimeoutSeconds: 30,
    });
    const stored = runs.runs.get(7)!;
    expect(stored).toMatchObject({ status: 'in_progress', disposition: 'transferred' });
    expect(stored.gatheredContext).toEqual({ mapped_call_disposition: 'transferred', transfer_to: '+15553334444', transferred_at: T0.toISOString() });
    expect(stored.logs).toEqual([{ ts: T0.toISOString(), event: 'call_transferred', message: 'Transferred to +15553334444', details: { to: '+15553334444', provider: 'twilio' } }]);
  });

  it('records the carrier\'s reason: transfer_failed, gathered_context.transfer_failure_reason and a log with its words', async () => {
    const { runs, useCase } = setup({ transfer: async () => ({ ok: false, reason: 'busy', detail: 'Twilio says busy' }) });
    expect(await useCase.transfer({ organizationId: 1, runId: 7, to: 'sip:desk@pbx.example.com' })).toEqual({
      disposition: 'transfer_failed', to: 'sip:desk@pbx.example.com', reason: 'busy', detail: 'Twilio says busy',
    });
    const stored = runs.runs.get(7)!;
    expect(stored.disposition).toBe('transfer_failed');
    expect(stored.gatheredContext).toMatchObject({ transfer_failure_reason: 'busy', transfer_to: 'sip:desk@pbx.example.com' });
    expect(stored.logs.at(-1)).toMatchObject({ event: 'transfer_failed', message: 'Transfer to sip:desk@pbx.example.com failed: busy (Twilio says busy)', details: { reason: 'busy' } });
  });

  it('a provider without the capability: transfer_unsupported, the carrier is never asked', async () => {
    const { runs, transfer, useCase } = setup({ capability: false });
    expect(await useCase.transfer({ organizationId: 1, runId: 7, to: '+15553334444' })).toMatchObject({ disposition: 'transfer_failed', reason: 'transfer_unsupported' });
    expect(transfer).not.toHaveBeenCalled();
    expect(runs.runs.get(7)!.gatheredContext.transfer_failure_reason).toBe('transfer_unsupported');
    const none = setup({ transfer: null });
    expect(await none.useCase.transfer({ organizationId: 1, runId: 7, to: '+15553334444' })).toMatchObject({ reason: 'transfer_unsupported' });
  });

  it('an unusable target, a caller already gone, a run without a carrier call, a throwing provider', async () => {
    const a = setup();
    expect(await a.useCase.transfer({ organizationId: 1, runId: 7, to: '' })).toMatchObject({ reason: 'invalid_target' });
    expect(a.transfer).not.toHaveBeenCalled();
    const b = setup();
    expect(await b.useCase.transfer({ organizationId: 1, runId: 7, to: '+15553334444', callerGone: true })).toMatchObject({ reason: 'caller_hung_up' });
    expect(b.transfer).not.toHaveBeenCalled();
    const c = setup({ run: { providerCallId: null } });
    expect(await c.useCase.transfer({ organizationId: 1, runId: 7, to: '+15553334444' })).toMatchObject({ reason: 'call_not_active' });
    const d = setup({ transfer: async () => { throw new Error('socket hang up'); } });
    expect(await d.useCase.transfer({ organizationId: 1, runId: 7, to: '+15553334444' })).toMatchObject({ reason: 'unreachable', detail: 'socket hang up' });
  });

  it('another organization\'s run is not found', async () => {
    const { useCase } = setup();
    await expect(useCase.transfer({ organizationId: 2, runId: 7, to: '+15553334444' })).rejects.toThrow(NotFoundError);
  });
});

describe('disposition precedence through the one status path', () => {
  it('the carrier reporting the caller leg completed after a transfer keeps transferred', async () => {
    const { runs, useCase } = setup();
    await useCase.transfer({ organizationId: 1, runId: 7, to: '+15553334444' });
    const apply = new ApplyCallStatus(runs as unknown as RunRepository, new CallOutcomeListeners(), clock, silentLogger);
    const result = await apply.execute('twilio', { kind: 'status', runId: 7, providerCallId: 'CA1', status: 'completed', outcome: 'completed', durationSeconds: 95 });
    expect(result).toMatchObject({ applied: true, outcome: 'completed' });
    expect(runs.runs.get(7)).toMatchObject({ status: 'completed', disposition: 'transferred', durationSeconds: 95 });
    expect(runs.runs.get(7)!.gatheredContext.mapped_call_disposition).toBe('transferred');
  });

  it('a transfer outcome learned after the final status still lands on the run', async () => {
    const { runs, useCase } = setup({ transfer: async () => ({ ok: false, reason: 'call_not_active', detail: 'gone' }) });
    const apply = new ApplyCallStatus(runs as unknown as RunRepository, new CallOutcomeListeners(), clock, silentLogger);
    await apply.execute('twilio', { kind: 'status', runId: 7, providerCallId: 'CA1', status: 'completed', outcome: 'completed', durationSeconds: 12 });
    await useCase.transfer({ organizationId: 1, runId: 7, to: '+15553334444' });
    expect(runs.runs.get(7)).toMatchObject({ status: 'completed', disposition: 'transfer_failed', durationSeconds: 12 });
    expect(runs.runs.get(7)!.logs.map((l) => l.event)).toEqual(['call_completed', 'transfer_failed']);
  });
});
