import { describe, expect, it } from '@jest/globals';
import { runWorkflowRepositoryContract } from '../../../test/contracts/workflow.repository.contract.js';
import { openMigratedSqlite } from './database.js';
import { SqliteWorkflowRepository, workflowDefinitionFromRow, workflowFromRow } from './workflow.sqlite.js';
import { insertOrganization } from './workflow.sqlite.test-support.js';

runWorkflowRepositoryContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  return {
    repo: new SqliteWorkflowRepository(db),
    newOrganization: async (name) => insertOrganization(db, name),
    cleanup: async () => {
      db.close();
    },
  };
});

describe('sqlite workflow mappers', () => {
  it('maps rows to domain objects, parsing the JSON columns', () => {
    expect(workflowFromRow({
      id: 1, organization_id: 2, name: 'n', status: 'archived', workflow_uuid: 'u', template_context_variables: '{"a":1}',
      workflow_configurations: '{}', current_definition_id: 5, created_at: 10, updated_at: 20,
    })).toEqual({
      id: 1, organizationId: 2, name: 'n', status: 'archived', workflowUuid: 'u', templateContextVariables: { a: 1 },
      workflowConfigurations: {}, currentDefinitionId: 5, createdAt: new Date(10), updatedAt: new Date(20),
    });
    expect(workflowDefinitionFromRow({
      id: 5, organization_id: 2, workflow_id: 1, version_number: 3, status: 'superseded', definition: '{"nodes":[],"edges":[]}', created_at: 7,
    })).toEqual({ id: 5, organizationId: 2, workflowId: 1, versionNumber: 3, status: 'superseded', definition: { nodes: [], edges: [] }, createdAt: new Date(7) });
  });

  it('refuses a workflow of an organization that does not exist (foreign key)', async () => {
    const db = openMigratedSqlite(':memory:');
    const repo = new SqliteWorkflowRepository(db);
    await expect(repo.create(12345, {
      name: 'x', workflowUuid: 'u', definition: { nodes: [], edges: [] }, templateContextVariables: {}, workflowConfigurations: {}, now: new Date(),
    })).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' }); // not toThrow: SqliteError is from another realm under jest's vm
    expect(db.prepare('SELECT COUNT(*) AS n FROM workflow_definitions').get()).toEqual({ n: 0 });
    db.close();
  });
});
