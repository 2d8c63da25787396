/**
 * One record of a conversation (docs/conversation.md): what a chat stores and shows, and what
 * a call's run carries (transcript artifact, `gathered_context`, disposition, `cost_info.service_token_usage`,
 * `node_entered` / `variables_extracted` log entries). The conversation engine produces it the same way
 * whoever drives it; `runFieldsOfConversation` (core/conversation/conversation-record.ts) maps it to run fields.
 * Every field is plain JSON.
 */
export const ConversationRecordSink = Symbol.for('callplane.ConversationRecordSink');

/**
 * One line of the conversation. `system` lines record node transitions, extracted variables and engine notes
 * (an idle check-in, a failed extraction). `node_id` is the node the conversation was at when the line was
 * said (for a transition: the node entered).
 */
export interface ConversationMessage {
  role: 'user' | 'assistant' | 'system';
  text: string;
  node_id: string;
  /** ISO 8601, from the engine's clock: when the line started. */
  created_at: string;
  /** ISO 8601: when an assistant line finished streaming; absent on other lines. */
  ended_at?: string;
  /** An assistant line the caller cut off (barge-in) or an aborted turn stopped: `text` is what was heard. */
  interrupted?: true;
}

export type ConversationLogEntry =
  | { type: 'node_entered'; at: string; node_id: string; node_name: string; edge_id?: string }
  | { type: 'variables_extracted'; at: string; node_id: string; values: Record<string, unknown> };

export interface ConversationUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * Why a conversation ended: `end_node` (an endCall node's last words were said), `hang_up` (the caller or the
 * driver ended it), `user_idle` (silent twice), `max_duration` (the time limit).
 */
export type ConversationEndReason = 'end_node' | 'hang_up' | 'user_idle' | 'max_duration';

/**
 * The hand-over an endCall node with `transfer_to` asks for (docs/voice.md "Transfers"): `to` is the rendered
 * target, normalized (`+15551234567`, `sip:desk@pbx.example.com`) when `valid`; the raw rendered text otherwise.
 * The engine never transfers: a call's voice session does, once the last words were heard.
 */
export interface ConversationTransfer {
  to: string;
  valid: boolean;
}

export interface ConversationRecord {
  status: 'active' | 'ended';
  /** The node the conversation is at (the endCall node once it ended there). */
  node_id: string;
  /** Every node entered, in order, the start node first; a node entered twice appears twice. */
  node_path: string[];
  messages: ConversationMessage[];
  /** Extracted values by variable name, plus `mapped_call_disposition` once ended. */
  gathered_context: Record<string, unknown>;
  /** Null while active. */
  disposition: string | null;
  end_reason: ConversationEndReason | null;
  /** Set when the conversation ended at an endCall node with `transfer_to`; absent otherwise. */
  transfer?: ConversationTransfer;
  /** Model tokens spent: every streamed turn and every extraction. */
  usage: ConversationUsage;
  log: ConversationLogEntry[];
  /** ISO 8601 instants from the engine's clock. */
  started_at: string;
  ended_at: string | null;
}

/**
 * Where a driver (a chat, a call's voice session) writes the record of its conversation. `write` stores the
 * whole record, replacing the previous write for the same conversation (idempotent: writing the same record
 * twice changes nothing). Throws `UnavailableError` when storage cannot be reached; the conversation itself
 * is unaffected and the driver may write again.
 */
export interface ConversationRecordSink {
  write(record: ConversationRecord): Promise<void>;
}
