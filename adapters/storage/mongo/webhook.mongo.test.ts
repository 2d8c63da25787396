import { describe, expect, it } from '@jest/globals';
import { runWebhookRepositoryContract } from '../../../test/contracts/webhook.repository.contract.js';
import { describeEachMongoTarget } from '../../../test/fakes/mongo/mongo-target.js';
import { contractLabel, insertOrganization, mongoHarness } from './mongo-test-support.js';
import {
  MongoWebhookRepository, webhookDeliveryFromDocument, webhookDeliveryToDocument, webhookEndpointFromDocument, webhookEndpointToDocument,
} from './webhook.mongo.js';

describeEachMongoTarget('Webhook repository on MongoDB', (target) => {
  runWebhookRepositoryContract(contractLabel(target), async () => {
    const h = await mongoHarness(target, (db) => new MongoWebhookRepository(db))();
    return { repo: h.repo, organizations: [await insertOrganization(h.db, 'A'), await insertOrganization(h.db, 'B')], cleanup: h.cleanup };
  });
});

describe('webhook document mappers', () => {
  const t = new Date('2026-01-01T00:00:00.001Z');
  it('map endpoints and deliveries both ways', () => {
    const e = { id: 3, organizationId: 1, url: 'https://x.example/', events: ['call.ended' as const], description: null, secretCiphertext: 'c', secretsKeyId: 'k', createdAt: t, updatedAt: t };
    expect(webhookEndpointFromDocument(webhookEndpointToDocument(e))).toEqual(e);
    const d = {
      id: 9, organizationId: 1, endpointId: 3, event: 'call.ended' as const, body: '{}', status: 'pending' as const, attempts: 1, lastStatusCode: 500,
      lastError: 'HTTP 500', nextAttemptAt: t, leaseUntil: null, leaseToken: null, createdAt: t, updatedAt: t,
    };
    expect(webhookDeliveryToDocument(d)).toMatchObject({ _id: 9, endpointId: 3 });
    expect(webhookDeliveryFromDocument(webhookDeliveryToDocument(d))).toEqual(d);
  });
});
