import { runWebhookRepositoryContract } from '../../../test/contracts/webhook.repository.contract.js';
import { openMigratedSqlite } from './database.js';
import { SqliteIdentityRepository } from './identity.sqlite.js';
import { SqliteWebhookRepository } from './webhook.sqlite.js';

runWebhookRepositoryContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  const identity = new SqliteIdentityRepository(db);
  const now = new Date();
  const a = await identity.createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now });
  const b = await identity.createOrganizationWithUser({ organizationName: 'B', email: 'b@x.io', name: null, passwordHash: 'h', now });
  return { repo: new SqliteWebhookRepository(db), organizations: [a.organization.id, b.organization.id], cleanup: async () => { db.close(); } };
});
