/**
 * Translation of Agenda's database-agnostic filters (RemoveJobsOptions, JobsQueryOptions.data, a job's
 * `unique` query) into SQL over the jobs table. The semantics follow the MongoDB backend, which is the
 * reference: a `unique` object is a query on field paths (`'data.userId'`, `'name'`, ...) whose values are
 * literals (equality) or a small set of comparison operators; a `data` filter matches partially, key by key.
 */

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

type ColumnKind = 'text' | 'int' | 'real' | 'date' | 'bool' | 'json' | 'id';

/** Job fields that may appear in a `unique` query, with their column and storage kind. */
const FIELD_COLUMNS: Record<string, { column: string; kind: ColumnKind }> = {
  _id: { column: 'id', kind: 'id' },
  name: { column: 'name', kind: 'text' },
  priority: { column: 'priority', kind: 'int' },
  type: { column: 'type', kind: 'text' },
  nextRunAt: { column: 'next_run_at', kind: 'date' },
  lockedAt: { column: 'locked_at', kind: 'date' },
  lastRunAt: { column: 'last_run_at', kind: 'date' },
  lastFinishedAt: { column: 'last_finished_at', kind: 'date' },
  failedAt: { column: 'failed_at', kind: 'date' },
  failCount: { column: 'fail_count', kind: 'int' },
  failReason: { column: 'fail_reason', kind: 'text' },
  repeatInterval: { column: 'repeat_interval', kind: 'json' },
  repeatTimezone: { column: 'repeat_timezone', kind: 'text' },
  repeatAt: { column: 'repeat_at', kind: 'text' },
  disabled: { column: 'disabled', kind: 'bool' },
  progress: { column: 'progress', kind: 'real' },
  lastModifiedBy: { column: 'last_modified_by', kind: 'text' },
  debounceStartedAt: { column: 'debounce_started_at', kind: 'date' },
  startDate: { column: 'start_date', kind: 'date' },
  endDate: { column: 'end_date', kind: 'date' },
  fork: { column: 'fork', kind: 'bool' },
  data: { column: 'data', kind: 'json' },
};

const COMPARISON_OPERATORS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists']);

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** A JSON path for SQLite's json functions, every segment quoted so dots and odd characters are literal. */
export function jsonPath(segments: string[]): string {
  return '$' + segments.map((s) => '."' + s.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"').join('');
}

/** Serializes job data the way it is stored (JSON; Dates become ISO strings). */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value);
}

type Target = { type: 'column'; column: string; kind: ColumnKind } | { type: 'json'; path: string };

function targetFor(fieldPath: string): Target {
  const known = FIELD_COLUMNS[fieldPath];
  if (known) return { type: 'column', column: known.column, kind: known.kind };
  if (fieldPath.startsWith('data.')) {
    const segments = fieldPath.slice('data.'.length).split('.');
    if (segments.some((s) => s.length === 0)) throw new Error(`Invalid field path "${fieldPath}"`);
    return { type: 'json', path: jsonPath(segments) };
  }
  throw new Error(`Unsupported field "${fieldPath}" in a job filter`);
}

/** Converts a JS value to what the column stores, for comparisons. */
function columnValue(kind: ColumnKind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case 'date':
      return value instanceof Date ? value.getTime() : typeof value === 'string' ? new Date(value).getTime() : value;
    case 'bool':
      return value === true ? 1 : value === false ? 0 : value;
    case 'json':
      return toJsonText(value);
    case 'id':
      return String(value);
    default:
      return value;
  }
}

/** Equality of a stored value against a literal, with MongoDB's null-matches-missing rule. */
function equals(target: Target, value: unknown): SqlFragment {
  if (target.type === 'column') {
    const v = columnValue(target.kind, value);
    if (v === null) return { sql: `${target.column} IS NULL`, params: [] };
    return { sql: `${target.column} = ?`, params: [v] };
  }
  const p = target.path;
  if (value === null || value === undefined) return { sql: `json_extract(data, ?) IS NULL`, params: [p] };
  if (typeof value === 'boolean') return { sql: `json_type(data, ?) = ?`, params: [p, value ? 'true' : 'false'] };
  if (typeof value === 'number' || typeof value === 'bigint') {
    return { sql: `(json_type(data, ?) IN ('integer', 'real') AND json_extract(data, ?) = ?)`, params: [p, p, value] };
  }
  if (typeof value === 'string') return { sql: `(json_type(data, ?) = 'text' AND json_extract(data, ?) = ?)`, params: [p, p, value] };
  if (value instanceof Date) return { sql: `(json_type(data, ?) = 'text' AND json_extract(data, ?) = ?)`, params: [p, p, value.toISOString()] };
  // Objects and arrays: whole-value equality on the minified JSON text.
  return { sql: `(json_type(data, ?) IN ('object', 'array') AND json_extract(data, ?) = ?)`, params: [p, p, JSON.stringify(value)] };
}

