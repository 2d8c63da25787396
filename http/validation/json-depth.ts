import { ValidationError } from '../../core/errors.js';

/**
 * How deep a JSON body may nest objects and arrays. Generous for every documented body (a workflow
 * definition nests about 6 levels) and far below what recursive code down the line (schema validation,
 * cloning, serializing, storage) can walk without exhausting the stack.
 */
export const MAX_JSON_DEPTH = 32;

const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * The deepest nesting of objects and arrays in raw JSON text, found in one iterative pass (no recursion,
 * no parsing): brackets inside strings do not count. Stops early, returning a value above `limit`, once
 * `limit` is exceeded. Malformed text is measured as far as it goes (the JSON parser reports it).
 */
export function jsonDepth(raw: Uint8Array, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Refuses a JSON body nested deeper than `MAX_JSON_DEPTH` with a 422 (FastAPI shape, `loc: ["body"]`,
 * `type: "json_too_deep"`), before anything parses or walks it.
 */
export function assertJsonDepth(raw: Uint8Array, limit = MAX_JSON_DEPTH): void {
  if (jsonDepth(raw, limit) > limit) {
    throw new ValidationError([{ loc: ['body'], msg: `JSON nested deeper than ${limit} levels`, type: 'json_too_deep' }]);
  }
}
