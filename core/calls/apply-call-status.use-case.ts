import type { Clock } from '../ports/clock.port.js';
import { runEventKey, type EventPublisher } from '../ports/event-publisher.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { OrganizationSettingsRepository } from '../ports/organization-settings.repository.port.js';
import type { RunRepository, RunStatusUpdate } from '../ports/run.repository.port.js';
import type { CallOutcome, NormalizedCallEvent } from '../ports/telephony-provider.port.js';
import { ConflictError } from '../errors.js';
import { finalRunStatusFor, isFinalRunStatus, type Run } from '../runs/run.js';
import { isAnotherCall } from '../runs/run-status.js';
import { chargeFor } from '../usage/usage.js';
import { callDurationProblem } from './call-duration.js';
import type { CallOutcomeListeners } from './call-outcome-listener.js';

export type ApplyCallStatusResult =
  | { applied: true; run: Run; outcome: CallOutcome | null }
  | { applied: false; reason: 'run_not_found' | 'stale_or_duplicate' | 'provider_call_id_mismatch'; run: Run | null };

/** The outcome of a final status when the provider gave none. */
const outcomeOf = (event: NormalizedCallEvent & { kind: 'status' }): CallOutcome | null =>
  event.outcome ?? (event.status === 'completed' ? 'completed' : event.status === 'failed' ? 'failed' : null);

/**
 * The outcome the listeners hear: a connected call that the agent ended on an answering machine (the voice
 * session's disposition `voicemail`, docs/voicemail.md) is a `voicemail` outcome, so a campaign's
 * `retry_on_voicemail` applies as it does to the carrier's own AMD (`voicemail_left` is a delivered message: not retried).
 */
export const listenerOutcome = (outcome: CallOutcome, disposition: string | null): CallOutcome =>
  outcome === 'completed' && disposition === 'voicemail' ? 'voicemail' : outcome === 'voicemail' && disposition === 'voicemail_left' ? 'completed' : outcome;

/**
 * The one status path: HTTP callbacks, ARI events, the simulator and reconcilers all come here. Finds the
 * run (our run id when the event carries it, else the provider's call id), applies the event through
 * `RunRepository.applyStatus` (never backwards; a duplicate is a no-op), records the disposition and the
 * duration on a final status, then tells the `CallOutcomeListener`s, once per run.
 *
 * Disposition on a final status: a connected call (`completed`) keeps the disposition the agent set, else
 * `completed`; a call that did not connect gets its outcome (`busy`, `no_answer`, `voicemail`, `failed`,
 * `canceled`), except that a carrier's `voicemail` (its AMD) keeps a disposition the agent already set (the session
 * left a message, `voicemail_left`, or hung up on the machine itself); a disposition the event carries
 * (Callplane's own decision, `agent_not_configured`) replaces both.
 *
 * Carrier AMD (docs/voicemail.md): an event carrying `amd` for a run that is not final is first told to the
 * listeners' `onCarrierAmd` (the voice module hands it to the run's live session), whether or not its status
 * then moves the run.
 *
 * Another call's event is never applied (`provider_call_id_mismatch`, logged): an event naming a provider call id
 * other than the one the run recorded (nor naming it among its `callIds`), or one already recorded by another
 * run of the provider (a correctly
 * signed callback of run A posted to run B's status URL). A run with no recorded id records the first one an
 * event carries; a recorded id is never overwritten (`isAnotherCall`, enforced again atomically by the
 * repository). This holds for every carrier because every status reaches this use case.
 *
 * Duration: one bound for every source (`callDurationProblem`, 0..86,400 s). A final status carrying a duration
 * outside it is still applied, without the duration (and so without a charge), and the reason is logged.
 *
 * Cost on a final status with a duration: `cost_info.charge_usd` = duration × the organization's per-minute price
 * at that moment (`chargeFor`, issue 6), read from `settings` when given; a failed price read is logged and leaves
 * the charge at 0 rather than losing the status.
 *
 * Customer webhooks (docs/webhooks.md): an applied `in_progress` publishes `call.started`, an applied final status
 * `call.ended` (after the outcome listeners, so the run is as final as it gets). Applied means it moved the run
 * forward, so a duplicate callback publishes nothing. The event is first stored as a marker on the run by the same
 * atomic write as the status (`RunStatusUpdate.event`), so a crash before its deliveries are stored loses nothing:
 * the webhook sweep publishes the marker. Publishing stores the deliveries and returns; it never throws.
 */
export class ApplyCallStatus {
  constructor(
    private readonly runs: RunRepository,
    private readonly listeners: CallOutcomeListeners,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly settings?: Pick<OrganizationSettingsRepository, 'get'>,
    private readonly events?: EventPublisher,
  ) {}

