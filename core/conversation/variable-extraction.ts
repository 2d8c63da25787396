/**
 * Variable extraction (docs/conversation.md): leaving a node with `extraction_enabled`, one structured model call reads
 * the conversation and returns its `extraction_variables`, each coerced to its declared type. Pure apart from
 * the model call it is given.
 *
 * - The schema asks for every variable as a property of its JSON type or `null` (unknown), all required, no
 *   others: the shape strict JSON-schema modes accept.
 * - Coercion is tolerant: booleans from `"yes"`/`"no"`/`"true"`/`1`..., numbers from `"3"` or `"1,200"`,
 *   strings from numbers and booleans. A value that cannot be read as its type, or `null`, is omitted.
 */
import type { ChatMessage, LanguageModel, TokenUsage } from '../ports/language-model.port.js';
import type { ConversationMessage } from '../ports/conversation-record.port.js';
import type { ExtractionVariable, ExtractionVariableType } from '../workflows/workflow-definition.js';

export const EXTRACTION_SYSTEM_PROMPT =
  'You are an assistant tasked with extracting structured data from the conversation. Return ONLY a valid JSON ' +
  'object with the requested variables as top-level keys. Use null for a variable the conversation does not settle.';

export interface ExtractionRequest {
  variables: ExtractionVariable[];
  /** The node's `extraction_prompt`, when it has one: extra instructions. */
  extraPrompt?: string;
  /** The conversation so far (user and assistant lines are used). */
  messages: readonly ConversationMessage[];
}

export interface ExtractionOutcome {
  values: Record<string, unknown>;
  usage?: TokenUsage;
}

export function extractionSchema(variables: ExtractionVariable[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const v of variables) properties[v.name] = { type: [v.type, 'null'], description: v.prompt };
  return { type: 'object', properties, required: variables.map((v) => v.name), additionalProperties: false };
}

export function extractionMessages(request: ExtractionRequest): ChatMessage[] {
  const system = request.extraPrompt?.trim() ? `${EXTRACTION_SYSTEM_PROMPT}\n\n${request.extraPrompt.trim()}` : EXTRACTION_SYSTEM_PROMPT;
  const variables = request.variables.map((v) => `- ${v.name} (${v.type}): ${v.prompt}`).join('\n');
  const conversation = request.messages
    .filter((m) => m.role !== 'system' && m.text !== '')
    .map((m) => `${m.role}: ${m.text}`)
    .join('\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: `Variables to extract:\n${variables}\n\nConversation:\n${conversation}` },
  ];
}

/** Runs the extraction call; throws what the model throws (`ProviderApiError`, `AbortError`). */
export async function extractVariables(
  lm: LanguageModel,
  model: { model: string; temperature?: number },
  request: ExtractionRequest,
  signal: AbortSignal,
): Promise<ExtractionOutcome> {
  const result = await lm.complete({
    model: model.model,
    messages: extractionMessages(request),
    schema: { name: 'extraction', schema: extractionSchema(request.variables) },
    ...(model.temperature === undefined ? {} : { temperature: model.temperature }),
    signal,
  });
  return { values: coerceExtractedValues(request.variables, result.value), ...(result.usage ? { usage: result.usage } : {}) };
}

/** Keeps the declared variables whose answers read as their type, coerced; drops the rest. */
export function coerceExtractedValues(variables: ExtractionVariable[], raw: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const v of variables) {
    if (!Object.prototype.hasOwnProperty.call(raw, v.name)) continue;
    const coerced = coerceValue(v.type, raw[v.name]);
    if (coerced !== undefined) values[v.name] = coerced;
  }
  return values;
}

const TRUE_WORDS = new Set(['true', 'yes', 'y', '1', 'yeah', 'yep', 'sure', 'correct']);
const FALSE_WORDS = new Set(['false', 'no', 'n', '0', 'nope', 'incorrect']);

export function coerceValue(type: ExtractionVariableType, value: unknown): string | number | boolean | undefined {
  if (value === null || value === undefined) return undefined;
  switch (type) {
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : undefined;
      if (typeof value === 'string') {
        const word = value.trim().toLowerCase().replace(/[.!]+$/u, '');
        if (TRUE_WORDS.has(word)) return true;
        if (FALSE_WORDS.has(word)) return false;
      }
      return undefined;
    case 'number':
      if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
      if (typeof value === 'string') {
        const text = value.trim().replace(/(\d),(?=\d{3}\b)/gu, '$1');
        if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/iu.test(text)) return undefined;
        const n = Number(text);
        return Number.isFinite(n) ? n : undefined;
      }
      return undefined;
    case 'string':
      if (typeof value === 'string') return value.trim() === '' ? undefined : value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      return undefined;
  }
}
