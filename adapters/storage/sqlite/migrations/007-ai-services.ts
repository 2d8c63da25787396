import type { Migration } from './migration.js';

/**
 * AI services (API.md 10): one model-provider account per row, stored like telephony configurations.
 * - `name_key` is the name lower-cased by the application (Unicode-aware): unique per organization.
 * - Credentials: `settings` holds the clear fields (JSON), `secrets` the SecretCipher ciphertexts (JSON).
 */
export const aiServicesMigration: Migration = {
  version: 7,
  name: 'ai-services',
  up(db) {
    db.exec(`
      CREATE TABLE ai_services (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        name TEXT NOT NULL,
        name_key TEXT NOT NULL,
        provider TEXT NOT NULL,
        secrets_key_id TEXT NOT NULL,
        settings TEXT NOT NULL,
        secrets TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX ai_services_name ON ai_services (organization_id, name_key);
      CREATE INDEX ai_services_org_created ON ai_services (organization_id, created_at, id);
    `);
  },
};
