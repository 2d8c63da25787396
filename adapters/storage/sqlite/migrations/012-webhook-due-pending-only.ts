import type { Migration } from './migration.js';

/**
 * The sender's due index holds pending deliveries only (docs/benchmarks.md section 8): the claim and `nextDueAt`
 * read only `status = 'pending'` rows, and most rows are `delivered`. As a partial index, recording a delivery
 * removes its entry instead of moving it inside a growing index (one WAL page fewer per recorded batch here), and
 * the index stays the size of the backlog. Existing databases get it rebuilt once, here.
 */
export const webhookDuePendingOnlyMigration: Migration = {
  version: 12,
  name: 'webhook-due-pending-only',
  up(db) {
    db.exec(`
      DROP INDEX webhook_deliveries_due;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
    `);
  },
};
