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
import type { AmdResult, AmdVerdict } from '../../core/voice/amd/amd-result.js';

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
 * `AnsweredBy` values (answering machine detection, sync on the answer URL or async on
 * `AsyncAmdStatusCallback`; https://www.twilio.com/docs/voice/answering-machine-detection): the verdict, and
 * for `machine_end_*` (MachineDetection=DetectMessageEnd) that the greeting is over, ended by a beep or not.
 * A machine or fax answer turns a connected call's outcome into `voicemail`; `human` and `unknown` leave it.
 */
export const TWILIO_ANSWERED_BY: Readonly<Record<string, { verdict: AmdVerdict; greetingEnded?: { beep: boolean } }>> = {
  human: { verdict: 'human' },
  unknown: { verdict: 'unknown' },
  machine_start: { verdict: 'machine' },
  machine_end_beep: { verdict: 'machine', greetingEnded: { beep: true } },
  machine_end_silence: { verdict: 'machine', greetingEnded: { beep: false } },
  machine_end_other: { verdict: 'machine', greetingEnded: { beep: false } },
  fax: { verdict: 'machine' },
};

/**
 * Twilio's `AnsweredBy` as our `AmdResult` (source `carrier`); null when absent or a value Twilio does not
 * document. `MachineDetectionDuration` (ms), when sent, goes into the reason.
 */
export function twilioAmdResult(answeredBy: string | undefined, durationMs?: string): AmdResult | null {
  const value = answeredBy?.trim().toLowerCase();
  const entry = value ? TWILIO_ANSWERED_BY[value] : undefined;
  if (!entry) return null;
  const took = durationMs && /^\d+$/.test(durationMs) ? ` after ${durationMs} ms` : '';
  return { verdict: entry.verdict, source: 'carrier', reason: `answered_by=${value}${took}`, ...(entry.greetingEnded ? { greetingEnded: entry.greetingEnded } : {}) };
}

/** The mapping of a Twilio status, with AMD applied; undefined for a status Twilio does not define. */
export function mapTwilioStatus(callStatus: string, answeredBy?: string): TwilioStatusMapping | undefined {
  const base = TWILIO_CALL_STATUS[callStatus.trim().toLowerCase()];
  if (!base) return undefined;
  if (base.outcome === 'completed' && answeredBy && isMachineAnswer(answeredBy)) return { status: 'completed', outcome: 'voicemail' };
  return base;
}

export function isMachineAnswer(answeredBy: string | undefined): boolean {
  return twilioAmdResult(answeredBy)?.verdict === 'machine';
}
