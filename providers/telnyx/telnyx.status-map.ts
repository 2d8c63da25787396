/**
 * Telnyx Call Control webhooks → our run status and call outcome, as tables a reviewer can check against
 * https://developers.telnyx.com/api-reference/callbacks (call.initiated, call.answered, call.hangup with its
 * `hangup_cause`, call.machine.detection.ended with its `result`).
 *
 * Busy, no-answer, voicemail and canceled calls end the run as `completed` with that outcome as their
 * disposition (they are not failures, API.md section 6); only a call that could not be made ends `failed`.
 */
import type { RunStatus } from '../../core/runs/run.js';
import type { CallOutcome } from '../../core/ports/telephony-provider.port.js';
import type { AmdResult } from '../../core/voice/amd/amd-result.js';

export interface TelnyxStatusMapping {
  status: RunStatus;
  outcome?: CallOutcome;
}

/**
 * Progress events. Telnyx sends no separate "ringing" event for a dialed call: `call.initiated` is sent when
 * the INVITE goes out, i.e. when the far end starts ringing.
 */
export const TELNYX_PROGRESS_EVENTS: Readonly<Record<string, TelnyxStatusMapping>> = {
  'call.initiated': { status: 'ringing' },
  'call.answered': { status: 'in_progress' },
  'streaming.started': { status: 'in_progress' },
};

/** `hangup_cause` of `call.hangup`. A call that was answered and then hung up normally is `completed`. */
export const TELNYX_HANGUP_CAUSE: Readonly<Record<string, TelnyxStatusMapping>> = {
  normal_clearing: { status: 'completed', outcome: 'completed' },
  time_limit: { status: 'completed', outcome: 'completed' },
  user_busy: { status: 'completed', outcome: 'busy' },
  call_rejected: { status: 'completed', outcome: 'busy' },
  timeout: { status: 'completed', outcome: 'no_answer' },
  no_answer: { status: 'completed', outcome: 'no_answer' },
  originator_cancel: { status: 'completed', outcome: 'canceled' },
  not_found: { status: 'failed', outcome: 'failed' },
  unspecified: { status: 'failed', outcome: 'failed' },
};

/** `result` of `call.machine.detection.ended` (and the premium variant's `result`). */
export const TELNYX_AMD_RESULT: Readonly<Record<string, 'human' | 'machine' | 'unknown'>> = {
  human: 'human',
  human_residence: 'human',
  human_business: 'human',
  machine: 'machine',
  fax_detected: 'machine',
  silence: 'unknown',
  not_sure: 'unknown',
};

/** The mapping of a hangup cause; a cause Telnyx does not document ends the call `failed` (the cause goes to `detail`). */
export function mapTelnyxHangup(cause: string | undefined): TelnyxStatusMapping {
  return (cause && TELNYX_HANGUP_CAUSE[cause.trim().toLowerCase()]) || { status: 'failed', outcome: 'failed' };
}

export function mapTelnyxAmd(result: string | undefined): 'human' | 'machine' | 'unknown' {
  return (result && TELNYX_AMD_RESULT[result.trim().toLowerCase()]) || 'unknown';
}

/** The AMD webhooks Telnyx sends (`answering_machine_detection` detect / greeting_end / premium). */
export const TELNYX_AMD_EVENTS = ['call.machine.detection.ended', 'call.machine.premium.detection.ended', 'call.machine.greeting.ended', 'call.machine.premium.greeting.ended'] as const;

/**
 * A Telnyx AMD webhook as our `AmdResult` (source `carrier`), null for any other event:
 * `*.detection.ended` → the verdict of its `result`; `*.greeting.ended` → a machine whose greeting is over
 * (`result` `beep_detected`: ended by a beep; `ended`, `no_beep_detected`, `not_sure`: by silence or Telnyx's timeout).
 */
export function telnyxAmdResult(eventType: string, result: string | undefined): AmdResult | null {
  const value = result?.trim().toLowerCase() || 'unknown';
  if (eventType === 'call.machine.detection.ended' || eventType === 'call.machine.premium.detection.ended') {
    return { verdict: mapTelnyxAmd(value), source: 'carrier', reason: `telnyx ${eventType.includes('premium') ? 'premium ' : ''}result=${value}` };
  }
  if (eventType === 'call.machine.greeting.ended' || eventType === 'call.machine.premium.greeting.ended') {
    return { verdict: 'machine', source: 'carrier', reason: `telnyx greeting ended (${value})`, greetingEnded: { beep: value === 'beep_detected' } };
  }
  return null;
}
