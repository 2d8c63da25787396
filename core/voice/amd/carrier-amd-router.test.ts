import { describe, expect, it } from '@jest/globals';
import type { AmdResult } from './amd-result.js';
import { CarrierAmdRouter } from './carrier-amd-router.js';

const verdict = (reason: string): AmdResult => ({ verdict: 'machine', source: 'carrier', reason });

describe('CarrierAmdRouter', () => {
  it('hands a verdict to the run\'s live session, and to no other run\'s', () => {
    const router = new CarrierAmdRouter();
    const got: string[] = [];
    const off = router.register(7, (r) => got.push(`7:${r.reason}`));
    router.register(8, (r) => got.push(`8:${r.reason}`));
    expect(router.deliver(7, verdict('a'))).toBe(true);
    expect(got).toEqual(['7:a']);
    off();
    off();
    expect(router.live).toBe(1);
    expect(router.deliver(7, verdict('b'))).toBe(false);
    expect(got).toEqual(['7:a']);
  });

  it('keeps verdicts that beat their session for pendingMs, in order, and drops stale ones and the oldest runs past maxPending', () => {
    let now = 0;
    const router = new CarrierAmdRouter({ pendingMs: 1000, maxPending: 2, now: () => now });
    router.deliver(1, verdict('first'));
    router.deliver(1, verdict('second'));
    const got: string[] = [];
    router.register(1, (r) => got.push(r.reason));
    expect(got).toEqual(['first', 'second']);
    router.deliver(2, verdict('old'));
    now = 1500;
    router.register(2, (r) => got.push(r.reason));
    expect(got).toEqual(['first', 'second']);
    for (const run of [3, 4, 5]) router.deliver(run, verdict(`r${run}`));
    router.register(3, (r) => got.push(r.reason));
    router.register(5, (r) => got.push(r.reason));
    expect(got).toEqual(['first', 'second', 'r5']);
  });

  it('a throwing session does not break the status path', () => {
    const router = new CarrierAmdRouter();
    router.register(1, () => { throw new Error('boom'); });
    expect(router.deliver(1, verdict('x'))).toBe(true);
  });
});
