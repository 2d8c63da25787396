import { describe, expect, it } from '@jest/globals';
import { runChatRepositoryContract, sampleConversationState } from '../../../test/contracts/chat.repository.contract.js';
import { describeEachMongoTarget } from '../../../test/fakes/mongo/mongo-target.js';
import { chatFromDocument, chatToDocument, MongoChatRepository } from './chat.mongo.js';
import { contractLabel, insertOrganization, mongoHarness } from './mongo-test-support.js';
import { MongoWorkflowRepository } from './workflow.mongo.js';

describeEachMongoTarget('chat repository on MongoDB', (target) => {
  runChatRepositoryContract(contractLabel(target), async () => {
    const h = await mongoHarness(target, (db) => new MongoChatRepository(db))();
    return { ...h, workflows: new MongoWorkflowRepository(h.db), newOrganization: (name: string) => insertOrganization(h.db, name) };
  });
});

describe('chat document mappers', () => {
  it('maps a chat both ways, the state as JSON text (keys with $ and . kept) and its status beside it', () => {
    const state = sampleConversationState({ status: 'ended', gathered_context: { $odd: 1, 'a.b': true } });
    const chat = { id: 7, organizationId: 2, workflowId: 3, definitionId: 4, state, revision: 9, createdAt: new Date(100), updatedAt: new Date(200) };
    const doc = chatToDocument(chat);
    expect(doc).toEqual({
      _id: 7, organizationId: 2, workflowId: 3, definitionId: 4, status: 'ended', stateJson: JSON.stringify(state), revision: 9,
      createdAt: new Date(100), updatedAt: new Date(200),
    });
    expect(chatFromDocument(doc)).toEqual(chat);
  });
});
