/**
 * How a call's voice session hands the caller over (docs/voice.md "Transfers"): when the conversation ended at an
 * endCall node with `transfer_to` (the engine's `ended` event carries `transfer: {to, valid}`), the session calls
 * `transfer` once the last words were heard, instead of hanging up. Implemented by `TransferCall`
 * (core/calls/transfer-call.use-case.ts).
 */
export const CallTransfer = Symbol.for('callplane.CallTransfer');

export interface TransferCallRequest {
  organizationId: number;
  runId: number;
  /** The rendered target (`ended.transfer.to`): E.164 or a `sip:`/`sips:` URI; anything else fails `invalid_target`. */
  to: string;
  /**
   * True when the caller hung up before the last words were heard: nothing is asked of the carrier and the run
   * ends `transfer_failed` with reason `caller_hung_up`.
   */
  callerGone?: boolean;
}

/** What was recorded on the run. `reason` as `TransferResult` (core/ports/telephony-provider.port.ts). */
export type TransferCallOutcome =
  | { disposition: 'transferred'; to: string }
  | { disposition: 'transfer_failed'; to: string; reason: string; detail?: string };

export interface CallTransfer {
  /**
   * Asks the run's carrier to hand the live call over to `to` and records the outcome on the run: disposition
   * `transferred`, or `transfer_failed` with `gathered_context.transfer_failure_reason` and a run log entry with the
   * carrier's words. A carrier refusal, an unusable target or a carrier without transfers is an outcome, never an
   * error. Throws `NotFoundError('run_not_found')` when the run is not the organization's, and what the run
   * repository throws (`UnavailableError`). Not idempotent at the carrier (a second call may dial again); the run's
   * record is (the same outcome recorded twice changes nothing; a failure is never replaced by a success).
   */
  transfer(request: TransferCallRequest): Promise<TransferCallOutcome>;
}
