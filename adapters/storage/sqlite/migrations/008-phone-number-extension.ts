import type { Migration } from './migration.js';

/**
 * The extension of a `pstn` phone number written with one (`+1 650 253 0000 ext. 1234`, `tel:...;ext=456`):
 * `address_normalized` stays the E.164 number (uniqueness and inbound matching are unchanged) and the digits
 * are kept here. NULL for every number stored before, and for numbers without an extension.
 */
export const phoneNumberExtensionMigration: Migration = {
  version: 8,
  name: 'phone-number-extension',
  up(db) {
    db.exec('ALTER TABLE phone_numbers ADD COLUMN extension TEXT;');
  },
};
