import { describe, expect, it } from '@jest/globals';
import { runIdentityRepositoryContract } from '../../../test/contracts/identity.repository.contract.js';
import { migrate, openMigratedSqlite, openSqlite } from './database.js';
import { SqliteIdentityRepository, apiKeyFromRow, userFromRow } from './identity.sqlite.js';

runIdentityRepositoryContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  return { repo: new SqliteIdentityRepository(db), cleanup: async () => { db.close(); } };
});

describe('sqlite identity mappers and migrations', () => {
  it('maps rows to domain objects', () => {
    expect(userFromRow({ id: 1, organization_id: 2, email: 'e', name: null, password_hash: 'h', created_at: 0 })).toEqual({
      id: 1, organizationId: 2, email: 'e', name: null, passwordHash: 'h', createdAt: new Date(0),
    });
    expect(apiKeyFromRow({ id: 1, organization_id: 2, user_id: 3, name: 'n', key_prefix: 'p', key_digest: 'd', created_at: 5, last_used_at: null, revoked_at: 7 }))
      .toMatchObject({ lastUsedAt: null, revokedAt: new Date(7) });
  });

  it('applies migrations once (idempotent)', () => {
    const db = openSqlite(':memory:');
    expect(migrate(db).length).toBeGreaterThan(0);
    expect(migrate(db)).toEqual([]);
    db.close();
  });
});
