/**
 * `workflow_configurations` (API.md 11): how an agent talks. The known keys are checked on every workflow
 * create and update; unknown keys (at the top and inside each block) are kept as sent. Two views of one rule:
 * `workflowConfigurationsSchema` (what the route validates and the OpenAPI document shows) and
 * `validateWorkflowConfigurations` (the same checks in plain TypeScript, for embedders calling the use cases);
 * workflow-configurations.test.ts keeps them in agreement.
 */
import type { ValidationIssue } from '../errors.js';
import type { ProviderKind } from '../telephony/provider-manifest.js';

/** The blocks that name an AI service, each by the kind it needs. */
export const AI_SERVICE_BLOCKS = ['llm', 'stt', 'tts'] as const satisfies readonly ProviderKind[];
export type AiServiceBlock = (typeof AI_SERVICE_BLOCKS)[number];

/** The known keys, typed (what the engine and the voice session read). */
export interface WorkflowConfigurations {
  llm?: { service_id: number; model: string; temperature?: number };
  stt?: { service_id: number; model?: string; language?: string };
  tts?: { service_id: number; voice?: string; model?: string };
  /** 10..14400; at the limit the agent says goodbye and hangs up. */
  max_call_duration_seconds?: number;
  /** 3..120; first silence: the agent checks in; second: it ends the call. */
  user_idle_timeout_seconds?: number;
  /** 0..5000; caller speech shorter than this never interrupts the agent. */
  interruption_min_speech_ms?: number;
  voicemail?: { detect?: boolean; action?: 'hangup' | 'leave_message'; message?: string };
  [unknown: string]: unknown;
}

const nonBlank = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } as const;
const serviceId = { type: 'integer', minimum: 1, description: 'An AI service of the organization offering this kind (400 `ai_service_not_found` / `ai_service_kind_mismatch`).' } as const;

/** JSON Schema of `workflow_configurations`: plain data (no `$ref`), embeddable in OpenAPI 3.1, no defaults. */
export const workflowConfigurationsSchema = {
  type: 'object',
  description: 'How the agent talks (API.md 11). Known keys are validated; unknown keys are kept as sent.',
  additionalProperties: true,
  properties: {
    llm: {
      type: 'object', required: ['service_id', 'model'], additionalProperties: true,
      properties: { service_id: serviceId, model: { ...nonBlank, examples: ['gpt-4o-mini'] }, temperature: { type: 'number', minimum: 0, maximum: 2 } },
    },
    stt: {
      type: 'object', required: ['service_id'], additionalProperties: true,
      properties: { service_id: serviceId, model: { ...nonBlank, examples: ['nova-3'] }, language: { ...nonBlank, maxLength: 35, examples: ['en'] } },
    },
    tts: {
      type: 'object', required: ['service_id'], additionalProperties: true,
      properties: { service_id: serviceId, voice: { ...nonBlank, description: 'The provider\'s voice id' }, model: nonBlank },
    },
    max_call_duration_seconds: { type: 'integer', minimum: 10, maximum: 14400, description: 'At the limit the agent says goodbye and hangs up.' },
    user_idle_timeout_seconds: { type: 'integer', minimum: 3, maximum: 120, description: 'First silence: the agent checks in; second: it ends the call.' },
    interruption_min_speech_ms: { type: 'integer', minimum: 0, maximum: 5000, description: 'Caller speech shorter than this never interrupts the agent.' },
    voicemail: {
      type: 'object', additionalProperties: true,
      properties: {
        detect: { type: 'boolean' },
        action: { type: 'string', enum: ['hangup', 'leave_message'] },
        message: { type: 'string', maxLength: 2000, description: 'What the agent says to a voicemail (action leave_message).' },
      },
    },
  },
} as const;

type Issues = ValidationIssue[];
type Loc = (string | number)[];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkInteger(v: unknown, loc: Loc, min: number, max: number, out: Issues): void {
  if (typeof v !== 'number' || !Number.isInteger(v)) out.push({ loc, msg: 'Input should be a valid integer', type: 'int_type' });
  else if (v < min) out.push({ loc, msg: `Input should be greater than or equal to ${min}`, type: 'greater_than_equal' });
  else if (v > max) out.push({ loc, msg: `Input should be less than or equal to ${max}`, type: 'less_than_equal' });
}

function checkText(v: unknown, loc: Loc, out: Issues, maxLength = 200, blankAllowed = false): void {
  if (typeof v !== 'string') out.push({ loc, msg: 'Input should be a valid string', type: 'string_type' });
  else if (!blankAllowed && v.length === 0) out.push({ loc, msg: 'String should have at least 1 character', type: 'string_too_short' });
  else if (v.length > maxLength) out.push({ loc, msg: `String should have at most ${maxLength} characters`, type: 'string_too_long' });
  else if (!blankAllowed && !/\S/u.test(v)) out.push({ loc, msg: 'Invalid value: a non-blank string', type: 'string_pattern_mismatch' });
}

