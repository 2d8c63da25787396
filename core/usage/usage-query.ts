import { ValidationError, type ValidationIssue } from '../errors.js';
import type { RunMode } from '../runs/run.js';
import type { UsageFilter } from './usage.js';

/** The report's query as the API receives it (strings as sent; page/limit already validated). */
export interface UsageQueryInput {
  start_date?: string;
  end_date?: string;
  filters?: string;
}

/** A parsed query: the filter, or `matchesNothing` when its conditions contradict each other. */
export interface ParsedUsageQuery {
  filter: UsageFilter;
  /** True when no run can match (two different run ids, disjoint disposition lists, ...): skip the store. */
  matchesNothing: boolean;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * An ISO 8601 date or date-time; without an offset it is UTC (API.md section 9). Timestamps are stored to the
 * millisecond, so a finer fraction is rounded inward: up for a lower bound (`start`), down for an upper bound
 * (`end`), keeping both bounds inclusive of exactly the instants the value covers. A date alone is its midnight.
 * Null when unparseable or out of range (month 13, 25:00, Feb 30, ...).
 */
export function parseUsageDateTime(value: string, bound: 'start' | 'end'): Date | null {
  const m = ISO.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', off] = m;
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  let offsetMinutes = 0;
  if (off && off !== 'Z' && off !== 'z') {
    const digits = off.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2)), om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (off[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const base = Date.UTC(year, month - 1, day, hour, minute, second);
  // year 0-99 would be mapped to 1900-1999 by Date.UTC
  const fixed = year < 100 ? new Date(base).setUTCFullYear(year) : base;
  let ms = 0;
  if (frac) {
    const whole = frac.slice(0, 3).padEnd(3, '0');
    ms = Number(whole);
    const finer = /[1-9]/.test(frac.slice(3));
    if (finer && bound === 'start') ms += 1;
  }
  const t = fixed + ms - offsetMinutes * 60_000;
  return Number.isFinite(t) && Math.abs(t) <= 8.64e15 ? new Date(t) : null;
}

type FilterItem = { attribute: string; type: string; value: Record<string, unknown> };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Expected `type` per supported attribute (spec 4.9 plus `callDirection`). */
const ATTRIBUTE_TYPES: Record<string, string> = {
  runId: 'number', workflowId: 'number', campaignId: 'number', callerNumber: 'text', calledNumber: 'text',
  dispositionCode: 'multiSelect', duration: 'numberRange', callDirection: 'radio',
};

/** The `value` each attribute takes, quoted in the 422 for a malformed one (API.md section 9). */
const VALUE_SHAPES: Record<string, string> = {
  runId: '{"value": <number>}', workflowId: '{"value": <number>}', campaignId: '{"value": <number>}',
  callerNumber: '{"value": "<text>"}', calledNumber: '{"value": "<text>"}', dispositionCode: '{"codes": ["<code>", ...]}',
  duration: '{"min": <seconds>|null, "max": <seconds>|null}', callDirection: '{"value": "inbound"|"outbound"}',
};

/**
 * Builds the store-neutral filter from the query, or throws `ValidationError` (422) for an unparseable date
 * (`["query","start_date"]`/`["query","end_date"]`) or a `filters` that is not JSON or not an array
 * (`["query","filters"]`). Filter items whose attribute is unknown or whose `type` is not the attribute's are
 * ignored (spec 4.9); an item whose attribute and type are known but whose `value` has the wrong shape (`"5"` for a
 * number, codes that are not a list of strings, `min` > `max`) is a 422 on `["query","filters",<index>,"value"]`,
 * every such item reported at once (API.md section 9). An empty text, an empty code list and a range without
 * bounds are no constraint (a filter form left blank). The same attribute twice narrows further (AND).
 */
export function parseUsageQuery(input: UsageQueryInput): ParsedUsageQuery {
  const issues: ValidationIssue[] = [];
  const filter: UsageFilter = {};
  let matchesNothing = false;
  for (const [key, bound] of [['start_date', 'start'], ['end_date', 'end']] as const) {
    const raw = input[key];
    if (raw === undefined) continue;
    const at = parseUsageDateTime(raw, bound);
    if (!at) issues.push({ loc: ['query', key], msg: 'Input should be a valid datetime (ISO 8601, e.g. 2026-03-01T00:00:00Z)', type: 'datetime_parsing' });
    else if (bound === 'start') filter.createdFrom = at;
    else filter.createdTo = at;
  }
  let items: unknown[] = [];
  if (input.filters !== undefined && input.filters.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.filters);
    } catch {
      issues.push({ loc: ['query', 'filters'], msg: 'Invalid JSON: filters must be a JSON-encoded array of {attribute, type, value}', type: 'json_invalid' });
    }
    if (parsed !== undefined) {
      if (Array.isArray(parsed)) items = parsed;
      else issues.push({ loc: ['query', 'filters'], msg: 'Input should be a valid list (a JSON array of {attribute, type, value})', type: 'list_type' });
    }
  }
  if (issues.length > 0) throw new ValidationError(issues);

