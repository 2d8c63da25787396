import { campaignEventKey, type EventPublisher, type PendingEvent } from '../ports/event-publisher.port.js';
import { isWorkflowUnavailable, type EnsureWorkflowCanReceiveCalls } from '../workflows/ensure-workflow-can-receive-calls.use-case.js';
import type { CallOutcomeListener } from '../calls/call-outcome-listener.js';
import type { ApplyCallStatus } from '../calls/apply-call-status.use-case.js';
import type { PlaceOutboundCall } from '../calls/place-outbound-call.use-case.js';
import type { CampaignRepository, ClaimResult } from '../ports/campaign.repository.port.js';
import type { Clock } from '../ports/clock.port.js';
import type { JobScheduler } from '../ports/job-scheduler.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import type { CallOutcome, NormalizedCallEvent, TelephonyProvider } from '../ports/telephony-provider.port.js';
import { isFinalRunStatus, NOT_CONNECTED_DISPOSITIONS, type Run } from '../runs/run.js';
import type { TelephonyConfiguration } from '../telephony/telephony-configuration.js';
import {
  breakerTrips, shouldRetry, type Campaign, type CampaignContact, type CampaignLogEntry, type ContactAttempt, type LogLevel,
} from './campaign.js';
import { isWithinSchedule, nextSlotOpening } from './schedule.js';
import { voicemailSettingsOf } from '../voice/amd/amd-result.js';

export const DISPATCH_JOB = 'campaign.dispatch';
export const RECONCILE_JOB = 'campaign.reconcile';

export interface CampaignEngineOptions {
  /** How long a claimed attempt may wait for its provider call before the sweep hands it back (ms). */
  leaseMs: number;
  /**
   * How long after placing a call (and then between checks) the sweep asks the provider about a call whose final
   * status has not arrived; a call the provider does not know by then ends `failed` (ms).
   */
  reconcileAfterMs: number;
  /** A call still not final this long after it was claimed is ended `failed` and hung up (ms). */
  maxCallMs: number;
  /** The reconciliation sweep period (ms). */
  sweepIntervalMs: number;
  ringTimeoutSeconds: number;
  /**
   * True in processes that run the engine (worker/all roles): dispatch runs in-process at once. False (API-only):
   * work is handed to a worker through a `campaign.dispatch` job.
   */
  runsDispatch: boolean;
}

/** The parts of the telephony feature the engine uses. */
export interface CampaignEngineTelephony {
  configurations: Pick<TelephonyConfigurationRepository, 'get'>;
  /** Places every call (creates its run, builds its signed URLs, dials) and knows the caller id. */
  calls: Pick<PlaceOutboundCall, 'execute' | 'callerNumber'>;
  /** Reconciliation asks a placed call's provider about it. */
  providers: { forConfiguration(configuration: TelephonyConfiguration): TelephonyProvider };
  statuses: Pick<ApplyCallStatus, 'execute'>;
}

const entry = (ts: Date, level: LogLevel, event: string, message: string, details: Record<string, unknown> = {}): CampaignLogEntry =>
  ({ ts, level, event, message, details });

/** The outcome a final run stands for (reconciliation of a run whose listener call was lost). */
export function outcomeOfRun(run: Run): CallOutcome {
  const d = run.disposition;
  if (d && (NOT_CONNECTED_DISPOSITIONS as readonly string[]).includes(d)) return d as CallOutcome;
  return run.status === 'completed' ? 'completed' : 'failed';
}

