import { runWebhookEventOutboxContract } from '../../../test/contracts/webhook-event-outbox.contract.js';
import { SqliteCampaignRepository } from './campaign.sqlite.js';
import { openMigratedSqlite } from './database.js';
import { SqliteRunRepository } from './run.sqlite.js';
import { SqliteWebhookRepository } from './webhook.sqlite.js';
import { SqliteWorkflowRepository } from './workflow.sqlite.js';
import { insertOrganization } from './workflow.sqlite.test-support.js';

runWebhookEventOutboxContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  return {
    webhooks: new SqliteWebhookRepository(db), runs: new SqliteRunRepository(db), campaigns: new SqliteCampaignRepository(db),
    workflows: new SqliteWorkflowRepository(db), organization: insertOrganization(db, 'A'), cleanup: async () => void db.close(),
  };
});
