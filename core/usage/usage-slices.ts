import { EMPTY_USAGE_TOTALS, type UsageTotals } from './usage.js';

/**
 * Deep usage pages without OFFSET scans, the store-neutral part: a date range (created_at in ms, both ends
 * inclusive) is cut into time slices whose totals the store counts from its index; the slice holding the page
 * boundary is cut again until it is small enough for an index-only offset. Stores supply the counting and
 * the final offset; these pure steps are shared by the SQLite and MongoDB adapters.
 */
export interface UsageSlice {
  lo: number;
  hi: number;
  totals: UsageTotals;
}

/** [lo, hi] cut into up to `count` contiguous ranges, newest first (the report's order). */
export function sliceRanges(lo: number, hi: number, count: number): Array<{ lo: number; hi: number }> {
  const width = hi - lo + 1;
  const n = Math.min(count, width);
  const bounds: number[] = [];
  for (let k = 0; k <= n; k++) bounds.push(lo + Math.floor((width * k) / n));
  const ranges: Array<{ lo: number; hi: number }> = [];
  for (let k = n - 1; k >= 0; k--) ranges.push({ lo: bounds[k]!, hi: bounds[k + 1]! - 1 });
  return ranges;
}

/** The totals of several slices. */
export function sumUsageTotals(slices: UsageSlice[]): UsageTotals {
  return slices.reduce<UsageTotals>((t, s) => ({
    count: t.count + s.totals.count,
    serviceTokens: t.serviceTokens + s.totals.serviceTokens,
    durationSeconds: t.durationSeconds + s.totals.durationSeconds,
  }), { ...EMPTY_USAGE_TOTALS });
}

/**
 * The slice (newest first) holding the `offset`-th match and the offset inside it, and whether that slice is
 * final: small enough (at most `threshold` matches) or one millisecond wide. `offset` must be below the
 * slices' total count.
 */
export function sliceAtOffset(slices: UsageSlice[], offset: number, threshold: number): { slice: UsageSlice; rest: number; final: boolean } {
  let i = 0;
  let rest = offset;
  while (rest >= slices[i]!.totals.count) rest -= slices[i++]!.totals.count;
  const slice = slices[i]!;
  return { slice, rest, final: slice.totals.count <= threshold || slice.lo === slice.hi };
}
