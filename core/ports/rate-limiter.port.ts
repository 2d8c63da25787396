/** Counts failures per key inside a sliding window (login throttling). */
export const RateLimiter = Symbol.for('callplane.RateLimiter');
export interface RateLimiter {
  /** Seconds until `key` may try again, or 0 when it may now. Never throws. */
  retryAfter(key: string, now: Date): number;
  /** Records one failure for `key`. */
  recordFailure(key: string, now: Date): void;
  /** Forgets `key` (after a success). Idempotent. */
  reset(key: string): void;
}
