/**
 * Vonage Voice call events (`status` of the event webhook and of GET /v1/calls/{uuid}) → our run status and
 * call outcome. A table, to check against https://developer.vonage.com/en/voice/voice-api/webhook-reference#event-webhook.
 *
 * Busy, unanswered, voicemail and cancelled calls end the run as `completed` with that outcome as their
 * disposition (API.md section 6: not failures); only a call that could not be made ends `failed`.
 * `machine` is final: calls are placed with `machine_detection: hangup`, so Vonage hangs up on a machine.
 */
import type { RunStatus } from '../../core/runs/run.js';
import type { CallOutcome } from '../../core/ports/telephony-provider.port.js';

export interface VonageStatusMapping {
  status: RunStatus;
  outcome?: CallOutcome;
}

export const VONAGE_CALL_STATUS: Readonly<Record<string, VonageStatusMapping>> = {
  started: { status: 'queued' },
  ringing: { status: 'ringing' },
  answered: { status: 'in_progress' },
  human: { status: 'in_progress' },
  machine: { status: 'completed', outcome: 'voicemail' },
  completed: { status: 'completed', outcome: 'completed' },
  busy: { status: 'completed', outcome: 'busy' },
  rejected: { status: 'completed', outcome: 'busy' },
  timeout: { status: 'completed', outcome: 'no_answer' },
  unanswered: { status: 'completed', outcome: 'no_answer' },
  cancelled: { status: 'completed', outcome: 'canceled' },
  failed: { status: 'failed', outcome: 'failed' },
};

/** The mapping of a Vonage status; undefined for one this table does not know (the event is then ignored). */
export function mapVonageStatus(status: string): VonageStatusMapping | undefined {
  return VONAGE_CALL_STATUS[status.trim().toLowerCase()];
}
