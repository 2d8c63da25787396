import type { Chat } from '../../../core/chats/chat.js';
import { chatBusy } from '../../../core/chats/chat.js';
import type { ConversationState } from '../../../core/conversation/conversation-state.js';
import type { ChatPage, ChatRepository, NewChat } from '../../../core/ports/chat.repository.port.js';
import { fromMs, toMs, type SqliteDatabase } from './database.js';

export interface ChatRow {
  id: number; organization_id: number; workflow_id: number; definition_id: number; status: string; state: string;
  revision: number; created_at: number; updated_at: number;
}

export const chatFromRow = (r: ChatRow): Chat => ({
  id: r.id,
  organizationId: r.organization_id,
  workflowId: r.workflow_id,
  definitionId: r.definition_id,
  state: JSON.parse(r.state) as ConversationState,
  revision: r.revision,
  createdAt: fromMs(r.created_at),
  updatedAt: fromMs(r.updated_at),
});

/**
 * ChatRepository on the embedded database: a turn is one read and one `UPDATE ... WHERE revision = ?` (atomic by
 * itself). The update returns only the columns it changed: the saved chat carries the state it was given instead
 * of parsing back the JSON just written (a chat's state is ~10 kB after 20 turns).
 */
export class SqliteChatRepository implements ChatRepository {
  private readonly q;

  constructor(db: SqliteDatabase) {
    this.q = {
      insert: db.prepare<[number, number, number, string, string, number, number], ChatRow>(
        `INSERT INTO chats (organization_id, workflow_id, definition_id, status, state, revision, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 1, ?, ?) RETURNING *`),
      get: db.prepare<[number, number, number], ChatRow>('SELECT * FROM chats WHERE organization_id = ? AND workflow_id = ? AND id = ?'),
      save: db.prepare<{ org: number; id: number; expected: number; status: string; state: string; now: number }, Omit<ChatRow, 'state' | 'status'>>(
        `UPDATE chats SET status = @status, state = @state, revision = revision + 1, updated_at = @now
         WHERE organization_id = @org AND id = @id AND revision = @expected
         RETURNING id, organization_id, workflow_id, definition_id, revision, created_at, updated_at`),
      exists: db.prepare<[number, number], { id: number }>('SELECT id FROM chats WHERE organization_id = ? AND id = ?'),
      page: db.prepare<[number, number, number, number], ChatRow>(
        `SELECT * FROM chats WHERE organization_id = ? AND workflow_id = ?
         ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`),
      count: db.prepare<[number, number], { n: number }>('SELECT COUNT(*) AS n FROM chats WHERE organization_id = ? AND workflow_id = ?'),
    };
  }

  async create(organizationId: number, input: NewChat): Promise<Chat> {
    const now = toMs(input.now);
    return chatFromRow(this.q.insert.get(
      organizationId, input.workflowId, input.definitionId, input.state.status, JSON.stringify(input.state), now, now,
    )!);
  }

  async get(organizationId: number, workflowId: number, chatId: number): Promise<Chat | null> {
    const r = this.q.get.get(organizationId, workflowId, chatId);
    return r ? chatFromRow(r) : null;
  }

  async save(organizationId: number, chatId: number, change: { expectedRevision: number; state: ConversationState; now: Date }): Promise<Chat | null> {
    const r = this.q.save.get({
      org: organizationId, id: chatId, expected: change.expectedRevision, status: change.state.status,
      state: JSON.stringify(change.state), now: toMs(change.now),
    });
    if (r) {
      return {
        id: r.id, organizationId: r.organization_id, workflowId: r.workflow_id, definitionId: r.definition_id,
        state: change.state, revision: r.revision, createdAt: fromMs(r.created_at), updatedAt: fromMs(r.updated_at),
      };
    }
    if (this.q.exists.get(organizationId, chatId)) throw chatBusy();
    return null;
  }

  async listByWorkflow(organizationId: number, workflowId: number, page: { page: number; limit: number }): Promise<ChatPage> {
    const rows = this.q.page.all(organizationId, workflowId, page.limit, (page.page - 1) * page.limit);
    return { chats: rows.map(chatFromRow), totalCount: this.q.count.get(organizationId, workflowId)!.n };
  }
}
