import { describe, expect, it } from '@jest/globals';
import type { ExtractionVariable } from '../workflows/workflow-definition.js';
import {
  EXTRACTION_SYSTEM_PROMPT,
  coerceExtractedValues,
  coerceValue,
  extractionMessages,
  extractionSchema,
} from './variable-extraction.js';

const vars: ExtractionVariable[] = [
  { name: 'will_attend', type: 'boolean', prompt: 'Whether they come.' },
  { name: 'slots_offered', type: 'number', prompt: 'How many slots.' },
  { name: 'new_time', type: 'string', prompt: 'The new time.' },
];

describe('extraction request', () => {
  it('asks for every variable as its JSON type or null, all required, nothing else (strict-mode shape)', () => {
    expect(extractionSchema(vars)).toEqual({
      type: 'object',
      properties: {
        will_attend: { type: ['boolean', 'null'], description: 'Whether they come.' },
        slots_offered: { type: ['number', 'null'], description: 'How many slots.' },
        new_time: { type: ['string', 'null'], description: 'The new time.' },
      },
      required: ['will_attend', 'slots_offered', 'new_time'],
      additionalProperties: false,
    });
  });

  it('gives the variables and the conversation as text (system lines left out), plus the node extraction prompt', () => {
    const messages = extractionMessages({
      variables: vars.slice(0, 1),
      extraPrompt: 'Be strict.',
      messages: [
        { role: 'assistant', text: 'Can you make it?', node_id: 'confirm', created_at: 't' },
        { role: 'system', text: 'Moved somewhere', node_id: 'confirm', created_at: 't' },
        { role: 'user', text: 'Yes.', node_id: 'confirm', created_at: 't' },
      ],
    });
    expect(messages).toEqual([
      { role: 'system', content: `${EXTRACTION_SYSTEM_PROMPT}\n\nBe strict.` },
      {
        role: 'user',
        content: 'Variables to extract:\n- will_attend (boolean): Whether they come.\n\nConversation:\nassistant: Can you make it?\nuser: Yes.',
      },
    ]);
  });
});

describe('coercion to the declared type', () => {
  it.each([
    ['boolean', true, true],
    ['boolean', 'yes', true],
    ['boolean', 'True', true],
    ['boolean', 'no.', false],
    ['boolean', 'false', false],
    ['boolean', 1, true],
    ['boolean', 0, false],
    ['boolean', 'maybe', undefined],
    ['boolean', 2, undefined],
    ['number', 3, 3],
    ['number', '3', 3],
    ['number', ' -2.5 ', -2.5],
    ['number', '1,200', 1200],
    ['number', 'three', undefined],
    ['number', '3 slots', undefined],
    ['number', '', undefined],
    ['number', true, undefined],
    ['string', 'Friday 9am', 'Friday 9am'],
    ['string', 42, '42'],
    ['string', false, 'false'],
    ['string', '  ', undefined],
    ['string', { a: 1 }, undefined],
    ['string', null, undefined],
  ] as const)('%s from %p → %p', (type, raw, expected) => {
    expect(coerceValue(type, raw)).toBe(expected);
  });

  it('keeps only declared variables that read as their type', () => {
    expect(coerceExtractedValues(vars, { will_attend: 'yes', slots_offered: 'many', new_time: null, extra: 'x' })).toEqual({
      will_attend: true,
    });
  });
});
