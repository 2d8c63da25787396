/**
 * Twilio call statuses (`CallStatus` of status callbacks and of the Calls resource) and answering-machine
 * verdicts (`AnsweredBy`) → our run status and call outcome. A table, so a reviewer can check it against
 * https://www.twilio.com/docs/voice/api/call-resource#call-status-values at a glance.
 *
 * Busy, no-answer, voicemail and canceled calls end the run as `completed` with that outcome as their
 * disposition: they are not failures (API.md section 6: they never trip the circuit breaker); only a call that
 * could not be made ends `failed`.
 */
import type { RunStatus } from '../../core/runs/run.js';
import type { CallOutcome } from '../../core/ports/telephony-provider.port.js';

export interface TwilioStatusMapping {
  status: RunStatus;
  /** Set for final statuses. */
  outcome?: CallOutcome;
}

export const TWILIO_CALL_STATUS: Readonly<Record<string, TwilioStatusMapping>> = {
  queued: { status: 'queued' },
  initiated: { status: 'queued' },
  ringing: { status: 'ringing' },
  'in-progress': { status: 'in_progress' },
  answered: { status: 'in_progress' },
  completed: { status: 'completed', outcome: 'completed' },
  busy: { status: 'completed', outcome: 'busy' },
  'no-answer': { status: 'completed', outcome: 'no_answer' },
  canceled: { status: 'completed', outcome: 'canceled' },
  failed: { status: 'failed', outcome: 'failed' },
};

/**
 * `AnsweredBy` values (answering machine detection). A machine or fax answer turns a connected call's outcome
 * into `voicemail`; `human` and `unknown` leave it as it is.
 */
export const TWILIO_ANSWERED_BY: Readonly<Record<string, 'human' | 'machine' | 'unknown'>> = {
  human: 'human',
  unknown: 'unknown',
  machine_start: 'machine',
  machine_end_beep: 'machine',
  machine_end_silence: 'machine',
  machine_end_other: 'machine',
  fax: 'machine',
};

/** The mapping of a Twilio status, with AMD applied; undefined for a status Twilio does not define. */
export function mapTwilioStatus(callStatus: string, answeredBy?: string): TwilioStatusMapping | undefined {
  const base = TWILIO_CALL_STATUS[callStatus.trim().toLowerCase()];
  if (!base) return undefined;
  if (base.outcome === 'completed' && answeredBy && isMachineAnswer(answeredBy)) return { status: 'completed', outcome: 'voicemail' };
  return base;
}

export function isMachineAnswer(answeredBy: string | undefined): boolean {
  return answeredBy !== undefined && TWILIO_ANSWERED_BY[answeredBy.trim().toLowerCase()] === 'machine';
}
