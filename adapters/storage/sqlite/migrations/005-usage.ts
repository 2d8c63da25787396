import type { Migration } from './migration.js';

/**
 * Usage reporting and cost accounting (issue 6).
 *
 * The duration the report shows, sums and filters on is `COALESCE(duration_seconds, 0)` (a run still in progress
 * counts as 0): the indexes hold the plain `duration_seconds` column, so `TOTAL(duration_seconds)` (which skips
 * NULLs) and the COALESCE in a range filter are both computed from the index entry. (A VIRTUAL generated column
 * in the index made SQLite 3.53 stop treating the index as covering.)
 *
 * The report's index is covering: every column its WHERE and its totals read is in the index, so the count and the
 * sums over all matching runs never touch the table (a 90-day window of 1M runs is one index range scan), and the
 * page boundary of a deep page is found in the index (see usage.sqlite.ts) before one keyset seek:
 * - runs_usage_created  (org, created_at, id, duration, tokens, mode, called, caller, disposition, campaign, workflow):
 *                       any filter mix, in the report's order; the window bounds the work
 * Only this one: it grows at its end as runs are created (created_at order), so it costs the write path little.
 * Narrower covering indexes led by campaign_id, workflow_id or disposition were measured and dropped: their
 * scattered inserts and updates cut the dispatch benchmark from about 1,050 to 690 calls/s, while the wide index
 * alone keeps every filter mix inside the report's targets (docs/benchmarks.md).
 *
 * `organization_settings`: one row per organization once its settings were written (absent = defaults).
 */
export const usageMigration: Migration = {
  version: 5,
  name: 'usage',
  up(db) {
    db.exec(`
      CREATE INDEX runs_usage_created ON runs (organization_id, created_at, id, duration_seconds, service_token_usage,
        mode, called_number, caller_number, disposition, campaign_id, workflow_id);

      CREATE TABLE organization_settings (
        organization_id INTEGER PRIMARY KEY REFERENCES organizations(id),
        price_per_minute_usd REAL NOT NULL DEFAULT 0 CHECK (price_per_minute_usd >= 0),
        updated_at INTEGER NOT NULL
      );
    `);
  },
};
