import type { RateLimiter } from '../../core/ports/rate-limiter.port.js';

/**
 * Sliding-window attempt counter held in this process's memory: at most `maxAttempts` attempts inside
 * `windowMs`; then a key waits until its oldest attempt leaves the window. `reserve` checks and counts in
 * one synchronous step, so concurrent requests on this process's event loop cannot overtake each other.
 * Several API processes each keep their own counts (the limit applies per process; docs/security.md).
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly attempts = new Map<string, number[]>();
  constructor(
    private readonly maxAttempts = 5,
    private readonly windowMs = 15 * 60_000,
    private readonly maxKeys = 100_000,
  ) {}

  async reserve(key: string, now: Date): Promise<number> {
    const t = now.getTime();
    const list = this.prune(key, t);
    if (list.length >= this.maxAttempts) return Math.max(1, Math.ceil((list[0]! + this.windowMs - t) / 1000));
    list.push(t);
    this.attempts.set(key, list);
    if (this.attempts.size > this.maxKeys) {
      const oldest = this.attempts.keys().next().value;
      if (oldest !== undefined) this.attempts.delete(oldest);
    }
    return 0;
  }

  async release(key: string, now: Date): Promise<void> {
    const list = this.attempts.get(key);
    if (!list) return;
    const i = list.lastIndexOf(now.getTime());
    if (i < 0) return;
    list.splice(i, 1);
    if (list.length === 0) this.attempts.delete(key);
  }

  async reset(key: string): Promise<void> {
    this.attempts.delete(key);
  }

  private prune(key: string, now: number): number[] {
    const list = (this.attempts.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (list.length === 0) this.attempts.delete(key);
    return list;
  }
}