function comparable(target: Target, value: unknown): unknown {
  if (target.type === 'column') return columnValue(target.kind, value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}

function operatorCondition(target: Target, op: string, operand: unknown): SqlFragment {
  const expr = target.type === 'column' ? target.column : 'json_extract(data, ?)';
  const exprParams = target.type === 'column' ? [] : [target.path];
  switch (op) {
    case '$eq':
      return equals(target, operand);
    case '$ne': {
      const eq = equals(target, operand);
      return { sql: `NOT (${eq.sql})`, params: eq.params };
    }
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte': {
      const sqlOp = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' }[op];
      return { sql: `(${expr} IS NOT NULL AND ${expr} ${sqlOp} ?)`, params: [...exprParams, ...exprParams, comparable(target, operand)] };
    }
    case '$in':
    case '$nin': {
      if (!Array.isArray(operand)) throw new Error(`${op} needs an array`);
      const parts = operand.map((v) => equals(target, v));
      const any = parts.length === 0 ? { sql: '0', params: [] } : { sql: parts.map((p) => p.sql).join(' OR '), params: parts.flatMap((p) => p.params) };
      return op === '$in' ? { sql: `(${any.sql})`, params: any.params } : { sql: `NOT (${any.sql})`, params: any.params };
    }
    case '$exists': {
      const present = target.type === 'column' ? `${target.column} IS NOT NULL` : `json_type(data, ?) IS NOT NULL`;
      const params = target.type === 'column' ? [] : [target.path];
      return operand ? { sql: present, params } : { sql: `NOT (${present})`, params };
    }
    default:
      throw new Error(`Unsupported operator "${op}" in a job filter`);
  }
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((k) => k.startsWith('$'));
}

/** One field-path condition: a literal (equality) or an object of comparison operators. */
export function fieldCondition(fieldPath: string, value: unknown): SqlFragment {
  const target = targetFor(fieldPath);
  if (isOperatorObject(value)) {
    const parts = Object.entries(value).map(([op, operand]) => {
      if (!COMPARISON_OPERATORS.has(op)) throw new Error(`Unsupported operator "${op}" in a unique() constraint`);
      return operatorCondition(target, op, operand);
    });
    return and(parts);
  }
  return equals(target, value);
}

export function and(parts: SqlFragment[]): SqlFragment {
  if (parts.length === 0) return { sql: '1', params: [] };
  return { sql: parts.map((p) => `(${p.sql})`).join(' AND '), params: parts.flatMap((p) => p.params) };
}

/** A `unique()` query object → SQL. Keys starting with `$` at the top level (e.g. `$where`) are refused. */
export function uniqueCondition(unique: Record<string, unknown>): SqlFragment {
  const parts: SqlFragment[] = [];
  for (const [key, value] of Object.entries(unique)) {
    if (key.startsWith('$')) throw new Error(`Unsupported operator "${key}" in a unique() constraint`);
    parts.push(fieldCondition(key, value));
  }
  return and(parts);
}

/** Flattens `{a: {b: 1}}` into `['data.a.b', 1]` pairs (partial matching on the data object). */
function flattenData(value: Record<string, unknown>, prefix: string, out: Array<[string, unknown]>): void {
  for (const [k, v] of Object.entries(value)) {
    const path = `${prefix}.${k}`;
    if (isPlainObject(v)) flattenData(v, path, out);
    else out.push([path, v]);
  }
}

/** A `data` filter of queryJobs/removeJobs: partial match for objects, whole-value equality otherwise. */
export function dataCondition(data: unknown): SqlFragment {
  if (isPlainObject(data)) {
    const pairs: Array<[string, unknown]> = [];
    flattenData(data, 'data', pairs);
    return and(pairs.map(([path, v]) => equals(targetFor(path), v)));
  }
  return equals({ type: 'column', column: 'data', kind: 'json' }, data);
}

export interface RemoveLikeOptions {
  id?: string;
  ids?: string[];
  name?: string;
  names?: string[];
  notNames?: string[];
  data?: unknown;
}

/**
 * The filter of removeJobs/disableJobs/enableJobs. Returns null when no criterion is given: those
 * operations then touch nothing (as the MongoDB backend does).
 */
export function selectionCondition(options: RemoveLikeOptions): SqlFragment | null {
  const parts: SqlFragment[] = [];
  if (options.id) {
    parts.push({ sql: 'id = ?', params: [String(options.id)] });
  } else if (Array.isArray(options.ids) && options.ids.length > 0) {
    const ids = options.ids.map((i) => String(i));
    parts.push({ sql: `id IN (${ids.map(() => '?').join(', ')})`, params: ids });
  }
  if (options.name && typeof options.name === 'string') {
    parts.push({ sql: 'name = ?', params: [options.name] });
  } else if (Array.isArray(options.names) && options.names.some((n) => typeof n === 'string')) {
    const names = options.names.filter((n) => typeof n === 'string');
    parts.push({ sql: `name IN (${names.map(() => '?').join(', ')})`, params: names });
  } else if (Array.isArray(options.notNames) && options.notNames.some((n) => typeof n === 'string')) {
    const names = options.notNames.filter((n) => typeof n === 'string');
    parts.push({ sql: `name NOT IN (${names.map(() => '?').join(', ')})`, params: names });
  }
  if (options.data !== undefined) parts.push(dataCondition(options.data));
  return parts.length === 0 ? null : and(parts);
}
