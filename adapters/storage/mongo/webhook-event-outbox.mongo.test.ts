import { runWebhookEventOutboxContract } from '../../../test/contracts/webhook-event-outbox.contract.js';
import { describeEachMongoTarget } from '../../../test/fakes/mongo/mongo-target.js';
import { MongoCampaignRepository } from './campaign.mongo.js';
import { contractLabel, insertOrganization, mongoHarness } from './mongo-test-support.js';
import { MongoRunRepository } from './run.mongo.js';
import { MongoWebhookRepository } from './webhook.mongo.js';
import { MongoWorkflowRepository } from './workflow.mongo.js';

describeEachMongoTarget('webhook event outbox on MongoDB', (target) => {
  runWebhookEventOutboxContract(contractLabel(target), async () => {
    const h = await mongoHarness(target, (db) => new MongoWebhookRepository(db))();
    return {
      webhooks: h.repo, runs: new MongoRunRepository(h.db), campaigns: new MongoCampaignRepository(h.db), workflows: new MongoWorkflowRepository(h.db),
      organization: await insertOrganization(h.db, 'A'), cleanup: h.cleanup,
    };
  });
});
