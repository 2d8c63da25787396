/**
 * Counts attempts per key inside a sliding window (login throttling). An attempt is reserved before the
 * work it guards (password verification), so parallel attempts cannot all pass a check made before any of
 * them was counted: the check and the count are one atomic step.
 */
export const RateLimiter = Symbol.for('callplane.RateLimiter');
export interface RateLimiter {
  /**
   * Counts one attempt for `key` at `now` when fewer than the limit are counted in the window, and returns 0;
   * otherwise counts nothing and returns the seconds until `key` may try again (≥ 1). Check and count are
   * atomic (no two callers can both take the last slot). Not idempotent: each call reserves one attempt.
   * Never throws.
   */
  reserve(key: string, now: Date): Promise<number>;
  /**
   * Takes back one attempt reserved for `key` at `now` (the guarded work succeeded, so it is not a failure).
   * Does nothing when no such attempt is counted. Never throws.
   */
  release(key: string, now: Date): Promise<void>;
  /** Forgets every attempt of `key` (after a success). Idempotent. Never throws. */
  reset(key: string): Promise<void>;
}