/**
 * The campaign dispatch engine (DESIGN.md "How a campaign call flows").
 *
 * - `trigger` runs the dispatch loop of one campaign (coalesced per campaign in this process): preconditions
 *   (running, workflow can receive calls, configuration exists, inside a schedule slot), then claims due contacts
 *   one by one through `CampaignRepository.claimNextContact` (atomic, under `max_concurrency`) and places each
 *   claimed attempt without waiting for the call. It stops at the cap (a freed slot triggers it again), or when
 *   nothing is due (then a `campaign.dispatch` job is scheduled for the next due time, or the campaign completes).
 * - Placing (`PlaceOutboundCall`): attempt `dialing` → run created (`queued`) → run attached (from here never
 *   redialed) → provider `placeCall` with the attempt id as idempotency key and the URLs `CallUrls` builds → `placed`. A refused dial ends the run `failed` through
 *   the one status path and logs `call_dispatch_failed`.
 * - `onRunFinished` (a `CallOutcomeListener`): records the outcome (retry or final, counters, slot freed),
 *   evaluates the circuit breaker, and triggers dispatch at once.
 * - `sweep` (the `campaign.reconcile` job, also run at start): hands back attempts whose lease expired before
 *   their provider was called, reconciles placed calls whose final status never arrived (run already final,
 *   else the provider's `getCallStatus`, else timed out as `failed`), and triggers every running campaign.
 */
export class CampaignEngine implements CallOutcomeListener {
  private readonly loops = new Map<string, { again: boolean; done: Promise<void> }>();
  private readonly placements = new Set<Promise<void>>();
  private stopping = false;
  private jobsDefined = false;

  constructor(
    private readonly campaigns: CampaignRepository,
    private readonly ensureWorkflow: Pick<EnsureWorkflowCanReceiveCalls, 'execute'>,
    private readonly runs: Pick<RunRepository, 'get'>,
    private readonly telephony: CampaignEngineTelephony,
    private readonly scheduler: JobScheduler,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: CampaignEngineOptions,
    /** Customer webhooks: the engine publishes the state changes it decides (paused, failed, completed). */
    private readonly events?: EventPublisher,
  ) {}

  /** Registers the engine's jobs (before the scheduler starts). Idempotent. */
  defineJobs(): void {
    if (this.jobsDefined) return;
    this.jobsDefined = true;
    this.scheduler.define(DISPATCH_JOB, async (data) => {
      await this.trigger(Number(data.organizationId), Number(data.campaignId));
    }, { concurrency: 10 });
    this.scheduler.define(RECONCILE_JOB, async () => {
      await this.sweep();
    }, { concurrency: 1 });
  }

  /** Starts periodic reconciliation and runs a first sweep (recovering what a crash left). */
  async start(): Promise<void> {
    this.stopping = false;
    await this.scheduler.every(RECONCILE_JOB, this.options.sweepIntervalMs, {});
    await this.sweep();
  }

  /** Stops dispatching and waits for the loops and placements under way. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.idle();
  }

  /** Resolves once no dispatch loop or call placement of this process is under way (tests). */
  async idle(): Promise<void> {
    while (this.loops.size > 0 || this.placements.size > 0) {
      await Promise.all([...[...this.loops.values()].map((l) => l.done), ...this.placements]);
    }
  }

  /** `trigger` without waiting for the in-process loop (the API's start/resume). Never throws. */
  async kick(organizationId: number, campaignId: number): Promise<void> {
    if (this.options.runsDispatch) void this.trigger(organizationId, campaignId);
    else await this.trigger(organizationId, campaignId);
  }

  /**
   * Makes the campaign's dispatch run now: in this process when it runs the engine, else through a
   * `campaign.dispatch` job. Never throws (failures are logged).
   */
  async trigger(organizationId: number, campaignId: number): Promise<void> {
    if (this.stopping) return;
    if (!this.options.runsDispatch) {
      await this.scheduleDispatch(organizationId, campaignId, this.clock.now());
      return;
    }
    const key = `${organizationId}:${campaignId}`;
    const current = this.loops.get(key);
    if (current) {
      current.again = true;
      return current.done;
    }
    const state = { again: false, done: Promise.resolve() };
    state.done = (async () => {
      try {
        do {
          state.again = false;
          await this.dispatch(organizationId, campaignId).catch((e: unknown) =>
            this.log.error({ campaign_id: campaignId, err: (e as Error)?.message }, 'campaign dispatch failed'));
        } while (state.again && !this.stopping);
      } finally {
        this.loops.delete(key);
      }
    })();
    this.loops.set(key, state);
    return state.done;
  }

