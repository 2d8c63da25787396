import { describe, expect, it } from '@jest/globals';
import { runWorkflowRepositoryContract } from '../../../test/contracts/workflow.repository.contract.js';
import { exampleWorkflowDefinition } from '../../../core/workflows/example-definition.js';
import { describeEachMongoTarget } from '../../../test/fakes/mongo/mongo-target.js';
import { createMongoDouble } from '../../../test/fakes/mongo/mongo-double.js';
import { ensureMongoSchema } from './mongo-database.js';
import { contractLabel, insertOrganization, mongoHarness } from './mongo-test-support.js';
import {
  MongoWorkflowRepository, workflowDefinitionFromDocument, workflowDefinitionToDocument, workflowFromDocument, workflowToDocument,
} from './workflow.mongo.js';

describeEachMongoTarget('workflow repository on MongoDB', (target) => {
  runWorkflowRepositoryContract(contractLabel(target), async () => {
    const h = await mongoHarness(target, (db) => new MongoWorkflowRepository(db))();
    return { ...h, newOrganization: (name: string) => insertOrganization(h.db, name) };
  });
});

describe('workflow document mappers', () => {
  const t = new Date('2026-05-06T07:08:09.010Z');
  const workflow = {
    id: 4, organizationId: 2, name: 'Agent', status: 'active' as const, workflowUuid: 'u-1',
    templateContextVariables: { '$odd.key': 1, nested: { 'a.b': [1, null] } }, workflowConfigurations: {},
    currentDefinitionId: 9, createdAt: t, updatedAt: new Date(t.getTime() + 1),
  };

  it('maps a workflow both ways, user JSON as text so `$` and `.` keys are safe', () => {
    const doc = workflowToDocument(workflow, { current: 3, last: 4 });
    expect(doc).toMatchObject({
      _id: 4, organizationId: 2, workflowUuid: 'u-1', currentDefinitionId: 9, currentVersionNumber: 3, lastVersionNumber: 4,
      templateContextVariablesJson: '{"$odd.key":1,"nested":{"a.b":[1,null]}}', workflowConfigurationsJson: '{}',
    });
    expect(workflowFromDocument(doc)).toEqual(workflow);
  });

  it('maps a definition version both ways', () => {
    const v = { id: 9, organizationId: 2, workflowId: 4, versionNumber: 3, status: 'superseded' as const, definition: exampleWorkflowDefinition, createdAt: t };
    const doc = workflowDefinitionToDocument(v);
    expect(typeof doc.definitionJson).toBe('string');
    expect(doc).toMatchObject({ _id: 9, workflowId: 4, versionNumber: 3, status: 'superseded' });
    expect(workflowDefinitionFromDocument(doc)).toEqual(v);
  });
});

describe('MongoWorkflowRepository specifics [mongo test double (mingo), not a real mongod]', () => {
  it('stores user keys starting with $ or holding dots unchanged', async () => {
    const mongo = createMongoDouble();
    await ensureMongoSchema(mongo.db);
    const repo = new MongoWorkflowRepository(mongo.db);
    const org = await insertOrganization(mongo.db, 'A');
    const vars = { $price: 5, 'a.b': { $gt: 1 } };
    const { workflow } = await repo.create(org, {
      name: 'x', workflowUuid: 'u', definition: exampleWorkflowDefinition, templateContextVariables: vars, workflowConfigurations: {}, now: new Date(),
    });
    expect((await repo.get(org, workflow.id))!.templateContextVariables).toEqual(vars);
    const updated = await repo.update(org, workflow.id, { workflowConfigurations: { 'x.y': 1 }, now: new Date() });
    expect(updated!.workflowConfigurations).toEqual({ 'x.y': 1 });
  });

  it('removes the definition again when the workflow cannot be inserted (duplicate uuid)', async () => {
    const mongo = createMongoDouble();
    await ensureMongoSchema(mongo.db);
    const repo = new MongoWorkflowRepository(mongo.db);
    const org = await insertOrganization(mongo.db, 'A');
    const input = { name: 'x', workflowUuid: 'same', definition: exampleWorkflowDefinition, templateContextVariables: {}, workflowConfigurations: {}, now: new Date() };
    await repo.create(org, input);
    await expect(repo.create(org, input)).rejects.toMatchObject({ code: 11000 });
    expect(await mongo.fakeDb.collection('workflow_definitions').countDocuments()).toBe(1);
    expect(await mongo.fakeDb.collection('workflows').countDocuments()).toBe(1);
  });
});
