/**
 * A chat (API.md 12): someone trying an agent by text. It is the conversation engine's state
 * (core/conversation/conversation-state.ts), stored between HTTP requests, plus the workflow and the definition
 * version it runs. The state holds the whole record of the conversation (messages with node ids and times, the
 * node path, gathered_context, disposition, token usage).
 *
 * Concurrency (docs/api.md, "Chats"): every stored change bumps `revision`. A message is answered from the chat
 * as read and saved only if the revision is still the one read; otherwise the later answer is refused with
 * 409 `chat_busy` and the chat keeps the earlier one. Within one process a second message to a chat whose turn
 * is still running is refused at once with the same code, before the model is asked.
 */
import type { ConversationState } from '../conversation/conversation-state.js';
import { ConflictError, NotFoundError } from '../errors.js';

export interface Chat {
  /** An integer from the store. */
  id: number;
  organizationId: number;
  workflowId: number;
  /** The workflow definition version the chat runs (the workflow's current one at creation, or the one asked for). */
  definitionId: number;
  state: ConversationState;
  /** 1 at creation; one more per save. */
  revision: number;
  createdAt: Date;
  updatedAt: Date;
}

/** A chat message's text: 1..4000 characters (API.md 12). */
export const CHAT_MESSAGE_MAX_LENGTH = 4000;

export const chatNotFound = (): NotFoundError => new NotFoundError('chat_not_found', 'Chat not found');

/** The refusal of a message that lost the race with another message to the same chat. */
export const chatBusy = (): ConflictError =>
  new ConflictError('chat_busy', 'Another message to this chat is being answered; read the chat and send again');
