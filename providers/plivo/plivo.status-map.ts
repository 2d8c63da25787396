/**
 * Plivo call callbacks → our run status and call outcome, as tables a reviewer can check against Plivo's
 * documentation of `CallStatus` (ring, answer and hangup URLs) and asynchronous machine detection (`Machine`).
 *
 * Busy, no-answer, voicemail and canceled calls end the run as `completed` with that outcome as their
 * disposition (they are not failures, API.md section 6); only a call that could not be made ends `failed`.
 */
import type { RunStatus } from '../../core/runs/run.js';
import type { CallOutcome } from '../../core/ports/telephony-provider.port.js';

export interface PlivoStatusMapping {
  status: RunStatus;
  outcome?: CallOutcome;
}

/** `CallStatus` as Plivo sends it (lower-cased). `timeout`: nobody answered within ring_timeout. */
export const PLIVO_CALL_STATUS: Readonly<Record<string, PlivoStatusMapping>> = {
  queued: { status: 'queued' },
  ringing: { status: 'ringing' },
  'early-media': { status: 'ringing' },
  'in-progress': { status: 'in_progress' },
  answered: { status: 'in_progress' },
  completed: { status: 'completed', outcome: 'completed' },
  busy: { status: 'completed', outcome: 'busy' },
  'no-answer': { status: 'completed', outcome: 'no_answer' },
  timeout: { status: 'completed', outcome: 'no_answer' },
  cancel: { status: 'completed', outcome: 'canceled' },
  canceled: { status: 'completed', outcome: 'canceled' },
  failed: { status: 'failed', outcome: 'failed' },
};

/**
 * Hang-up causes (`HangupCause`, Plivo's names) that tell more than a bare `completed` or `failed`: a call
 * that "completed" without ever being answered is really busy/no-answer/canceled.
 */
export const PLIVO_UNANSWERED_CAUSES: Readonly<Record<string, CallOutcome>> = {
  busy_line: 'busy',
  user_busy: 'busy',
  rejected: 'busy',
  call_rejected: 'busy',
  no_answer: 'no_answer',
  no_user_response: 'no_answer',
  ring_timeout_reached: 'no_answer',
  originator_cancel: 'canceled',
  canceled: 'canceled',
  machine_detected: 'voicemail',
};

/** The mapping of a CallStatus; null for one Plivo does not document. */
export function mapPlivoCallStatus(callStatus: string | undefined): PlivoStatusMapping | null {
  if (!callStatus) return null;
  return PLIVO_CALL_STATUS[callStatus.trim().toLowerCase()] ?? null;
}

/** `HangupCause` normalized (`Busy Line`, `USER_BUSY` → `busy_line`, `user_busy`) → an outcome, when it tells one. */
export function outcomeOfHangupCause(cause: string | undefined): CallOutcome | undefined {
  if (!cause) return undefined;
  return PLIVO_UNANSWERED_CAUSES[cause.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_')];
}

/** `Machine` of machine detection (`true`/`false`). */
export function isPlivoMachine(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  if (v === 'true') return true;
  if (v === 'false') return false;
  return undefined;
}
