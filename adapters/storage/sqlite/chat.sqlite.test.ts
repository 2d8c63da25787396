import { describe, expect, it } from '@jest/globals';
import { runChatRepositoryContract, sampleConversationState } from '../../../test/contracts/chat.repository.contract.js';
import { chatFromRow, SqliteChatRepository } from './chat.sqlite.js';
import { openMigratedSqlite } from './database.js';
import { SqliteWorkflowRepository } from './workflow.sqlite.js';
import { insertOrganization } from './workflow.sqlite.test-support.js';

runChatRepositoryContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  return {
    repo: new SqliteChatRepository(db),
    workflows: new SqliteWorkflowRepository(db),
    newOrganization: async (name) => insertOrganization(db, name),
    cleanup: async () => {
      db.close();
    },
  };
});

describe('sqlite chat row mapper', () => {
  it('maps a row with its JSON state', () => {
    const state = sampleConversationState();
    expect(chatFromRow({
      id: 1, organization_id: 2, workflow_id: 3, definition_id: 4, status: 'active', state: JSON.stringify(state), revision: 5,
      created_at: 1000, updated_at: 2000,
    })).toEqual({
      id: 1, organizationId: 2, workflowId: 3, definitionId: 4, state, revision: 5, createdAt: new Date(1000), updatedAt: new Date(2000),
    });
  });
});
