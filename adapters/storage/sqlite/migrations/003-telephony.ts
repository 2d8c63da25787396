import type { Migration } from './migration.js';

/**
 * Telephony configurations and their phone numbers (API.md section 5).
 * - `name_key` is the name lower-cased by the application (Unicode-aware, unlike NOCASE): unique per organization.
 * - At most one default outbound configuration per organization and one default caller id per configuration
 *   (partial unique indexes).
 * - Numbers carry their configuration's provider and account id so that (provider, account_id,
 *   address_normalized) is unique across organizations (inbound dispatch key), and address_normalized is
 *   unique within an organization.
 * - Credentials: `settings` holds the clear fields (JSON), `secrets` the SecretCipher ciphertexts (JSON).
 */
export const telephonyMigration: Migration = {
  version: 3,
  name: 'telephony',
  up(db) {
    db.exec(`
      CREATE TABLE telephony_configurations (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        name TEXT NOT NULL,
        name_key TEXT NOT NULL,
        provider TEXT NOT NULL,
        is_default_outbound INTEGER NOT NULL DEFAULT 0,
        account_id TEXT NOT NULL,
        secrets_key_id TEXT NOT NULL,
        settings TEXT NOT NULL,
        secrets TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX telephony_configurations_name ON telephony_configurations (organization_id, name_key);
      CREATE UNIQUE INDEX telephony_configurations_default ON telephony_configurations (organization_id) WHERE is_default_outbound = 1;
      CREATE INDEX telephony_configurations_provider ON telephony_configurations (provider, account_id);

      CREATE TABLE phone_numbers (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        telephony_configuration_id INTEGER NOT NULL REFERENCES telephony_configurations(id) ON DELETE CASCADE,
        provider TEXT NOT NULL,
        account_id TEXT NOT NULL,
        address TEXT NOT NULL,
        address_normalized TEXT NOT NULL,
        address_type TEXT NOT NULL,
        country_code TEXT,
        label TEXT,
        is_active INTEGER NOT NULL DEFAULT 1,
        is_default_caller_id INTEGER NOT NULL DEFAULT 0,
        extra_metadata TEXT NOT NULL DEFAULT '{}',
        inbound_workflow_id INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX phone_numbers_org_address ON phone_numbers (organization_id, address_normalized);
      CREATE UNIQUE INDEX phone_numbers_dispatch ON phone_numbers (provider, account_id, address_normalized);
      CREATE UNIQUE INDEX phone_numbers_default_caller ON phone_numbers (telephony_configuration_id) WHERE is_default_caller_id = 1;
      CREATE INDEX phone_numbers_config ON phone_numbers (organization_id, telephony_configuration_id, id);
    `);
  },
};
