import { describe, expect, it } from '@jest/globals';
import { runAiServiceRepositoryContract } from '../../../test/contracts/ai-service.repository.contract.js';
import { aiServiceFromRow, SqliteAiServiceRepository } from './ai-service.sqlite.js';
import { openMigratedSqlite } from './database.js';
import { SqliteIdentityRepository } from './identity.sqlite.js';

runAiServiceRepositoryContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  const identity = new SqliteIdentityRepository(db);
  const now = new Date();
  const a = await identity.createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now });
  const b = await identity.createOrganizationWithUser({ organizationName: 'B', email: 'b@x.io', name: null, passwordHash: 'h', now });
  return { repo: new SqliteAiServiceRepository(db), organizations: [a.organization.id, b.organization.id], cleanup: async () => { db.close(); } };
});

describe('AI service row mapper', () => {
  it('maps a row', () => {
    expect(aiServiceFromRow({
      id: 1, organization_id: 2, name: 'N', name_key: 'n', provider: 'openai', secrets_key_id: 'k', settings: '{"x":1}', secrets: '{"s":"c"}',
      created_at: 1000, updated_at: 2000,
    })).toEqual({
      id: 1, organizationId: 2, name: 'N', provider: 'openai', secretsKeyId: 'k', settings: { x: 1 }, secrets: { s: 'c' },
      createdAt: new Date(1000), updatedAt: new Date(2000),
    });
  });
});
