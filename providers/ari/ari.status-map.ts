/**
 * Asterisk channel facts → our run status and call outcome. Tables, so they can be checked against Q.850 and
 * Asterisk's `ast_cause2str` at a glance.
 *
 * Busy, no-answer, voicemail and canceled calls end the run `completed` with that outcome as disposition (not
 * failures, API.md section 6); calls that could not be made end `failed`. A channel that had been answered
 * (`Up`) always ends `completed`/`completed`, whatever the clearing cause.
 */
import type { RunStatus } from '../../core/runs/run.js';
import type { CallOutcome } from '../../core/ports/telephony-provider.port.js';

export interface AriStatusMapping {
  status: RunStatus;
  outcome?: CallOutcome;
}

/** Q.850 causes of a channel destroyed before it was answered. */
export const ARI_UNANSWERED_CAUSE: Readonly<Record<number, { outcome: CallOutcome; label: string }>> = {
  1: { outcome: 'failed', label: 'unallocated number' },
  2: { outcome: 'failed', label: 'no route to transit network' },
  3: { outcome: 'failed', label: 'no route to destination' },
  16: { outcome: 'no_answer', label: 'normal clearing before answer' },
  17: { outcome: 'busy', label: 'user busy' },
  18: { outcome: 'no_answer', label: 'no user responding' },
  19: { outcome: 'no_answer', label: 'user alerting, no answer' },
  20: { outcome: 'no_answer', label: 'subscriber absent' },
  21: { outcome: 'busy', label: 'call rejected' },
  22: { outcome: 'failed', label: 'number changed' },
  26: { outcome: 'canceled', label: 'answered elsewhere' },
  27: { outcome: 'failed', label: 'destination out of order' },
  28: { outcome: 'failed', label: 'invalid number format' },
  29: { outcome: 'failed', label: 'facility rejected' },
  31: { outcome: 'failed', label: 'normal, unspecified' },
  34: { outcome: 'failed', label: 'circuit/channel congestion' },
  38: { outcome: 'failed', label: 'network out of order' },
  41: { outcome: 'failed', label: 'temporary failure' },
  42: { outcome: 'failed', label: 'switching equipment congestion' },
  44: { outcome: 'failed', label: 'requested channel not available' },
  47: { outcome: 'failed', label: 'resource unavailable' },
  50: { outcome: 'failed', label: 'facility not subscribed' },
  58: { outcome: 'failed', label: 'bearer capability not available' },
  65: { outcome: 'failed', label: 'bearer capability unimplemented' },
  88: { outcome: 'failed', label: 'incompatible destination' },
  102: { outcome: 'no_answer', label: 'recovery on timer expiry' },
  127: { outcome: 'failed', label: 'interworking, unspecified' },
};

/** Asterisk channel states (`ChannelStateChange`, `GET /channels/{id}`) of a live channel. */
export const ARI_CHANNEL_STATE: Readonly<Record<string, RunStatus>> = {
  Down: 'queued',
  Rsrvd: 'queued',
  OffHook: 'queued',
  Dialing: 'queued',
  Ring: 'ringing',
  Ringing: 'ringing',
  Up: 'in_progress',
  Busy: 'ringing',
  'Dialing Offhook': 'queued',
  'Pre-ring': 'queued',
};

export const outcomeStatus = (outcome: CallOutcome): RunStatus => (outcome === 'failed' ? 'failed' : 'completed');

/**
 * The final mapping of a destroyed channel. `answered`: it had been Up. `hangupRequested`: we asked for the
 * hangup before answer (a canceled call).
 */
export function mapAriHangup(cause: number | undefined, answered: boolean, hangupRequested = false): AriStatusMapping & { label: string } {
  if (answered) return { status: 'completed', outcome: 'completed', label: 'answered call ended' };
  if (hangupRequested) return { status: 'completed', outcome: 'canceled', label: 'hung up by Callplane before answer' };
  const entry = cause === undefined ? undefined : ARI_UNANSWERED_CAUSE[cause];
  if (!entry) return { status: 'failed', outcome: 'failed', label: `unexpected cause ${cause ?? 'none'}` };
  return { status: outcomeStatus(entry.outcome), outcome: entry.outcome, label: entry.label };
}
