import type { Migration } from './migration.js';

/**
 * Event webhooks without a lost event (docs/webhooks.md "Guarantees"): a run's or campaign's customer event is
 * stored as a marker in `pending_events` (a JSON array, NULL when none) by the same write that stores the fact,
 * and cleared once its deliveries are stored; the sender's sweep publishes markers a crash left behind.
 * `event_key` makes a marked event's deliveries unique per endpoint, so publishing it again stores nothing new.
 */
export const webhookEventOutboxMigration: Migration = {
  version: 11,
  name: 'webhook-event-outbox',
  up(db) {
    db.exec(`
      ALTER TABLE webhook_deliveries ADD COLUMN event_key TEXT;
      CREATE UNIQUE INDEX webhook_deliveries_event_key ON webhook_deliveries (endpoint_id, event_key) WHERE event_key IS NOT NULL;
      ALTER TABLE runs ADD COLUMN pending_events TEXT;
      CREATE INDEX runs_pending_events ON runs (id) WHERE pending_events IS NOT NULL;
      ALTER TABLE campaigns ADD COLUMN pending_events TEXT;
      CREATE INDEX campaigns_pending_events ON campaigns (id) WHERE pending_events IS NOT NULL;
    `);
  },
};
