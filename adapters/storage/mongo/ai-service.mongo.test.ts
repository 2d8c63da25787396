import { describe, expect, it } from '@jest/globals';
import { runAiServiceRepositoryContract } from '../../../test/contracts/ai-service.repository.contract.js';
import { describeEachMongoTarget } from '../../../test/fakes/mongo/mongo-target.js';
import { aiServiceFromDocument, aiServiceToDocument, MongoAiServiceRepository } from './ai-service.mongo.js';
import { contractLabel, insertOrganization, mongoHarness } from './mongo-test-support.js';

describeEachMongoTarget('AI service repository on MongoDB', (target) => {
  runAiServiceRepositoryContract(contractLabel(target), async () => {
    const h = await mongoHarness(target, (db) => new MongoAiServiceRepository(db))();
    return { repo: h.repo, organizations: [await insertOrganization(h.db, 'A'), await insertOrganization(h.db, 'B')], cleanup: h.cleanup };
  });
});

describe('AI service document mappers', () => {
  const t = new Date('2026-01-01T00:00:00.001Z');
  const s = {
    id: 7, organizationId: 2, name: 'Main ÉLAN', provider: 'openai', secretsKeyId: 'k',
    settings: { base_url: 'https://api.openai.com/v1', '$x.y': 1 }, secrets: { api_key: 'v1:abc' }, createdAt: t, updatedAt: t,
  };

  it('maps a service both ways with its lower-cased name key and credentials as JSON text', () => {
    const doc = aiServiceToDocument(s);
    expect(doc).toEqual({
      _id: 7, organizationId: 2, name: 'Main ÉLAN', nameKey: 'main élan', provider: 'openai', secretsKeyId: 'k',
      settingsJson: '{"base_url":"https://api.openai.com/v1","$x.y":1}', secretsJson: '{"api_key":"v1:abc"}', createdAt: t, updatedAt: t,
    });
    expect(aiServiceFromDocument(doc)).toEqual(s);
  });

  it('reads missing credential text as empty objects', () => {
    const { settingsJson: _s, secretsJson: _c, ...rest } = aiServiceToDocument(s);
    expect(aiServiceFromDocument(rest as never)).toMatchObject({ settings: {}, secrets: {} });
  });
});
