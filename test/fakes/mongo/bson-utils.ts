/**
 * TEST DOUBLE support code: value handling shared by the in-process MongoDB double.
 *
 * Every document that enters or leaves the double is copied through BSON (serialize + deserialize), the way
 * the real driver's wire round trip copies it: ObjectId, Date, Long, Decimal128, Binary and friends keep their
 * classes (structuredClone turns an ObjectId into a plain object), `undefined` becomes `null` (the driver's
 * default `ignoreUndefined: false`), and callers never share references with stored documents.
 */
import { BSON } from 'mongodb';

const { EJSON } = BSON;

/** The driver serializes with `ignoreUndefined: false` (undefined is stored as null); bson's own default drops it. */
const SERIALIZE = { ignoreUndefined: false } as const;
import type { Document } from 'mongodb';

/** Copies a document through BSON, like a round trip to the server. Throws on values BSON cannot hold. */
export function cloneDoc<T extends Document>(doc: T): T {
  return BSON.deserialize(BSON.serialize(doc, SERIALIZE)) as T;
}

/** Copies any value (scalar, array, document) through BSON. */
export function cloneValue<T>(value: T): T {
  if (value === undefined) return value;
  return (BSON.deserialize(BSON.serialize({ v: value }, SERIALIZE)) as { v: T }).v;
}

/** Byte-level equality of two documents (what the server uses to decide whether an update modified a doc). */
export function sameDocument(a: Document, b: Document): boolean {
  return Buffer.from(BSON.serialize(a, SERIALIZE)).equals(Buffer.from(BSON.serialize(b, SERIALIZE)));
}

/**
 * A canonical text for a value, used as an index key: canonical Extended JSON keeps BSON types apart
 * (the string "1" and the number 1 differ; two ObjectIds with the same hex are equal). JS numbers that are
 * integral and fractional share one representation each, so 1 and 1.0 collide as they do in a real index.
 */
export function keyText(value: unknown): string {
  if (value === undefined) return '<empty array>';
  return EJSON.stringify({ v: value } as Document, { relaxed: false });
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

export function hasOperatorKeys(doc: Document): boolean {
  return Object.keys(doc).some((k) => k.startsWith('$'));
}

/** 1 or -1 from the spellings the driver accepts for a sort/index direction. */
export function toDirection(value: unknown): 1 | -1 {
  if (value === 1 || value === '1' || value === 'asc' || value === 'ascending') return 1;
  if (value === -1 || value === '-1' || value === 'desc' || value === 'descending') return -1;
  if (typeof value === 'number') return value < 0 ? -1 : 1;
  if (isPlainObject(value) && '$meta' in value) {
    throw new Error(`Mongo test double: sort by { $meta: ${String(value.$meta)} } is not supported`);
  }
  throw new Error(`Mongo test double: invalid sort direction ${JSON.stringify(value)}`);
}

/**
 * Normalizes every sort form the driver's `Sort` type allows into `{ field: 1 | -1 }` (mingo sorts the
 * strings 'asc'/'desc' wrongly): `'field'`, `['field', dir]`, `[['a', 1], ['b', 'desc']]`, `{ a: 'asc' }`,
 * a `Map`, or `undefined`.
 */
export function normalizeSort(sort: unknown, direction?: unknown): Record<string, 1 | -1> | undefined {
  if (sort === undefined || sort === null) return undefined;
  const out: Record<string, 1 | -1> = {};
  if (typeof sort === 'string') {
    out[sort] = direction === undefined ? 1 : toDirection(direction);
    return out;
  }
  if (sort instanceof Map) {
    for (const [k, v] of sort as Map<string, unknown>) out[k] = toDirection(v);
    return out;
  }
  if (Array.isArray(sort)) {
    if (sort.length === 0) return undefined;
    if (typeof sort[0] === 'string' && sort.length === 2 && !Array.isArray(sort[1]) && typeof sort[1] !== 'string') {
      out[sort[0]] = toDirection(sort[1]);
      return out;
    }
    if (sort.length === 2 && typeof sort[0] === 'string' && typeof sort[1] === 'string'
      && ['asc', 'desc', 'ascending', 'descending'].includes(sort[1])) {
      out[sort[0]] = toDirection(sort[1]);
      return out;
    }
    for (const item of sort) {
      if (typeof item === 'string') out[item] = 1;
      else if (Array.isArray(item)) out[String(item[0])] = toDirection(item[1]);
      else throw new Error(`Mongo test double: invalid sort ${JSON.stringify(sort)}`);
    }
    return out;
  }
  if (typeof sort === 'object') {
    for (const [k, v] of Object.entries(sort as Record<string, unknown>)) out[k] = toDirection(v);
    return Object.keys(out).length ? out : undefined;
  }
  throw new Error(`Mongo test double: invalid sort ${JSON.stringify(sort)}`);
}

/** Sets a dotted path on a plain document, creating intermediate documents. */
export function setPath(doc: Document, path: string, value: unknown): void {
  const parts = path.split('.');
  let cur: Document = doc;
  for (let i = 0; i < parts.length - 1; i++) {
    const p = parts[i];
    if (!isPlainObject(cur[p])) cur[p] = {};
    cur = cur[p] as Document;
  }
  cur[parts[parts.length - 1]] = value;
}

export const MISSING: unique symbol = Symbol('missing');

/**
 * The values an index on `path` sees in `doc` (multikey: arrays on the path are expanded one level, as
 * MongoDB does). Returns `[MISSING]` when the path does not exist.
 */
export function valuesAtPath(doc: unknown, path: string): unknown[] {
  const parts = path.split('.');
  let current: unknown[] = [doc];
  for (const part of parts) {
    const next: unknown[] = [];
    for (const value of current) {
      if (Array.isArray(value)) {
        if (/^\d+$/.test(part)) {
          const idx = Number(part);
          if (idx < value.length) next.push(value[idx]);
          continue;
        }
        for (const el of value) {
          if (el !== null && typeof el === 'object' && !Array.isArray(el) && part in (el as Document)) {
            next.push((el as Document)[part]);
          }
        }
      } else if (value !== null && typeof value === 'object' && part in (value as Document)) {
        next.push((value as Document)[part]);
      }
    }
    current = next;
  }
  if (current.length === 0) return [MISSING];
  const expanded: unknown[] = [];
  for (const v of current) {
    if (Array.isArray(v)) {
      if (v.length === 0) expanded.push(undefined);
      else expanded.push(...v);
    } else expanded.push(v);
  }
  return expanded;
}
