import type { Migration } from './migration.js';

/**
 * Event webhooks (API.md 14): endpoints per organization and the deliveries stored before they are sent (the
 * outbox). `events` is a JSON array; the secret is a SecretCipher ciphertext. A delivery keeps its whole body;
 * `(status, next_attempt_at)` serves the sender's claim of due deliveries, `lease_until`/`lease_token` its claim.
 */
export const webhooksMigration: Migration = {
  version: 10,
  name: 'webhooks',
  up(db) {
    db.exec(`
      CREATE TABLE webhook_endpoints (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        description TEXT,
        secret TEXT NOT NULL,
        secrets_key_id TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX webhook_endpoints_org ON webhook_endpoints (organization_id, id);
      CREATE TABLE webhook_deliveries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        endpoint_id INTEGER NOT NULL,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL,
        last_status_code INTEGER,
        last_error TEXT,
        next_attempt_at INTEGER,
        lease_until INTEGER,
        lease_token TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at, id);
      CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (organization_id, endpoint_id, id);
    `);
  },
};
