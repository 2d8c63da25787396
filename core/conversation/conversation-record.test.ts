import { describe, expect, it } from '@jest/globals';
import type { ConversationRecord } from '../ports/conversation-record.port.js';
import { runFieldsOfConversation } from './conversation-record.js';

const record: ConversationRecord = {
  status: 'ended',
  node_id: 'end_confirmed',
  node_path: ['start', 'confirm', 'end_confirmed'],
  messages: [
    { role: 'assistant', text: 'Hi, am I speaking with Dana?', node_id: 'start', created_at: '2026-01-05T09:00:00.000Z', ended_at: '2026-01-05T09:00:02.000Z' },
    { role: 'user', text: 'Yes.', node_id: 'start', created_at: '2026-01-05T09:00:03.500Z' },
    { role: 'system', text: "Moved from 'Greeting' to 'Confirm appointment' (Identity confirmed).", node_id: 'confirm', created_at: '2026-01-05T09:00:04.000Z' },
    { role: 'assistant', text: 'Can you', node_id: 'confirm', created_at: '2026-01-05T09:00:04.200Z', ended_at: '2026-01-05T09:00:05.000Z', interrupted: true },
  ],
  gathered_context: { will_attend: true, mapped_call_disposition: 'appointment_confirmed' },
  disposition: 'appointment_confirmed',
  end_reason: 'end_node',
  usage: { prompt_tokens: 180, completion_tokens: 29 },
  log: [
    { type: 'node_entered', at: '2026-01-05T09:00:00.000Z', node_id: 'start', node_name: 'Greeting' },
    { type: 'node_entered', at: '2026-01-05T09:00:04.000Z', node_id: 'confirm', node_name: 'Confirm appointment', edge_id: 'e_start_confirm' },
    { type: 'variables_extracted', at: '2026-01-05T09:00:06.000Z', node_id: 'confirm', values: { will_attend: true } },
  ],
  started_at: '2026-01-05T09:00:00.000Z',
  ended_at: '2026-01-05T09:00:06.000Z',
};

describe('runFieldsOfConversation', () => {
  it('maps the record to the run: gathered_context, disposition, token usage, transcript turns and log entries', () => {
    expect(runFieldsOfConversation(record)).toEqual({
      gatheredContext: { will_attend: true, mapped_call_disposition: 'appointment_confirmed' },
      disposition: 'appointment_confirmed',
      serviceTokenUsage: 209,
      transcript: {
        turns: [
          { role: 'assistant', text: 'Hi, am I speaking with Dana?', node_id: 'start', start_ms: 0, end_ms: 2000, interrupted: false },
          { role: 'user', text: 'Yes.', node_id: 'start', start_ms: 3500, end_ms: 3500, interrupted: false },
          { role: 'assistant', text: 'Can you', node_id: 'confirm', start_ms: 4200, end_ms: 5000, interrupted: true },
        ],
      },
      logs: [
        { ts: '2026-01-05T09:00:00.000Z', event: 'node_entered', message: "Entered node 'Greeting'", details: { node_id: 'start', node_name: 'Greeting' } },
        {
          ts: '2026-01-05T09:00:04.000Z',
          event: 'node_entered',
          message: "Entered node 'Confirm appointment'",
          details: { node_id: 'confirm', node_name: 'Confirm appointment', edge_id: 'e_start_confirm' },
        },
        {
          ts: '2026-01-05T09:00:06.000Z',
          event: 'variables_extracted',
          message: "Extracted will_attend at node 'confirm'",
          details: { node_id: 'confirm', values: { will_attend: true } },
        },
      ],
    });
  });

  it('copies gathered_context so the run cannot change the record', () => {
    const fields = runFieldsOfConversation(record);
    fields.gatheredContext.will_attend = false;
    expect(record.gathered_context.will_attend).toBe(true);
  });
});