  async execute(provider: string, event: NormalizedCallEvent, runId?: number): Promise<ApplyCallStatusResult> {
    if (event.kind !== 'status') return { applied: false, reason: 'stale_or_duplicate', run: null };
    const run = await this.findRun(provider, event, runId ?? event.runId);
    if (!run) {
      this.log.info({ provider, run_id: runId ?? event.runId ?? null, provider_call_id: event.providerCallId ?? null, status: event.status }, 'call status for an unknown run ignored');
      return { applied: false, reason: 'run_not_found', run: null };
    }
    if (isAnotherCall(run, event.providerCallId, event.callIds)) return this.anotherCall(provider, run, event.providerCallId!);
    if (event.amd && !isFinalRunStatus(run.status)) await this.tellCarrierAmd(run, event.amd);
    const final = isFinalRunStatus(event.status);
    const outcome = final ? outcomeOf(event) : null;
    // providers map their own final states; the run's final status follows from the outcome, one rule for all
    const update: RunStatusUpdate = { status: final && outcome ? finalRunStatusFor(outcome) : event.status, at: event.at ?? this.clock.now() };
    // the recorded id stays (the event may have matched it through `callIds`); a run without one records the event's
    const providerCallId = run.providerCallId ?? event.providerCallId;
    if (providerCallId) update.providerCallId = providerCallId;
    if (final && outcome) {
      const agentSet = run.gatheredContext.mapped_call_disposition;
      // a machine the carrier reports on a call the agent already ended (`voicemail`, `voicemail_left`) keeps the agent's word
      const agent = typeof agentSet === 'string' && agentSet ? agentSet : null;
      const disposition = event.disposition ?? (outcome === 'completed' ? (agent ?? 'completed') : outcome === 'voicemail' && agent ? agent : outcome);
      update.disposition = disposition;
      update.gatheredContext = { mapped_call_disposition: disposition };
    }
    const durationProblem = event.durationSeconds === undefined ? null : callDurationProblem(event.durationSeconds);
    if (durationProblem) {
      this.log.warn({ provider, run_id: run.id, duration_seconds: String(event.durationSeconds).slice(0, 32), reason: durationProblem }, 'call duration ignored');
    }
    if (final && event.durationSeconds !== undefined && !durationProblem) {
      update.durationSeconds = event.durationSeconds;
      update.costInfo = { call_duration_seconds: event.durationSeconds };
      const charge = await this.chargeOf(run, event.durationSeconds);
      if (charge !== null) update.costInfo.charge_usd = charge;
    }
    // the customer event's marker, stored with the status in one atomic step (docs/webhooks.md "Guarantees")
    const eventType = !this.events || isFinalRunStatus(run.status) ? null : final && outcome ? 'call.ended' : event.status === 'in_progress' ? 'call.started' : null;
    if (eventType) update.event = { key: runEventKey(run.id, eventType), type: eventType, at: update.at };
    update.log = {
      ts: update.at.toISOString(),
      event: `call_${event.status}`,
      ...(event.detail ? { message: event.detail } : {}),
      details: { provider, ...(outcome ? { outcome } : {}), ...(event.providerCallId ? { provider_call_id: event.providerCallId } : {}) },
    };
    let result: Awaited<ReturnType<RunRepository['applyStatus']>>;
    try {
      result = await this.runs.applyStatus(run.organizationId, run.id, update);
    } catch (e) {
      // the event's call id is already another run's: that run's event, not this one's
      if (e instanceof ConflictError && e.code === 'provider_call_id_taken') return this.anotherCall(provider, run, event.providerCallId!);
      throw e;
    }
    if (!result.applied && result.run && isAnotherCall(result.run, event.providerCallId, event.callIds)) return this.anotherCall(provider, result.run, event.providerCallId!);
    if (!result.applied || !result.run) return { applied: false, reason: result.run ? 'stale_or_duplicate' : 'run_not_found', run: result.run };
    if (final && outcome) {
      const finished = listenerOutcome(outcome, result.run.disposition);
      for (const l of this.listeners.all()) {
        try {
          await l.onRunFinished(result.run, finished);
        } catch (e) {
          this.log.error({ run_id: run.id, err: (e as Error)?.message }, 'call outcome listener failed');
        }
      }
      if (update.event) await this.events?.publish({ type: 'call.ended', organizationId: run.organizationId, run: result.run, pending: update.event });
    } else if (event.status === 'in_progress' && update.event) {
      await this.events?.publish({ type: 'call.started', organizationId: run.organizationId, run: result.run, pending: update.event });
    }
    return { applied: true, run: result.run, outcome };
  }

  /** The carrier's AMD verdict to the listeners (the run's live voice session, docs/voicemail.md); failures logged. */
  private async tellCarrierAmd(run: Run, amd: NonNullable<(NormalizedCallEvent & { kind: 'status' })['amd']>): Promise<void> {
    for (const l of this.listeners.all()) {
      if (!l.onCarrierAmd) continue;
      try {
        await l.onCarrierAmd(run, amd);
      } catch (e) {
        this.log.error({ run_id: run.id, err: (e as Error)?.message }, 'carrier AMD listener failed');
      }
    }
  }

  private anotherCall(provider: string, run: Run, providerCallId: string): ApplyCallStatusResult {
    this.log.warn(
      { provider, run_id: run.id, provider_call_id: providerCallId.slice(0, 64), recorded_provider_call_id: run.providerCallId },
      'call status of another call ignored: its provider call id is not the run\'s',
    );
    return { applied: false, reason: 'provider_call_id_mismatch', run };
  }

  private async chargeOf(run: Run, durationSeconds: number): Promise<number | null> {
    if (!this.settings) return null;
    try {
      return chargeFor(durationSeconds, (await this.settings.get(run.organizationId)).pricePerMinuteUsd);
    } catch (e) {
      this.log.error({ run_id: run.id, err: (e as Error)?.message }, 'organization price unavailable: run charged 0');
      return null;
    }
  }

  private async findRun(provider: string, event: NormalizedCallEvent & { kind: 'status' }, runId: number | undefined): Promise<Run | null> {
    if (runId !== undefined) {
      const run = await this.runs.findForProviderEvent(runId);
      // a run placed through another provider is not this event's run
      if (run && run.provider !== null && run.provider !== provider) return null;
      return run;
    }
    if (event.providerCallId) return this.runs.findByProviderCallId(provider, event.providerCallId);
    return null;
  }
}
