import type { UsageCursor, UsageFilter, UsageRecord, UsageTotals } from '../usage/usage.js';

export interface UsagePage {
  /** At most `limit` records, in the report's order (createdAt desc, id desc). */
  records: UsageRecord[];
  /** Over every run matching the filter, not just this page. */
  totals: UsageTotals;
}

/**
 * The usage report's reads over runs (spec 4.9). Read-only, scoped by organization; the filter is
 * store-neutral (`UsageFilter`, whose reference semantics are `matchesUsageFilter`). Order everywhere:
 * createdAt desc, then id desc. Adapters must not scan skipped rows to reach a deep page (SQLite: keyset seek
 * after locating the page boundary through a covering index; MongoDB: a range query on (organization, createdAt,
 * id) plus counts), so page 10,000 costs about what page 1 costs.
 */
export const UsageRepository = Symbol.for('callplane.UsageRepository');
export interface UsageRepository {
  /**
   * Page `page` (≥ 1) of `limit` (≥ 1) matching runs plus the totals over all of them. A page past the end has
   * no records (totals still filled); nothing matching gives zero totals. Never throws for a valid filter.
   * Idempotent (read-only).
   */
  page(organizationId: number, filter: UsageFilter, paging: { page: number; limit: number }): Promise<UsagePage>;
  /**
   * Up to `limit` matching runs strictly after `cursor` in the report's order (from the first when null):
   * how an export walks every matching run without offsets. Empty at the end. Idempotent (read-only).
   */
  after(organizationId: number, filter: UsageFilter, cursor: UsageCursor | null, limit: number): Promise<UsageRecord[]>;
}
