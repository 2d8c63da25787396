/**
 * One conversation with the example dental agent (core/workflows/example-definition.ts) that the voice e2e tests
 * share, whichever way the call arrives (a simulator inbound call, a campaign's outbound call): Dana confirms she
 * is Dana and that she will come on Tuesday; the agent says goodbye and ends with `appointment_confirmed`.
 */
import type { FakeOpenAiServer } from '../fakes/openai/fake-openai-server.js';

/** What the simulated caller says (its `caller.lines` / `caller_lines`), one line per turn. */
export const DANA_CALLER_LINES = ['Yes, this is Dana speaking, hello there.', 'Yes, I will be there on Tuesday, thank you.'];

/** Scripts the fake OpenAI server for the call: what it transcribes, the agent's replies and the extraction. */
export function scriptDanaConfirms(openai: FakeOpenAiServer): void {
  openai.speech.transcribeAs('Yes, this is Dana.', "Yes, I'll be there.");
  openai.reply(
    { text: 'Thanks, Dana.', toolCalls: [{ name: 'identity_confirmed', arguments: '{}' }] },
    { text: 'Can you come Tuesday at 3pm?' },
    { toolCalls: [{ name: 'will_attend', arguments: '{}' }] },
    { text: 'Great. Goodbye!' },
  );
  openai.replyStructured({ text: '{"will_attend": true}' });
}

/** The run's transcript of that call as `role: text`, one entry per reply piece, in order. */
export const DANA_CONFIRMS_TRANSCRIPT = [
  'assistant: Hi, this is Ava from Brightsmile Dental. Am I speaking with Dana?',
  'user: Yes, this is Dana.',
  'assistant: Thanks, Dana.',
  'assistant: Can you come Tuesday at 3pm?',
  "user: Yes, I'll be there.",
  'assistant: Great. Goodbye!',
];