  private async scheduleDispatch(organizationId: number, campaignId: number, at: Date): Promise<void> {
    try {
      await this.scheduler.scheduleUnique(DISPATCH_JOB, `campaign:${campaignId}`, at, { organizationId, campaignId });
    } catch (e) {
      this.log.error({ campaign_id: campaignId, err: (e as Error)?.message }, 'could not schedule campaign dispatch');
    }
  }

  private async dispatch(organizationId: number, campaignId: number): Promise<void> {
    const campaign = await this.campaigns.get(organizationId, campaignId);
    if (!campaign || campaign.state !== 'running') return;
    let definitionId: number;
    let amd = { machineDetection: false, asyncMachineDetection: false };
    try {
      const ready = await this.ensureWorkflow.execute(organizationId, campaign.workflowId);
      definitionId = ready.definition.id;
      // the carrier's AMD that hangs up on a machine only for an agent that hangs up on voicemail (leave_message
      // needs the call up); a verdict without action (Twilio async AMD) for every agent that detects, which the
      // voice session then acts on (docs/voicemail.md)
      const voicemail = voicemailSettingsOf(ready.workflow.workflowConfigurations);
      amd = { machineDetection: voicemail?.action === 'hangup', asyncMachineDetection: voicemail !== null };
    } catch (e) {
      if (!isWorkflowUnavailable(e)) throw e;
      const now = this.clock.now();
      const event = this.marker('campaign.paused', campaignId, now, e.code);
      const paused = await this.campaigns.transition(organizationId, campaignId, {
        from: ['running'], to: 'paused', now,
        log: entry(now, 'warning', e.code, `Paused: the workflow ${campaign.workflowId} cannot receive calls (${e.code})`, { workflow_id: campaign.workflowId }),
        ...(event ? { event } : {}),
      });
      await this.publishState('campaign.paused', paused, event);
      return;
    }
    const configuration = campaign.telephonyConfigurationId === null
      ? null
      : await this.telephony.configurations.get(organizationId, campaign.telephonyConfigurationId);
    if (!configuration) {
      const now = this.clock.now();
      const event = this.marker('campaign.failed', campaignId, now, 'telephony_configuration_not_found');
      const failed = await this.campaigns.transition(organizationId, campaignId, {
        from: ['running'], to: 'failed', now,
        log: entry(now, 'error', 'campaign_failed', 'Failed: its telephony configuration no longer exists', {
          reason: 'telephony_configuration_not_found', telephony_configuration_id: campaign.telephonyConfigurationId,
        }),
        ...(event ? { event } : {}),
      });
      await this.publishState('campaign.failed', failed, event);
      return;
    }
    const callerNumber = await this.telephony.calls.callerNumber(organizationId, configuration.id);

    while (!this.stopping) {
      const now = this.clock.now();
      if (!isWithinSchedule(campaign.scheduleConfig, now)) {
        const opening = nextSlotOpening(campaign.scheduleConfig, now);
        if (opening) await this.scheduleDispatch(organizationId, campaignId, opening);
        return;
      }
      const claim: ClaimResult = await this.campaigns.claimNextContact(organizationId, campaignId, { now, leaseMs: this.options.leaseMs });
      if (claim.kind === 'claimed') {
        this.track(this.place(claim.campaign, claim.contact, claim.attempt, configuration, definitionId, callerNumber, amd));
        continue;
      }
      if (claim.kind === 'none_due') {
        if (claim.nextDueAt) {
          const at = nextSlotOpening(campaign.scheduleConfig, claim.nextDueAt) ?? claim.nextDueAt;
          await this.scheduleDispatch(organizationId, campaignId, at);
        } else {
          await this.completeIfDone(organizationId, campaignId);
        }
      }
      return;
    }
  }

