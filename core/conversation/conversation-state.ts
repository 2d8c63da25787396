/**
 * The conversation engine's state and events (docs/conversation.md). The state is plain JSON: a chat stores it
 * between HTTP requests and `Conversation.resume` carries on from it.
 */
import type { ChatMessage } from '../ports/language-model.port.js';
import type {
  ConversationEndReason,
  ConversationMessage,
  ConversationRecord,
  ConversationTransfer,
  ConversationUsage,
} from '../ports/conversation-record.port.js';

export const CONVERSATION_STATE_VERSION = 1;

export interface ConversationState extends ConversationRecord {
  version: typeof CONVERSATION_STATE_VERSION;
  initial_context: Record<string, unknown>;
  /** The history as the model sees it (without the system prompt): texts, tool calls and tool results. */
  history: ChatMessage[];
  /** Silences in a row since the caller last spoke (`userIdle`). */
  idle_strikes: number;
  /** True while a user line (or an engine instruction) has no model answer yet: a failed turn can be retried. */
  awaiting_reply: boolean;
}

export interface ConversationNodeRef {
  id: string;
  name: string;
}

/**
 * What a turn yields, in order of occurrence:
 * - `message`: a line added to `messages` (the user's, a finished assistant reply, a system note);
 * - `delta`: a piece of assistant text as the model streams it (the finished text follows as a `message`);
 * - `transition`: the conversation moved along an edge;
 * - `extracted`: an extraction finished (values may be empty when the conversation settled none);
 * - `usage`: one model call's tokens, and the conversation's running total;
 * - `ended`: the conversation ended; always the last event of its turn. `transfer` is present when an endCall
 *   node with `transfer_to` ended it: the driver hands the caller over to `transfer.to` after the last words.
 */
export type ConversationEvent =
  | { type: 'message'; message: ConversationMessage }
  | { type: 'delta'; text: string; node_id: string }
  | { type: 'transition'; from: ConversationNodeRef; to: ConversationNodeRef; edge_id: string; tool_name: string }
  | { type: 'extracted'; node_id: string; values: Record<string, unknown> }
  | { type: 'usage'; usage: ConversationUsage; total: ConversationUsage }
  | { type: 'ended'; reason: ConversationEndReason; disposition: string; transfer?: ConversationTransfer };