function block(value: Record<string, unknown>, key: string, loc: Loc, out: Issues, check: (b: Record<string, unknown>, at: Loc) => void): void {
  if (!(key in value)) return;
  const b = value[key];
  if (!isObject(b)) {
    out.push({ loc: [...loc, key], msg: 'Input should be a valid object', type: 'dict_type' });
    return;
  }
  check(b, [...loc, key]);
}

function required(b: Record<string, unknown>, key: string, at: Loc, out: Issues): boolean {
  if (key in b) return true;
  out.push({ loc: [...at, key], msg: 'Field required', type: 'missing' });
  return false;
}

/**
 * Every problem of `value` as a 422 issue with `loc` under `loc` (default `["body","workflow_configurations"]`);
 * empty when valid. Pure. Does not look service ids up (`AiServiceReferences` does).
 */
export function validateWorkflowConfigurations(value: unknown, loc: Loc = ['body', 'workflow_configurations']): ValidationIssue[] {
  const out: Issues = [];
  if (!isObject(value)) return [{ loc, msg: 'Input should be a valid object', type: 'dict_type' }];
  const optional = (b: Record<string, unknown>, key: string, at: Loc, check: (v: unknown, l: Loc) => void) => {
    if (key in b) check(b[key], [...at, key]);
  };
  const id = (v: unknown, l: Loc) => checkInteger(v, l, 1, Number.POSITIVE_INFINITY, out);
  const text = (v: unknown, l: Loc) => checkText(v, l, out);
  block(value, 'llm', loc, out, (b, at) => {
    if (required(b, 'service_id', at, out)) id(b.service_id, [...at, 'service_id']);
    if (required(b, 'model', at, out)) text(b.model, [...at, 'model']);
    optional(b, 'temperature', at, (v, l) => {
      if (typeof v !== 'number' || !Number.isFinite(v)) out.push({ loc: l, msg: 'Input should be a valid number', type: 'float_type' });
      else if (v < 0) out.push({ loc: l, msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal' });
      else if (v > 2) out.push({ loc: l, msg: 'Input should be less than or equal to 2', type: 'less_than_equal' });
    });
  });
  block(value, 'stt', loc, out, (b, at) => {
    if (required(b, 'service_id', at, out)) id(b.service_id, [...at, 'service_id']);
    optional(b, 'model', at, text);
    optional(b, 'language', at, (v, l) => checkText(v, l, out, 35));
  });
  block(value, 'tts', loc, out, (b, at) => {
    if (required(b, 'service_id', at, out)) id(b.service_id, [...at, 'service_id']);
    optional(b, 'voice', at, text);
    optional(b, 'model', at, text);
  });
  optional(value, 'max_call_duration_seconds', loc, (v, l) => checkInteger(v, l, 10, 14400, out));
  optional(value, 'user_idle_timeout_seconds', loc, (v, l) => checkInteger(v, l, 3, 120, out));
  optional(value, 'interruption_min_speech_ms', loc, (v, l) => checkInteger(v, l, 0, 5000, out));
  block(value, 'voicemail', loc, out, (b, at) => {
    optional(b, 'detect', at, (v, l) => {
      if (typeof v !== 'boolean') out.push({ loc: l, msg: 'Input should be a valid boolean', type: 'bool_type' });
    });
    optional(b, 'action', at, (v, l) => {
      if (v !== 'hangup' && v !== 'leave_message') out.push({ loc: l, msg: 'Input should be "hangup", "leave_message"', type: 'enum' });
    });
    optional(b, 'message', at, (v, l) => checkText(v, l, out, 2000, true));
  });
  return out;
}

/** The AI services a (valid) configuration names, one per block that has a `service_id`. */
export function aiServiceReferences(config: Record<string, unknown>): Array<{ block: AiServiceBlock; serviceId: number }> {
  const refs: Array<{ block: AiServiceBlock; serviceId: number }> = [];
  for (const b of AI_SERVICE_BLOCKS) {
    const v = config?.[b];
    if (isObject(v) && typeof v.service_id === 'number') refs.push({ block: b, serviceId: v.service_id });
  }
  return refs;
}

/** True when the configuration names an llm, an stt and a tts service: an agent that can talk on a call. */
export function canTalk(config: Record<string, unknown>): boolean {
  const named = new Set(aiServiceReferences(config).map((r) => r.block));
  return AI_SERVICE_BLOCKS.every((b) => named.has(b));
}