  private track(p: Promise<void>): void {
    this.placements.add(p);
    void p.finally(() => this.placements.delete(p));
  }

  private async completeIfDone(organizationId: number, campaignId: number): Promise<void> {
    const now = this.clock.now();
    const event = this.marker('campaign.completed', campaignId, now);
    const done = await this.campaigns.completeIfDone(organizationId, campaignId, now, entry(now, 'info', 'campaign_completed', 'Every contact has a final outcome'), event);
    if (done) {
      await this.campaigns.appendLog(organizationId, campaignId, entry(now, 'info', 'campaign_summary', 'Final counters', {
        total_rows: done.totalRows, processed_rows: done.processedRows, failed_rows: done.failedRows,
        executed_count: done.executedCount, total_queued_count: done.totalQueuedCount,
      }));
      this.log.info({ campaign_id: campaignId, processed_rows: done.processedRows }, 'campaign completed');
      await this.publishState('campaign.completed', { campaign: done, changed: true }, event);
    }
  }

  /**
   * The marker of a state change this engine is about to make, stored by the transition's own atomic write
   * (docs/webhooks.md "Guarantees"); none without an EventPublisher.
   */
  private marker(type: 'campaign.paused' | 'campaign.failed' | 'campaign.completed', campaignId: number, now: Date, reason?: string): PendingEvent | undefined {
    if (!this.events) return undefined;
    return { key: campaignEventKey(campaignId, type, now), type, at: now, previousState: 'running', ...(reason ? { reason } : {}) };
  }

  /** Publishes a state change this engine made (only when the transition happened here). Never throws. */
  private async publishState(type: 'campaign.paused' | 'campaign.failed' | 'campaign.completed', t: { campaign: Campaign | null; changed: boolean }, pending: PendingEvent | undefined): Promise<void> {
    if (!this.events || !pending || !t.changed || !t.campaign) return;
    await this.events.publish({
      type, organizationId: t.campaign.organizationId, campaign: t.campaign, previousState: 'running', ...(pending.reason ? { reason: pending.reason } : {}), pending,
    });
  }

  private async place(
    campaign: Campaign, contact: CampaignContact, attempt: ContactAttempt, configuration: TelephonyConfiguration, definitionId: number,
    callerNumber: string | null, amd: { machineDetection: boolean; asyncMachineDetection: boolean },
  ): Promise<void> {
    const org = campaign.organizationId;
    try {
      const now = this.clock.now();
      const dialing = await this.campaigns.markDialing(org, attempt.id, { now, checkAt: new Date(now.getTime() + this.options.leaseMs) });
      if (!dialing) {
        // paused or cancelled since the claim: the provider was never called
        await this.campaigns.releaseAttempt(org, attempt.id, now);
        return;
      }
      const result = await this.telephony.calls.execute({
        configuration, workflowId: campaign.workflowId, definitionId, name: `${campaign.name} · ${contact.phoneNumber} · attempt ${attempt.attemptNumber}`,
        campaignId: campaign.id, attemptId: attempt.id, attemptKey: String(attempt.id), to: contact.phoneNumber, from: callerNumber,
        initialContext: {
          ...contact.context, phone_number: contact.phoneNumber, called_number: contact.phoneNumber, caller_number: callerNumber,
          campaign_id: campaign.id, attempt: attempt.attemptNumber,
        },
        ...amd, ringTimeoutSeconds: this.options.ringTimeoutSeconds,
        beforeDial: async (run) => (await this.campaigns.attachRun(org, attempt.id, { runId: run.id, now: this.clock.now() })) !== null,
      });
      if (result.kind === 'stopped') return;
      if (result.kind === 'failed') {
        await this.dispatchFailed(campaign, contact, attempt, result.run.id, configuration.provider, result.error);
        return;
      }
      const placedAt = this.clock.now();
      await this.campaigns.markPlaced(org, attempt.id, { providerCallId: result.providerCallId, now: placedAt, checkAt: new Date(placedAt.getTime() + this.options.reconcileAfterMs) });
    } catch (e) {
      this.log.error({ campaign_id: campaign.id, attempt_id: attempt.id, err: (e as Error)?.message }, 'placing a campaign call failed');
    }
  }

