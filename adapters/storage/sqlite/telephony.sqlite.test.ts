import { describe, expect, it } from '@jest/globals';
import { runTelephonyRepositoryContract } from '../../../test/contracts/telephony.repository.contract.js';
import { openMigratedSqlite } from './database.js';
import { SqliteIdentityRepository } from './identity.sqlite.js';
import { phoneNumberFromRow, SqlitePhoneNumberRepository } from './phone-number.sqlite.js';
import { SqliteTelephonyConfigurationRepository, telephonyConfigurationFromRow } from './telephony-configuration.sqlite.js';

runTelephonyRepositoryContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  const identity = new SqliteIdentityRepository(db);
  const now = new Date();
  const a = await identity.createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now });
  const b = await identity.createOrganizationWithUser({ organizationName: 'B', email: 'b@x.io', name: null, passwordHash: 'h', now });
  return {
    configurations: new SqliteTelephonyConfigurationRepository(db),
    numbers: new SqlitePhoneNumberRepository(db),
    organizations: [a.organization.id, b.organization.id],
    cleanup: async () => {
      db.close();
    },
  };
});

describe('telephony row mappers', () => {
  it('maps a configuration row', () => {
    expect(telephonyConfigurationFromRow({
      id: 1, organization_id: 2, name: 'N', name_key: 'n', provider: 'simulator', is_default_outbound: 1, account_id: 'a', secrets_key_id: 'k',
      settings: '{"x":1}', secrets: '{"s":"c"}', created_at: 1000, updated_at: 2000,
      credentials_check_ok: null, credentials_check_message: null, credentials_checked_at: null,
    })).toEqual({
      id: 1, organizationId: 2, name: 'N', provider: 'simulator', isDefaultOutbound: true, accountId: 'a', secretsKeyId: 'k',
      settings: { x: 1 }, secrets: { s: 'c' }, credentialsCheck: null, createdAt: new Date(1000), updatedAt: new Date(2000),
    });
  });
  it('maps a configuration row with its credentials check', () => {
    expect(telephonyConfigurationFromRow({
      id: 1, organization_id: 2, name: 'N', name_key: 'n', provider: 'twilio', is_default_outbound: 0, account_id: 'a', secrets_key_id: 'k',
      settings: '{}', secrets: '{}', created_at: 1000, updated_at: 2000,
      credentials_check_ok: 0, credentials_check_message: 'refused', credentials_checked_at: 3000,
    }).credentialsCheck).toEqual({ ok: false, message: 'refused', checkedAt: new Date(3000) });
  });
  it('maps a phone number row', () => {
    expect(phoneNumberFromRow({
      id: 1, organization_id: 2, telephony_configuration_id: 3, provider: 'p', account_id: 'a', address: 'A', address_normalized: 'a',
      address_type: 'sip_extension', extension: null, country_code: null, label: 'l', is_active: 0, is_default_caller_id: 1, extra_metadata: '{}',
      inbound_workflow_id: null, created_at: 1, updated_at: 2,
    })).toMatchObject({ isActive: false, isDefaultCallerId: true, extraMetadata: {}, createdAt: new Date(1), inboundWorkflowId: null });
  });
});
