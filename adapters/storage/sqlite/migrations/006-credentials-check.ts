import type { Migration } from './migration.js';

/**
 * The provider's answer to a telephony configuration's credentials check (API.md section 5
 * `credentials_check`): all three null until checked. `credentials_check_ok` is 1 when the provider accepted
 * the credentials, the fact that lets a configuration's number claims outrank unproven ones.
 */
export const credentialsCheckMigration: Migration = {
  version: 6,
  name: 'telephony-credentials-check',
  up(db) {
    db.exec(`
      ALTER TABLE telephony_configurations ADD COLUMN credentials_check_ok INTEGER;
      ALTER TABLE telephony_configurations ADD COLUMN credentials_check_message TEXT;
      ALTER TABLE telephony_configurations ADD COLUMN credentials_checked_at INTEGER;
    `);
  },
};
