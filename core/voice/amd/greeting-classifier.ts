/**
 * The optional one-shot model classification of a greeting (docs/voicemail.md "What decides"): asked only
 * when the heuristics are unsure (a greeting of 1.5-2.6 s with no telling phrase), through the
 * `LanguageModel` port's `complete()` with a JSON schema `{classification}`. One billed request per call at
 * most; a failure or an unreadable answer is `null` (the detector then falls back to its word rule).
 */
import type { LanguageModel } from '../../ports/language-model.port.js';
import type { AmdVerdict } from './amd-result.js';

export const GREETING_SCHEMA = {
  name: 'greeting_classification',
  schema: {
    type: 'object',
    properties: { classification: { type: 'string', enum: ['human', 'machine', 'unknown'] } },
    required: ['classification'],
    additionalProperties: false,
  },
} as const;

const INSTRUCTIONS = [
  'You classify the first words heard when an outbound phone call is answered.',
  'Answer "machine" for an answering machine, voicemail greeting, carrier message or automated menu;',
  '"human" for a person picking up; "unknown" when the words do not tell.',
  'Examples: "Hello?" → human. "Yeah, this is Dana." → human. "Acme dental, how can I help you?" → human.',
  '"Hi, you have reached Dana, I can\'t take your call right now" → machine.',
  '"The number you have dialed is not in service" → machine. "Press one for sales" → machine.',
].join(' ');

export interface GreetingClassifierOptions {
  model: LanguageModel;
  /** The model name as the provider knows it (the workflow's llm.model). */
  modelName: string;
}

/** Classifies `text`; never throws (null: no usable answer, including an abort). */
export async function classifyGreeting(options: GreetingClassifierOptions, text: string, signal?: AbortSignal): Promise<AmdVerdict | null> {
  try {
    const result = await options.model.complete({
      model: options.modelName,
      messages: [
        { role: 'system', content: INSTRUCTIONS },
        { role: 'user', content: `Greeting heard: "${text.replace(/"/g, "'")}"` },
      ],
      schema: { name: GREETING_SCHEMA.name, schema: GREETING_SCHEMA.schema as unknown as Record<string, unknown> },
      temperature: 0,
      ...(signal ? { signal } : {}),
    });
    const value = result.value.classification;
    return value === 'human' || value === 'machine' || value === 'unknown' ? value : null;
  } catch {
    return null;
  }
}
