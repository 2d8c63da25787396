/**
 * From one record of a conversation to the fields a call's run carries (docs/conversation.md): `gathered_context`, the
 * disposition column, `cost_info.service_token_usage`, the transcript artifact behind `transcript_url`, and
 * `node_entered` / `variables_extracted` log entries. Pure; never throws.
 */
import type { ConversationLogEntry, ConversationRecord } from '../ports/conversation-record.port.js';
import type { RunLogEntry } from '../runs/run.js';

/** One turn of the transcript artifact: what the caller said or heard; times from the conversation's start. */
export interface TranscriptTurn {
  role: 'user' | 'assistant';
  text: string;
  node_id: string;
  start_ms: number;
  end_ms: number;
  interrupted: boolean;
}

export interface ConversationRunFields {
  gatheredContext: Record<string, unknown>;
  /** `gathered_context.mapped_call_disposition`; null while the conversation is active. */
  disposition: string | null;
  serviceTokenUsage: number;
  /** The JSON stored behind `transcript_url`. */
  transcript: { turns: TranscriptTurn[] };
  /** The run log entries the conversation adds, in order. */
  logs: RunLogEntry[];
}

export function runFieldsOfConversation(record: ConversationRecord): ConversationRunFields {
  const origin = Date.parse(record.started_at);
  const offset = (iso: string): number => Math.max(0, Date.parse(iso) - origin);
  const turns: TranscriptTurn[] = [];
  for (const m of record.messages) {
    if (m.role === 'system') continue;
    const start = offset(m.created_at);
    turns.push({
      role: m.role,
      text: m.text,
      node_id: m.node_id,
      start_ms: start,
      end_ms: m.ended_at === undefined ? start : Math.max(start, offset(m.ended_at)),
      interrupted: m.interrupted === true,
    });
  }
  return {
    gatheredContext: structuredClone(record.gathered_context),
    disposition: record.disposition,
    serviceTokenUsage: record.usage.prompt_tokens + record.usage.completion_tokens,
    transcript: { turns },
    logs: record.log.map(runLogEntryOf),
  };
}

export function runLogEntryOf(entry: ConversationLogEntry): RunLogEntry {
  if (entry.type === 'node_entered') {
    return {
      ts: entry.at,
      event: 'node_entered',
      message: `Entered node '${entry.node_name}'`,
      details: { node_id: entry.node_id, node_name: entry.node_name, ...(entry.edge_id ? { edge_id: entry.edge_id } : {}) },
    };
  }
  return {
    ts: entry.at,
    event: 'variables_extracted',
    message: `Extracted ${Object.keys(entry.values).join(', ') || 'nothing'} at node '${entry.node_id}'`,
    details: { node_id: entry.node_id, values: structuredClone(entry.values) },
  };
}
