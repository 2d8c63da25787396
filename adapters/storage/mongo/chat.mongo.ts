import type { Db } from 'mongodb';
import { chatBusy, type Chat } from '../../../core/chats/chat.js';
import type { ConversationState } from '../../../core/conversation/conversation-state.js';
import type { ChatPage, ChatRepository, NewChat } from '../../../core/ports/chat.repository.port.js';
import { fromJsonText, nextId, toJsonText } from './mongo-database.js';
import { Collections } from './mongo-schema.js';

export interface ChatDocument {
  _id: number;
  organizationId: number;
  workflowId: number;
  definitionId: number;
  /** The state's status, for queries that need not parse it. */
  status: 'active' | 'ended';
  /** The conversation state as JSON text: its user-given keys (initial context, extracted names) never meet MongoDB's rules on keys. */
  stateJson: string;
  revision: number;
  createdAt: Date;
  updatedAt: Date;
}

export const chatToDocument = (c: Chat): ChatDocument => ({
  _id: c.id,
  organizationId: c.organizationId,
  workflowId: c.workflowId,
  definitionId: c.definitionId,
  status: c.state.status,
  stateJson: toJsonText(c.state),
  revision: c.revision,
  createdAt: new Date(c.createdAt),
  updatedAt: new Date(c.updatedAt),
});

export const chatFromDocument = (d: ChatDocument): Chat => ({
  id: d._id,
  organizationId: d.organizationId,
  workflowId: d.workflowId,
  definitionId: d.definitionId,
  state: fromJsonText<ConversationState>(d.stateJson, null as never),
  revision: d.revision,
  createdAt: new Date(d.createdAt),
  updatedAt: new Date(d.updatedAt),
});

/** ChatRepository on MongoDB: a save is one `findOneAndUpdate` conditioned on the revision read. */
export class MongoChatRepository implements ChatRepository {
  private readonly chats;

  constructor(private readonly db: Db) {
    this.chats = db.collection<ChatDocument>(Collections.chats);
  }

  async create(organizationId: number, input: NewChat): Promise<Chat> {
    const doc = chatToDocument({
      id: await nextId(this.db, Collections.chats), organizationId, workflowId: input.workflowId, definitionId: input.definitionId,
      state: input.state, revision: 1, createdAt: input.now, updatedAt: input.now,
    });
    await this.chats.insertOne(doc);
    return chatFromDocument(doc);
  }

  async get(organizationId: number, workflowId: number, chatId: number): Promise<Chat | null> {
    const d = await this.chats.findOne({ _id: chatId, organizationId, workflowId });
    return d ? chatFromDocument(d) : null;
  }

  async save(organizationId: number, chatId: number, change: { expectedRevision: number; state: ConversationState; now: Date }): Promise<Chat | null> {
    const d = await this.chats.findOneAndUpdate(
      { _id: chatId, organizationId, revision: change.expectedRevision },
      { $set: { status: change.state.status, stateJson: toJsonText(change.state), updatedAt: change.now }, $inc: { revision: 1 } },
      { returnDocument: 'after', projection: { stateJson: 0 } },
    );
    // the state just written is not read back: the saved chat carries the one given
    if (d) {
      return {
        id: d._id, organizationId: d.organizationId, workflowId: d.workflowId, definitionId: d.definitionId,
        state: change.state, revision: d.revision, createdAt: new Date(d.createdAt), updatedAt: new Date(d.updatedAt),
      };
    }
    if (await this.chats.countDocuments({ _id: chatId, organizationId }, { limit: 1 }) > 0) throw chatBusy();
    return null;
  }

  async listByWorkflow(organizationId: number, workflowId: number, page: { page: number; limit: number }): Promise<ChatPage> {
    const filter = { organizationId, workflowId };
    const [docs, totalCount] = await Promise.all([
      this.chats.find(filter).sort({ createdAt: -1, _id: -1 }).skip((page.page - 1) * page.limit).limit(page.limit).toArray(),
      this.chats.countDocuments(filter),
    ]);
    return { chats: docs.map(chatFromDocument), totalCount };
  }
}