  private async dispatchFailed(campaign: Campaign, contact: CampaignContact, attempt: ContactAttempt, runId: number, provider: string, err: Error) {
    const now = this.clock.now();
    const code = (err as { code?: string }).code ?? 'provider_error';
    await this.campaigns.appendLog(campaign.organizationId, campaign.id, entry(now, 'warning', 'call_dispatch_failed', `The call to ${contact.phoneNumber} could not be placed`, {
      phone_number: contact.phoneNumber, attempt: attempt.attemptNumber, run_id: runId, code, error: err?.message ?? String(err),
    }));
    await this.endCall(provider, runId, campaign.organizationId, attempt.id, 'failed', `dispatch failed: ${code}`);
  }

  /** Ends the run `failed`/`outcome` through the one status path, then makes sure the attempt records it. */
  private async endCall(provider: string, runId: number, organizationId: number, attemptId: number, outcome: CallOutcome, detail: string) {
    const event: NormalizedCallEvent & { kind: 'status' } = { kind: 'status', runId, status: 'failed', outcome, at: this.clock.now(), detail };
    await this.telephony.statuses.execute(provider, event, runId).catch((e: unknown) =>
      this.log.error({ run_id: runId, err: (e as Error)?.message }, 'status path failed'));
    // the listener has normally done this already; replaying is a no-op
    await this.recordOutcome(organizationId, attemptId, outcome);
  }

  async onRunFinished(run: Run, outcome: CallOutcome): Promise<void> {
    if (run.campaignId === null || run.attemptId === null) return;
    await this.recordOutcome(run.organizationId, run.attemptId, outcome);
  }

  /** Records an attempt's outcome (idempotent), runs the breaker and triggers dispatch. */
  async recordOutcome(organizationId: number, attemptId: number, outcome: CallOutcome): Promise<void> {
    const attempt = await this.campaigns.getAttempt(organizationId, attemptId);
    if (!attempt || attempt.status === 'ended') return;
    const campaign = await this.campaigns.get(organizationId, attempt.campaignId);
    if (!campaign) return;
    const now = this.clock.now();
    const retryAt = shouldRetry(campaign.retryConfig, outcome, attempt.attemptNumber)
      ? new Date(now.getTime() + campaign.retryConfig.retry_delay_seconds * 1000)
      : null;
    const recorded = await this.campaigns.recordOutcome(organizationId, attemptId, { outcome, now, retryAt });
    if (!recorded?.recorded) return;
    if (recorded.campaign.state === 'running' && (await this.breakerTripped(recorded.campaign, now))) return;
    await this.trigger(organizationId, campaign.id);
  }

  private async breakerTripped(campaign: Campaign, now: Date): Promise<boolean> {
    const cfg = campaign.circuitBreaker;
    if (!cfg.enabled) return false;
    const windowStart = now.getTime() - cfg.window_seconds * 1000;
    const since = new Date(Math.max(windowStart, campaign.breakerResetAt?.getTime() ?? 0));
    const window = await this.campaigns.breakerWindow(campaign.organizationId, campaign.id, since);
    if (!breakerTrips(cfg, window)) return false;
    const rate = window.failures / window.calls;
    const event = this.marker('campaign.paused', campaign.id, now, 'circuit_breaker_tripped');
    const tripped = await this.campaigns.transition(campaign.organizationId, campaign.id, {
      from: ['running'], to: 'paused', now, ...(event ? { event } : {}),
      log: entry(now, 'error', 'circuit_breaker_tripped', `Paused: ${window.failures} of the last ${window.calls} calls failed`, {
        failure_rate: Math.round(rate * 10_000) / 10_000, failures: window.failures, calls: window.calls,
        window_seconds: cfg.window_seconds, failure_threshold: cfg.failure_threshold, min_calls_in_window: cfg.min_calls_in_window,
      }),
    });
    if (tripped.changed) this.log.warn({ campaign_id: campaign.id, failures: window.failures, calls: window.calls }, 'campaign circuit breaker tripped');
    await this.publishState('campaign.paused', tripped, event);
    return true;
  }

