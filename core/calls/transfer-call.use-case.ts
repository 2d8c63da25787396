import { NotFoundError } from '../errors.js';
import type { CallTransfer, TransferCallOutcome, TransferCallRequest } from '../ports/call-transfer.port.js';
import type { Clock } from '../ports/clock.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import type { TelephonyProvider, TransferResult } from '../ports/telephony-provider.port.js';
import type { Run, RunLogEntry } from '../runs/run.js';
import { canTransfer } from '../telephony/provider-manifest.js';
import type { TelephonyConfiguration } from '../telephony/telephony-configuration.js';
import type { CallUrls } from './call-urls.js';
import { parseTransferTarget } from './transfer-target.js';

/** How long a transfer target may ring (seconds) unless configured otherwise. */
export const DEFAULT_TRANSFER_RING_SECONDS = 30;

export interface TransferCallDeps {
  runs: Pick<RunRepository, 'get' | 'applyStatus'>;
  configurations: Pick<TelephonyConfigurationRepository, 'get'>;
  /** The live provider instance of a configuration (`ProviderInstances`). */
  instances: { forConfiguration(configuration: TelephonyConfiguration): TelephonyProvider };
  urls: Pick<CallUrls, 'transferAnswer' | 'status'>;
  clock: Clock;
  log: Logger;
  ringTimeoutSeconds?: number;
}

/**
 * Hands a live call over to a person (API.md 15, docs/voice.md "Transfers"); the `CallTransfer` port the voice
 * session calls once an endCall node's last words were heard.
 *
 * The run (tenant-scoped) → the target parsed (`invalid_target` otherwise) → the run's configuration → its provider
 * instance; a provider whose manifest lacks `capabilities.transfer` (or has no `transfer`) fails
 * `transfer_unsupported` without a carrier request → `provider.transfer(providerCallId, target, {answerUrl:
 * CallUrls.transferAnswer(...), ...})`. A provider that throws despite its contract counts as `unreachable`.
 *
 * Recorded through `RunRepository.applyStatus` (status `in_progress`, so a still-live run stays live and an ended
 * one keeps its final status): disposition `transferred` with `gathered_context.transfer_to` and `transferred_at`,
 * or `transfer_failed` with `transfer_to` and `transfer_failure_reason`; a run log entry `call_transferred` /
 * `transfer_failed` holds the carrier's words. Which disposition wins against the carrier's later final status
 * (`completed` when the caller's leg ends) is the one rule of core/runs/disposition-precedence.ts.
 */
export class TransferCall implements CallTransfer {
  constructor(private readonly deps: TransferCallDeps) {}

  async transfer(request: TransferCallRequest): Promise<TransferCallOutcome> {
    const run = await this.deps.runs.get(request.organizationId, request.runId);
    if (!run) throw new NotFoundError('run_not_found', 'Run not found');
    const target = parseTransferTarget(request.to);
    const to = target?.address ?? request.to;
    let result: TransferResult;
    if (!target) {
      result = { ok: false, reason: 'invalid_target', detail: `'${request.to.slice(0, 80)}' is neither an E.164 number nor a SIP URI` };
    } else if (request.callerGone) {
      result = { ok: false, reason: 'caller_hung_up', detail: 'the caller hung up before the hand-over' };
    } else {
      result = await this.askProvider(run, target);
    }
    return this.record(run, to, result);
  }

  private async askProvider(run: Run, target: NonNullable<ReturnType<typeof parseTransferTarget>>): Promise<TransferResult> {
    if (!run.providerCallId || run.telephonyConfigurationId === null || !run.provider) {
      return { ok: false, reason: 'call_not_active', detail: 'the run has no live carrier call' };
    }
    const configuration = await this.deps.configurations.get(run.organizationId, run.telephonyConfigurationId);
    if (!configuration) return { ok: false, reason: 'transfer_unsupported', detail: 'the run\'s telephony configuration no longer exists' };
    let provider: TelephonyProvider;
    try {
      provider = this.deps.instances.forConfiguration(configuration);
    } catch (e) {
      return { ok: false, reason: 'transfer_unsupported', detail: (e as Error)?.message ?? 'provider not available' };
    }
    if (!canTransfer(provider.manifest) || typeof provider.transfer !== 'function') {
      return { ok: false, reason: 'transfer_unsupported', detail: `${provider.manifest.displayName} cannot transfer calls` };
    }
    try {
      return await provider.transfer(run.providerCallId, target, {
        runId: run.id,
        answerUrl: this.deps.urls.transferAnswer(run.provider, run.id, target.address),
        statusCallbackUrl: this.deps.urls.status(run.provider, run.id),
        callerId: callerIdOf(run),
        ringTimeoutSeconds: this.deps.ringTimeoutSeconds ?? DEFAULT_TRANSFER_RING_SECONDS,
      });
    } catch (e) {
      return { ok: false, reason: 'unreachable', detail: (e as Error)?.message ?? String(e) };
    }
  }

  private async record(run: Run, to: string, result: TransferResult): Promise<TransferCallOutcome> {
    const at = this.deps.clock.now();
    const details: Record<string, unknown> = { to, provider: run.provider };
    let log: RunLogEntry;
    let outcome: TransferCallOutcome;
    let gatheredContext: Record<string, unknown>;
    if (result.ok) {
      outcome = { disposition: 'transferred', to };
      gatheredContext = { transfer_to: to, transferred_at: at.toISOString() };
      log = { ts: at.toISOString(), event: 'call_transferred', message: `Transferred to ${to}${result.detail ? ` (${result.detail})` : ''}`, details };
    } else {
      outcome = { disposition: 'transfer_failed', to, reason: result.reason, ...(result.detail ? { detail: result.detail } : {}) };
      gatheredContext = { transfer_to: to, transfer_failure_reason: result.reason };
      log = {
        ts: at.toISOString(),
        event: 'transfer_failed',
        message: `Transfer to ${to} failed: ${result.reason}${result.detail ? ` (${result.detail})` : ''}`,
        details: { ...details, reason: result.reason },
      };
    }
    const applied = await this.deps.runs.applyStatus(run.organizationId, run.id, {
      status: 'in_progress',
      disposition: outcome.disposition,
      gatheredContext,
      log,
      at,
    });
    const level = result.ok ? 'info' : 'warn';
    this.deps.log[level](
      { run_id: run.id, provider: run.provider, to, ...(result.ok ? {} : { reason: result.reason }), recorded: applied.applied },
      result.ok ? 'call transferred' : 'call transfer failed',
    );
    return outcome;
  }
}

/** The number the caller sees on the new leg: the number they dialed (inbound) or our caller id (outbound). */
function callerIdOf(run: Run): string | null {
  return run.mode === 'inbound' ? run.calledNumber : run.callerNumber;
}
