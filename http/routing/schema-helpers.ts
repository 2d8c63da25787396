import type { JsonSchema } from './route.js';

/** Small builders for the JSON Schemas of routes. */
export const str = (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', ...extra });
export const nonBlank = (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', minLength: 1, pattern: '\\S', ...extra });
export const int = (extra: JsonSchema = {}): JsonSchema => ({ type: 'integer', ...extra });
export const num = (extra: JsonSchema = {}): JsonSchema => ({ type: 'number', ...extra });
export const bool = (extra: JsonSchema = {}): JsonSchema => ({ type: 'boolean', ...extra });
export const dateTime = (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', format: 'date-time', ...extra });
export const nullable = (s: JsonSchema): JsonSchema => ({ anyOf: [s, { type: 'null' }] });
/**
 * Identifiers are positive integers (API.md section 1), bounded to what a JSON number holds exactly: a larger
 * or negative id is a 422, never a value a store could overflow on.
 */
export const id = (extra: JsonSchema = {}): JsonSchema => ({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, ...extra });
export const anyObject = (extra: JsonSchema = {}): JsonSchema => ({ type: 'object', additionalProperties: true, ...extra });
export const arr = (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: 'array', items, ...extra });

/**
 * An object schema. Request bodies set `strip` so unknown fields are dropped silently (FastAPI's default
 * of ignoring them) instead of being stored; responses list their fields as `required`.
 */
export function obj(properties: Record<string, JsonSchema>, required: string[] = [], extra: JsonSchema = {}): JsonSchema {
  return { type: 'object', properties, required, ...extra };
}

/** Path parameters: every one an integer id ≥ 1 unless given. */
export function pathParams(...names: string[]): JsonSchema {
  return obj(Object.fromEntries(names.map((n) => [n, id()])), names);
}

/**
 * The highest `page` a list accepts: with `limit` ≤ 100 the offset stays ≤ 10^8, far inside every store's
 * integer range (a page of 922337203685477580 once overflowed SQLite's OFFSET into a 500).
 */
export const MAX_PAGE = 1_000_000;

/** `page` 1..1,000,000 (default 1) and `limit` 1..100 (default 50), API.md section 1. */
export const pagination: Record<string, JsonSchema> = {
  page: int({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  limit: int({ minimum: 1, maximum: 100, default: 50 }),
};

export const deletedResponse: JsonSchema = obj({ id: id(), deleted: { const: true } }, ['id', 'deleted']);

export const errorBody: JsonSchema = obj({ detail: str(), code: str() }, ['detail', 'code'], { title: 'Error' });

export const validationErrorBody: JsonSchema = obj(
  {
    detail: arr(obj({ loc: arr({ anyOf: [str(), int()] }), msg: str(), type: str() }, ['loc', 'msg', 'type'])),
  },
  ['detail'],
  { title: 'ValidationError' },
);