  /** The reconciliation sweep (see the class comment). Never throws. */
  async sweep(): Promise<void> {
    try {
      const now = this.clock.now();
      for (;;) {
        const due = await this.campaigns.attemptsDueForCheck(now, 200);
        if (due.length === 0) break;
        for (const { attempt } of due) {
          await this.reconcile(attempt, now).catch((e: unknown) =>
            this.log.error({ attempt_id: attempt.id, err: (e as Error)?.message }, 'attempt reconciliation failed'));
        }
        if (due.length < 200) break;
      }
      for (const { organizationId, campaignId } of await this.campaigns.listRunning()) await this.trigger(organizationId, campaignId);
    } catch (e) {
      this.log.error({ err: (e as Error)?.message }, 'campaign sweep failed');
    }
  }

  private async reconcile(attempt: ContactAttempt, now: Date): Promise<void> {
    const org = attempt.organizationId;
    if (attempt.status === 'claimed' || (attempt.status === 'dialing' && attempt.runId === null)) {
      // the provider was never called for it: back to the queue
      if (await this.campaigns.releaseAttempt(org, attempt.id, now)) {
        this.log.info({ attempt_id: attempt.id }, 'expired campaign lease returned to the queue');
      }
      return;
    }
    const run = attempt.runId === null ? null : await this.runs.get(org, attempt.runId);
    if (!run) {
      await this.recordOutcome(org, attempt.id, 'failed');
      return;
    }
    if (isFinalRunStatus(run.status)) {
      await this.recordOutcome(org, attempt.id, outcomeOfRun(run));
      return;
    }
    const provider = run.provider ?? 'unknown';
    const providerCallId = attempt.providerCallId ?? run.providerCallId;
    const age = now.getTime() - attempt.claimedAt.getTime();
    if (!providerCallId) {
      // placeCall was (or may have been) invoked but its answer was lost: never redial, end it
      await this.endCall(provider, run.id, org, attempt.id, 'failed', 'reconciled: the dial was interrupted before the provider answered');
      return;
    }
    let status: NormalizedCallEvent | null = null;
    let instance: TelephonyProvider | null = null;
    try {
      const configuration = run.telephonyConfigurationId === null ? null : await this.telephony.configurations.get(org, run.telephonyConfigurationId);
      if (configuration) {
        instance = this.telephony.providers.forConfiguration(configuration);
        status = await instance.getCallStatus(providerCallId);
      }
    } catch (e) {
      this.log.warn({ attempt_id: attempt.id, err: (e as Error)?.message }, 'provider status lookup failed');
      await this.campaigns.postponeCheck(org, attempt.id, new Date(now.getTime() + this.options.reconcileAfterMs));
      return;
    }
    if (status?.kind === 'status' && isFinalRunStatus(status.status)) {
      await this.telephony.statuses.execute(provider, { ...status, runId: run.id }, run.id);
      await this.recordOutcome(org, attempt.id, status.outcome ?? (status.status === 'completed' ? 'completed' : 'failed'));
      return;
    }
    if (status?.kind === 'status' && age < this.options.maxCallMs) {
      await this.campaigns.postponeCheck(org, attempt.id, new Date(now.getTime() + this.options.reconcileAfterMs));
      return;
    }
    if (status?.kind === 'status' && instance) await instance.hangup(providerCallId).catch(() => undefined);
    await this.endCall(provider, run.id, org, attempt.id, 'failed', status ? 'reconciled: the call exceeded the longest allowed duration' : 'reconciled: the provider does not know the call');
  }
}
