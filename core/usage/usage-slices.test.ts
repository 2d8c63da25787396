import { describe, expect, it } from '@jest/globals';
import { sliceAtOffset, sliceRanges, sumUsageTotals, type UsageSlice } from './usage-slices.js';

const slice = (lo: number, hi: number, count: number): UsageSlice => ({ lo, hi, totals: { count, serviceTokens: count * 2, durationSeconds: count * 3 } });

describe('usage slices', () => {
  it('cuts a range into contiguous slices, newest first, covering every millisecond once', () => {
    const r = sliceRanges(1000, 1099, 16);
    expect(r).toHaveLength(16);
    expect(r[0]!.hi).toBe(1099);
    expect(r[r.length - 1]!.lo).toBe(1000);
    for (let i = 1; i < r.length; i++) expect(r[i]!.hi).toBe(r[i - 1]!.lo - 1);
    expect(sliceRanges(5, 7, 16)).toEqual([{ lo: 7, hi: 7 }, { lo: 6, hi: 6 }, { lo: 5, hi: 5 }]);
  });

  it('sums totals and finds the slice holding an offset', () => {
    const slices = [slice(90, 99, 3), slice(80, 89, 0), slice(70, 79, 10), slice(60, 69, 2)];
    expect(sumUsageTotals(slices)).toEqual({ count: 15, serviceTokens: 30, durationSeconds: 45 });
    expect(sliceAtOffset(slices, 0, 4)).toEqual({ slice: slices[0], rest: 0, final: true });
    expect(sliceAtOffset(slices, 3, 4)).toEqual({ slice: slices[2], rest: 0, final: false });
    expect(sliceAtOffset(slices, 12, 4)).toEqual({ slice: slices[2], rest: 9, final: false });
    expect(sliceAtOffset(slices, 14, 4)).toEqual({ slice: slices[3], rest: 1, final: true });
    expect(sliceAtOffset([slice(5, 5, 100)], 50, 4).final).toBe(true);
  });
});
