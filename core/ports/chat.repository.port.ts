import type { Chat } from '../chats/chat.js';
import type { ConversationState } from '../conversation/conversation-state.js';

export interface NewChat {
  workflowId: number;
  definitionId: number;
  state: ConversationState;
  now: Date;
}

export interface ChatPage {
  /** Newest first: created_at desc, then id desc. */
  chats: Chat[];
  /** Every chat of the workflow in the organization, whatever the page. */
  totalCount: number;
}

/**
 * Chats (API.md 12). Every method is scoped by organization: a chat of another one is never seen, changed or
 * counted. The state is stored as plain JSON and read back equal (`toEqual`) to what was written.
 */
export const ChatRepository = Symbol.for('callplane.ChatRepository');
export interface ChatRepository {
  /** Stores a chat at revision 1 and returns it with its new id. Not idempotent (each call makes a chat). */
  create(organizationId: number, input: NewChat): Promise<Chat>;
  /**
   * The chat, or null when absent, of another workflow, or of another organization. Each call returns objects of
   * its own (a state read is the caller's to change: a chat turn runs the engine on it). Idempotent.
   */
  get(organizationId: number, workflowId: number, chatId: number): Promise<Chat | null>;
  /**
   * Replaces the chat's state and `updatedAt` and bumps its revision, only if its stored revision is still
   * `expectedRevision` (an atomic conditional update). Returns the saved chat, whose `state` is `change.state`
   * itself (not a copy read back: the caller hands the state over); null when absent or in another
   * organization; throws `ConflictError('chat_busy')` when the revision moved on (another writer saved first:
   * nothing is written). Not idempotent: a repeated save with the same expected revision is refused.
   */
  save(organizationId: number, chatId: number, change: { expectedRevision: number; state: ConversationState; now: Date }): Promise<Chat | null>;
  /** One page of the workflow's chats, newest first; an empty page past the end. Idempotent. */
  listByWorkflow(organizationId: number, workflowId: number, page: { page: number; limit: number }): Promise<ChatPage>;
}
