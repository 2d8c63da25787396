import { describe, expect, it } from '@jest/globals';
import { runRunRepositoryContract } from '../../../test/contracts/run.repository.contract.js';
import { describeEachMongoTarget } from '../../../test/fakes/mongo/mongo-target.js';
import { createMongoDouble } from '../../../test/fakes/mongo/mongo-double.js';
import type { Run } from '../../../core/runs/run.js';
import { ensureMongoSchema } from './mongo-database.js';
import { contractLabel, insertOrganization, mongoHarness } from './mongo-test-support.js';
import { MongoRunRepository, runFromDocument, runToDocument } from './run.mongo.js';
import { MongoWorkflowRepository } from './workflow.mongo.js';

describeEachMongoTarget('run repository on MongoDB', (target) => {
  runRunRepositoryContract(contractLabel(target), async () => {
    const h = await mongoHarness(target, (db) => new MongoRunRepository(db))();
    return { ...h, workflows: new MongoWorkflowRepository(h.db), newOrganization: (name: string) => insertOrganization(h.db, name) };
  });
});

describe('run document mappers', () => {
  const full: Run = {
    id: 1, organizationId: 2, workflowId: 3, definitionId: 4, name: 'n', mode: 'inbound', status: 'completed', disposition: 'done',
    campaignId: null, attemptId: 8, telephonyConfigurationId: 6, provider: 'simulator', providerCallId: 'sim-1',
    callerNumber: '+15550000001', calledNumber: '+15550000002', initialContext: { 'a.b': '$c' }, gatheredContext: { mapped_call_disposition: 'done' },
    logs: [{ ts: 't', event: 'e', details: { $x: 1 } }], annotations: {}, costInfo: { call_duration_seconds: 12, service_token_usage: 5, charge_usd: 0.1 },
    durationSeconds: 12, transcriptKey: 'runs/2/1/t.json', recordingKey: null,
    createdAt: new Date(100), startedAt: new Date(200), endedAt: new Date(300), updatedAt: new Date(300),
  };

  it('maps a run both ways with its rank and revision, user JSON as text, cost native', () => {
    const doc = runToDocument(full, 7);
    expect(doc).toMatchObject({
      _id: 1, organizationId: 2, status: 'completed', statusRank: 3, rev: 7, campaignId: null, attemptId: 8,
      initialContextJson: '{"a.b":"$c"}', logsJson: '[{"ts":"t","event":"e","details":{"$x":1}}]',
      costInfo: { call_duration_seconds: 12, service_token_usage: 5, charge_usd: 0.1 }, startedAt: new Date(200),
    });
    expect(runFromDocument(doc)).toEqual(full);
  });

  it('reads missing optional fields as null and a missing cost as zeros', () => {
    const doc = runToDocument(full, 0) as unknown as Record<string, unknown>;
    for (const k of ['disposition', 'campaignId', 'providerCallId', 'transcriptKey', 'startedAt', 'gatheredContextJson', 'costInfo']) delete doc[k];
    const back = runFromDocument(doc as never);
    expect(back).toMatchObject({ disposition: null, campaignId: null, providerCallId: null, transcriptKey: null, startedAt: null, gatheredContext: {} });
    expect(back.costInfo).toEqual({ call_duration_seconds: 12, service_token_usage: 0, charge_usd: 0 });
  });
});

describe('MongoRunRepository specifics [mongo test double (mingo), not a real mongod]', () => {
  it('bumps the revision on every applied write, never on an ignored one', async () => {
    const mongo = createMongoDouble();
    await ensureMongoSchema(mongo.db);
    const repo = new MongoRunRepository(mongo.db);
    const org = await insertOrganization(mongo.db, 'A');
    const r = await repo.create(org, { workflowId: 1, definitionId: 1, name: 'c', mode: 'outbound', initialContext: {}, now: new Date(0) });
    const rev = async () => (await mongo.fakeDb.collection('runs').findOne({ _id: r.id }))!.rev;
    expect(await rev()).toBe(0);
    await repo.applyStatus(org, r.id, { status: 'ringing', at: new Date(1) });
    expect(await rev()).toBe(1);
    await repo.applyStatus(org, r.id, { status: 'queued', at: new Date(2) });
    expect(await rev()).toBe(1);
    await repo.attachArtifacts(org, r.id, { transcriptKey: 'k', now: new Date(3) });
    expect(await rev()).toBe(2);
  });

  it('applies many concurrent forward updates without losing any merged context', async () => {
    const mongo = createMongoDouble();
    await ensureMongoSchema(mongo.db);
    const repo = new MongoRunRepository(mongo.db);
    const org = await insertOrganization(mongo.db, 'A');
    const r = await repo.create(org, { workflowId: 1, definitionId: 1, name: 'c', mode: 'outbound', initialContext: {}, now: new Date(0) });
    await Promise.all(Array.from({ length: 10 }, (_, i) =>
      repo.applyStatus(org, r.id, { status: 'in_progress', gatheredContext: { [`k${i}`]: i }, at: new Date(10 + i) })));
    const after = (await repo.get(org, r.id))!;
    expect(Object.keys(after.gatheredContext).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `k${i}`).sort());
  });
});
