import type { RateLimiter } from '../../core/ports/rate-limiter.port.js';

/**
 * Sliding-window failure counter held in this process's memory: after `maxFailures` failures inside
 * `windowMs`, a key waits until its oldest failure leaves the window. Several API processes each keep
 * their own counts (the limit per process); that is documented as the trade-off of having no shared cache.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number[]>();
  constructor(
    private readonly maxFailures = 5,
    private readonly windowMs = 15 * 60_000,
    private readonly maxKeys = 100_000,
  ) {}

  retryAfter(key: string, now: Date): number {
    const list = this.prune(key, now.getTime());
    if (list.length < this.maxFailures) return 0;
    return Math.max(1, Math.ceil((list[0]! + this.windowMs - now.getTime()) / 1000));
  }

  recordFailure(key: string, now: Date): void {
    const list = this.prune(key, now.getTime());
    list.push(now.getTime());
    if (list.length > this.maxFailures) list.shift();
    this.failures.set(key, list);
    if (this.failures.size > this.maxKeys) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
  }

  reset(key: string): void {
    this.failures.delete(key);
  }

  private prune(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((t) => t > now - this.windowMs);
    if (list.length === 0) this.failures.delete(key);
    return list;
  }
}
