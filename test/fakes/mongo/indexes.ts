/**
 * TEST DOUBLE: index bookkeeping of the in-process MongoDB double. Only UNIQUE indexes change behaviour
 * (duplicate keys are rejected with code 11000, honouring compound keys, `sparse` and
 * `partialFilterExpression`, multikey arrays); other indexes are recorded so `indexes()` answers like the
 * server, but they do not speed anything up. TTL (`expireAfterSeconds`) is recorded, never enforced.
 */
import { Query } from 'mingo';
import type { Document } from 'mongodb';
import { keyText, MISSING, valuesAtPath } from './bson-utils.js';
import { serverError } from './errors.js';

export interface DoubleIndexDescription extends Document {
  v: 2;
  key: Record<string, number | string>;
  name: string;
  unique?: boolean;
  sparse?: boolean;
  partialFilterExpression?: Document;
  expireAfterSeconds?: number;
}

export const ID_INDEX: DoubleIndexDescription = { v: 2, key: { _id: 1 }, name: '_id_' };

const INDEX_TYPES = new Set(['2d', '2dsphere', 'text', 'hashed', 'geoHaystack']);

function indexDirection(value: unknown): number | string {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && INDEX_TYPES.has(value)) return value;
  throw serverError(67, 'CannotCreateIndex', `Values in the index key pattern can't be ${JSON.stringify(value)}`);
}

function isSingleTuple(t: unknown): boolean {
  return Array.isArray(t) && t.length === 2 && typeof t[0] === 'string'
    && (typeof t[1] === 'number' || (typeof t[1] === 'string' && INDEX_TYPES.has(t[1])));
}

/** Converts the driver's `IndexSpecification` forms into an ordered key document. */
export function normalizeIndexKey(spec: unknown): Record<string, number | string> {
  const key: Record<string, number | string> = {};
  const specs: unknown[] = !Array.isArray(spec) || isSingleTuple(spec) ? [spec] : spec;
  for (const s of specs) {
    if (typeof s === 'string') key[s] = 1;
    else if (Array.isArray(s)) key[String(s[0])] = indexDirection(s[1] ?? 1);
    else if (s instanceof Map) for (const [k, v] of s as Map<string, unknown>) key[k] = indexDirection(v);
    else if (s !== null && typeof s === 'object') for (const [k, v] of Object.entries(s)) key[k] = indexDirection(v);
  }
  if (Object.keys(key).length === 0) throw serverError(67, 'CannotCreateIndex', 'Index keys cannot be empty.');
  return key;
}

/** The server's default index name: `a_1_b_-1`. */
export function defaultIndexName(key: Record<string, number | string>): string {
  return Object.entries(key).map(([k, v]) => `${k}_${v}`).join('_');
}

const INDEX_OPTION_NAMES = ['unique', 'sparse', 'partialFilterExpression', 'expireAfterSeconds', 'collation', 'hidden',
  'weights', 'default_language', 'language_override', 'textIndexVersion', '2dsphereIndexVersion', 'bits', 'min', 'max',
  'wildcardProjection'];

export function buildIndexDescription(keySpec: unknown, options: Document = {}): DoubleIndexDescription {
  const key = normalizeIndexKey(keySpec);
  const desc: DoubleIndexDescription = { v: 2, key, name: typeof options.name === 'string' ? options.name : defaultIndexName(key) };
  for (const opt of INDEX_OPTION_NAMES) {
    if (options[opt] !== undefined) desc[opt] = options[opt];
  }
  if (options.defaultLanguage !== undefined) desc.default_language = options.defaultLanguage;
  if (options.languageOverride !== undefined) desc.language_override = options.languageOverride;
  if (desc.unique === false) delete desc.unique;
  if (desc.sparse === false) delete desc.sparse;
  return desc;
}

/** True when two descriptions describe the same index (key and behaviour-changing options). */
export function sameIndex(a: DoubleIndexDescription, b: DoubleIndexDescription): boolean {
  const pick = (d: DoubleIndexDescription) => keyText({ key: d.key, unique: !!d.unique, sparse: !!d.sparse,
    pfe: d.partialFilterExpression ?? null, ttl: d.expireAfterSeconds ?? null });
  return pick(a) === pick(b);
}

export function isUnique(index: DoubleIndexDescription): boolean {
  return index.name === '_id_' || index.unique === true;
}

export interface IndexEntry {
  /** One text per multikey combination. */
  texts: string[];
  /** The first combination as `{ field: value }`, for error messages (`keyValue`). */
  keyValue: Document;
}

/**
 * The keys `doc` contributes to `index`, or `null` when the index does not cover the document
 * (partial filter not matched, or sparse and every key field missing).
 */
export function indexEntry(index: DoubleIndexDescription, doc: Document): IndexEntry | null {
  if (index.partialFilterExpression && !new Query(index.partialFilterExpression).test(doc)) return null;
  const fields = Object.keys(index.key);
  const perField = fields.map((f) => valuesAtPath(doc, f));
  if (index.sparse && perField.every((vals) => vals.length === 1 && vals[0] === MISSING)) return null;
  let combos: unknown[][] = [[]];
  for (const vals of perField) {
    const next: unknown[][] = [];
    for (const combo of combos) {
      for (const v of vals) next.push([...combo, v === MISSING ? null : v]);
    }
    combos = next;
  }
  const texts = [...new Set(combos.map((c) => c.map((v) => keyText(v)).join('\u0000')))];
  const keyValue: Document = {};
  fields.forEach((f, i) => { keyValue[f] = combos[0][i]; });
  return { texts, keyValue };
}

const storedEntries = new WeakMap<Document, WeakMap<DoubleIndexDescription, IndexEntry | null>>();

/**
 * `indexEntry` of a STORED document, remembered per document and index: a stored document is never mutated in
 * place, only replaced (CollectionStore), so its keys cannot change. Without it every insert recomputed the keys of
 * every document already stored (an Extended JSON text per key), which made filling a collection quadratic.
 */
export function storedIndexEntry(index: DoubleIndexDescription, doc: Document): IndexEntry | null {
  let byIndex = storedEntries.get(doc);
  if (!byIndex) {
    byIndex = new WeakMap();
    storedEntries.set(doc, byIndex);
  }
  if (byIndex.has(index)) return byIndex.get(index)!;
  const entry = indexEntry(index, doc);
  byIndex.set(index, entry);
  return entry;
}
