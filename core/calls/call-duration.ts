/**
 * The one bound on a call's duration, whoever reports it (a carrier's callback, ARI, the simulator, a
 * reconciler): a whole day at most. A duration outside 0..86,400 s is not a fact about a call; it is a bug or
 * a forgery, and it would be billed (`cost_info.charge_usd` is duration × price). docs/api.md says what
 * happens to one: the simulator's API answers 422 on the field, a carrier's value is dropped and logged.
 */
export const MAX_CALL_DURATION_SECONDS = 86_400;

/** Why `value` is not a call duration in seconds, or null when it is one (a finite number in 0..86,400). Pure. */
export function callDurationProblem(value: unknown): string | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'a call duration must be a finite number of seconds';
  if (value < 0) return 'a call duration cannot be negative';
  if (value > MAX_CALL_DURATION_SECONDS) return `a call duration cannot exceed ${MAX_CALL_DURATION_SECONDS} seconds (one day)`;
  return null;
}