  const exact = (key: 'runId' | 'workflowId' | 'campaignId', v: number) => {
    if (filter[key] !== undefined && filter[key] !== v) matchesNothing = true;
    filter[key] = v;
  };
  const bad = (index: number, msg: string, type: string) => issues.push({ loc: ['query', 'filters', index, 'value'], msg, type });
  items.forEach((raw, index) => {
    if (!isObject(raw) || typeof raw.attribute !== 'string') return;
    const item = raw as FilterItem;
    if (ATTRIBUTE_TYPES[item.attribute] === undefined || ATTRIBUTE_TYPES[item.attribute] !== item.type) return;
    // a known attribute with its type: from here a malformed value is the client's mistake, not "no filter"
    if (!isObject(item.value)) return bad(index, `Input should be a valid object (${VALUE_SHAPES[item.attribute]})`, 'dict_type');
    const v = item.value;
    switch (item.attribute) {
      case 'runId':
      case 'workflowId':
      case 'campaignId':
        if (!isNumber(v.value)) return bad(index, `Input should be a valid number (${VALUE_SHAPES[item.attribute]})`, 'float_type');
        exact(item.attribute, v.value);
        return;
      case 'callerNumber':
      case 'calledNumber': {
        if (typeof v.value !== 'string') return bad(index, `Input should be a valid string (${VALUE_SHAPES[item.attribute]})`, 'string_type');
        if (v.value === '') return;
        const key = item.attribute === 'callerNumber' ? 'callerNumberContains' : 'calledNumberContains';
        filter[key] = [...(filter[key] ?? []), v.value];
        return;
      }
      case 'dispositionCode': {
        if (!Array.isArray(v.codes) || !v.codes.every((c) => typeof c === 'string')) {
          return bad(index, `Input should be a valid list of strings (${VALUE_SHAPES[item.attribute]})`, 'list_type');
        }
        if (v.codes.length === 0) return;
        const codes = [...new Set(v.codes as string[])];
        filter.dispositions = filter.dispositions ? filter.dispositions.filter((c) => codes.includes(c)) : codes;
        if (filter.dispositions.length === 0) matchesNothing = true;
        return;
      }
      case 'duration': {
        const okBound = (b: unknown) => b === undefined || b === null || isNumber(b);
        if (!okBound(v.min) || !okBound(v.max)) return bad(index, `min and max should be numbers or null (${VALUE_SHAPES[item.attribute]})`, 'float_type');
        if (isNumber(v.min) && isNumber(v.max) && v.min > v.max) return bad(index, 'min should be less than or equal to max', 'value_error');
        if (isNumber(v.min)) filter.durationMin = Math.max(filter.durationMin ?? -Infinity, v.min);
        if (isNumber(v.max)) filter.durationMax = Math.min(filter.durationMax ?? Infinity, v.max);
        return;
      }
      case 'callDirection': {
        if (v.value !== 'inbound' && v.value !== 'outbound') return bad(index, "Input should be 'inbound' or 'outbound'", 'literal_error');
        if (filter.mode !== undefined && filter.mode !== v.value) matchesNothing = true;
        filter.mode = v.value as RunMode;
        return;
      }
    }
  });
  if (issues.length > 0) throw new ValidationError(issues);
  if (filter.createdFrom && filter.createdTo && filter.createdFrom > filter.createdTo) matchesNothing = true;
  if (filter.durationMin !== undefined && filter.durationMax !== undefined && filter.durationMin > filter.durationMax) matchesNothing = true;
  for (const k of ['runId', 'workflowId', 'campaignId'] as const) {
    // ids are positive integers: 1.5 or -3 can match no run
    if (filter[k] !== undefined && !(Number.isInteger(filter[k]) && filter[k]! > 0)) matchesNothing = true;
  }
  return { filter, matchesNothing };
}
