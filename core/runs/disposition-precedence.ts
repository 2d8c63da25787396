/**
 * Which disposition a run keeps when several parts of Callplane report one (docs/voice.md "Transfers"): the
 * conversation (the endCall node's code, `user_idle`, ...), the carrier's final status (`completed`, `busy`, ...),
 * and a transfer's outcome. The one rule, applied by `planRunStatusUpdate` for every storage adapter:
 *
 * - a transfer's outcome outranks how the call otherwise ended: once a run is `transferred` or `transfer_failed`,
 *   the carrier later reporting that the caller's leg completed (or failed, or was canceled) and the agent's own
 *   disposition never replace it;
 * - `transfer_failed` outranks `transferred`: the agent's intent (`transferred`, from the conversation) or an
 *   accepted hand-over that the carrier later reports as failed ends `transfer_failed`; never the reverse;
 * - otherwise the newest disposition wins (a final status replaces the agent's working value, as before).
 *
 * Pure; never throws.
 */

/** The dispositions of a hand-over (API.md 15). */
export const TRANSFER_DISPOSITIONS = ['transferred', 'transfer_failed'] as const;
export type TransferDisposition = (typeof TRANSFER_DISPOSITIONS)[number];

export const isTransferDisposition = (d: string | null | undefined): d is TransferDisposition =>
  d === 'transferred' || d === 'transfer_failed';

/** 0: any ordinary disposition; 1: `transferred`; 2: `transfer_failed`. */
export function dispositionRank(disposition: string | null | undefined): number {
  if (disposition === 'transfer_failed') return 2;
  if (disposition === 'transferred') return 1;
  return 0;
}

/** The disposition a run keeps when `incoming` is reported while it has `current` (see the rule above). */
export function resolveDisposition(current: string | null, incoming: string | null | undefined): string | null {
  if (incoming == null) return current;
  if (current == null) return incoming;
  const [from, to] = [dispositionRank(current), dispositionRank(incoming)];
  if (from === 0) return incoming;
  return to > from ? incoming : current;
}

/**
 * True when `incoming` may still change a run that is already final: only a transfer outcome that the rule lets
 * stand (the hand-over's result may be known after the carrier reported the caller's leg ended).
 */
export function isLateDispositionAllowed(current: string | null, incoming: string | null | undefined): boolean {
  return isTransferDisposition(incoming) && dispositionRank(incoming) >= dispositionRank(current);
}
