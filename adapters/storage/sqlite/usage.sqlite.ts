import type Database from 'better-sqlite3';
import { sliceAtOffset, sliceRanges, sumUsageTotals, type UsageSlice } from '../../../core/usage/usage-slices.js';
import type { UsagePage, UsageRepository } from '../../../core/ports/usage.repository.port.js';
import { EMPTY_USAGE_TOTALS, type UsageCursor, type UsageFilter, type UsageRecord, type UsageTotals } from '../../../core/usage/usage.js';
import type { SqliteDatabase } from './database.js';
import { runFromRow, type RunRow } from './run.sqlite.js';

type Params = Record<string, string | number>;



export interface SqliteUsageOptions {
  /** How many time slices a range is cut into while locating a deep page's boundary (default 16). */
  slices?: number;
  /** A boundary inside at most this many matching runs is found with an index-only OFFSET (default 4096). */
  offsetThreshold?: number;
}

/** The covering index of migration 5: every filterable column, in the report's order (see 005-usage.ts). */
const CREATED = 'runs_usage_created';

/** The filter's conditions besides created_at, as SQL on the columns (optionally table-qualified) and parameters. */
export function usageConditions(organizationId: number, f: UsageFilter, table = ''): { sql: string; params: Params } {
  const c = (col: string) => (table ? `${table}.${col}` : col);
  const parts = [`${c('organization_id')} = @org`];
  const params: Params = { org: organizationId };
  if (f.runId !== undefined) { parts.push(`${c('id')} = @run_id`); params.run_id = f.runId; }
  if (f.workflowId !== undefined) { parts.push(`${c('workflow_id')} = @workflow_id`); params.workflow_id = f.workflowId; }
  if (f.campaignId !== undefined) { parts.push(`${c('campaign_id')} = @campaign_id`); params.campaign_id = f.campaignId; }
  if (f.mode !== undefined) { parts.push(`${c('mode')} = @mode`); params.mode = f.mode; }
  if (f.dispositions !== undefined) {
    parts.push(`${c('disposition')} IN (${f.dispositions.map((_, i) => `@disp${i}`).join(', ')})`);
    f.dispositions.forEach((d, i) => { params[`disp${i}`] = d; });
  }
  (f.callerNumberContains ?? []).forEach((s, i) => { parts.push(`instr(${c('caller_number')}, @caller${i}) > 0`); params[`caller${i}`] = s; });
  (f.calledNumberContains ?? []).forEach((s, i) => { parts.push(`instr(${c('called_number')}, @called${i}) > 0`); params[`called${i}`] = s; });
  if (f.durationMin !== undefined) { parts.push(`COALESCE(${c('duration_seconds')}, 0) >= @dur_min`); params.dur_min = f.durationMin; }
  if (f.durationMax !== undefined) { parts.push(`COALESCE(${c('duration_seconds')}, 0) <= @dur_max`); params.dur_max = f.durationMax; }
  return { sql: parts.join(' AND '), params };
}

/**
 * The index a query over `f` uses: always the covering `runs_usage_created` (the date window bounds the work; see
 * 005-usage.ts for why there are no narrower ones). A run id filter goes through the primary key instead.
 */
export function usageIndexFor(_f: UsageFilter, _purpose: 'totals' | 'order'): string {
  return CREATED;
}

/**
 * UsageRepository on SQLite. Every read is answered from the covering index of migration 5; a page is one read
 * transaction (a consistent snapshot for page and totals).
 *
 * Deep pages without OFFSET scans: page 1 is a keyset seek from the top plus one aggregate (count and sums) over
 * the index range. For a later page whose boundary lies beyond `offsetThreshold` matching runs, the date range
 * (bounded by the organization's first and last run) is cut into `slices` time slices, newest first, and each
 * slice's count and sums are read from the covering index: together they are the totals (the same index entries
 * the single aggregate would read), and their running count tells which slice holds the page's first run. That
 * slice is cut again while it holds more than `offsetThreshold` matches; inside the last one an index-only OFFSET
 * (never touching the table) finds the boundary key (created_at, id), and the page is a keyset seek from that key.
 * So page 10,000 reads the same index entries as the totals of page 1, plus at most a slice's worth: it does not
 * slow down with depth.
 */
export class SqliteUsageRepository implements UsageRepository {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly sliceCount: number;
  private readonly offsetThreshold: number;

  constructor(private readonly db: SqliteDatabase, options: SqliteUsageOptions = {}) {
    this.sliceCount = Math.max(2, Math.floor(options.slices ?? 16));
    this.offsetThreshold = Math.max(1, Math.floor(options.offsetThreshold ?? 4096));
  }

  async page(organizationId: number, filter: UsageFilter, paging: { page: number; limit: number }): Promise<UsagePage> {
    const limit = Math.max(1, Math.floor(paging.limit));
    const offset = (Math.max(1, Math.floor(paging.page)) - 1) * limit;
    return this.db.transaction((): UsagePage => {
      const range = this.range(organizationId, filter);
      if (!range) return { records: [], totals: { ...EMPTY_USAGE_TOTALS } };
      if (filter.runId !== undefined || offset <= this.offsetThreshold) {
        const totals = this.aggregate(organizationId, filter, range.lo, range.hi);
        if (offset >= totals.count) return { records: [], totals };
        const key = offset === 0 ? null : this.keyAtOffset(organizationId, filter, range.lo, range.hi, offset);
        return { records: key || offset === 0 ? this.fetch(organizationId, filter, range.lo, range.hi, key, true, limit) : [], totals };
      }
      const { totals, key } = this.locate(organizationId, filter, range.lo, range.hi, offset);
      return { records: key ? this.fetch(organizationId, filter, range.lo, range.hi, key, true, limit) : [], totals };
    }).deferred();
  }

  async after(organizationId: number, filter: UsageFilter, cursor: UsageCursor | null, limit: number): Promise<UsageRecord[]> {
    return this.db.transaction((): UsageRecord[] => {
      const range = this.range(organizationId, filter);
      if (!range) return [];
      const key = cursor ? { c: cursor.createdAt.getTime(), i: cursor.id } : null;
      return this.fetch(organizationId, filter, range.lo, range.hi, key, false, Math.max(1, Math.floor(limit)));
    }).deferred();
  }

  /** The filter's date range narrowed to the organization's first and last run (index ends, O(log n)); null when empty. */
  private range(org: number, f: UsageFilter): { lo: number; hi: number } | null {
    const from = f.createdFrom ? f.createdFrom.getTime() : Number.MIN_SAFE_INTEGER;
    const to = f.createdTo ? f.createdTo.getTime() : Number.MAX_SAFE_INTEGER;
    if (from > to) return null;
    const end = (dir: 'ASC' | 'DESC') =>
      this.stmt(`SELECT created_at AS t FROM runs INDEXED BY ${CREATED}
        WHERE organization_id = @org AND created_at BETWEEN @from AND @to ORDER BY created_at ${dir} LIMIT 1`)
        .get({ org, from, to }) as { t: number } | undefined;
    const first = end('ASC');
    if (!first) return null;
    return { lo: first.t, hi: end('DESC')!.t };
  }

  private aggregate(org: number, f: UsageFilter, lo: number, hi: number): UsageTotals {
    const cond = usageConditions(org, f);
    const indexed = f.runId !== undefined ? '' : `INDEXED BY ${usageIndexFor(f, 'totals')}`;
    const r = this.stmt(`SELECT COUNT(*) AS n, TOTAL(service_token_usage) AS tokens, TOTAL(duration_seconds) AS duration
      FROM runs ${indexed} WHERE ${cond.sql} AND created_at BETWEEN @lo AND @hi`)
      .get({ ...cond.params, lo, hi }) as { n: number; tokens: number; duration: number };
    return { count: r.n, serviceTokens: r.tokens, durationSeconds: r.duration };
  }

  /** The (created_at, id) of the `offset`-th (0-based) matching run within [lo, hi], from the index alone. */
  private keyAtOffset(org: number, f: UsageFilter, lo: number, hi: number, offset: number): { c: number; i: number } | null {
    const cond = usageConditions(org, f);
    const indexed = f.runId !== undefined ? '' : `INDEXED BY ${usageIndexFor(f, 'order')}`;
    const r = this.stmt(`SELECT created_at AS c, id AS i FROM runs ${indexed}
      WHERE ${cond.sql} AND created_at BETWEEN @lo AND @hi ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET @offset`)
      .get({ ...cond.params, lo, hi, offset }) as { c: number; i: number } | undefined;
    return r ?? null;
  }

  /** Totals over [lo, hi] and the boundary key at `offset`, reading each index entry about once (see the class doc). */
  private locate(org: number, f: UsageFilter, lo: number, hi: number, offset: number): { totals: UsageTotals; key: { c: number; i: number } | null } {
    let slices = this.split(org, f, lo, hi);
    const totals = sumUsageTotals(slices);
    if (offset >= totals.count) return { totals, key: null };
    let rest = offset;
    for (;;) {
      const at = sliceAtOffset(slices, rest, this.offsetThreshold);
      if (at.final) return { totals, key: this.keyAtOffset(org, f, at.slice.lo, at.slice.hi, at.rest) };
      rest = at.rest;
      slices = this.split(org, f, at.slice.lo, at.slice.hi);
    }
  }

  /** [lo, hi] cut into up to `sliceCount` contiguous time slices with their totals, newest first. */
  private split(org: number, f: UsageFilter, lo: number, hi: number): UsageSlice[] {
    return sliceRanges(lo, hi, this.sliceCount).map((r) => ({ ...r, totals: this.aggregate(org, f, r.lo, r.hi) }));
  }

  /**
   * Up to `limit` matching runs in [lo, hi] at or after (`inclusive`) / strictly after `key` in the report's
   * order, with their workflow's name: a keyset seek on the ordered index.
   */
  private fetch(org: number, f: UsageFilter, lo: number, hi: number, key: { c: number; i: number } | null, inclusive: boolean, limit: number): UsageRecord[] {
    const cond = usageConditions(org, f, 'r');
    const indexed = f.runId !== undefined ? '' : `INDEXED BY ${usageIndexFor(f, 'order')}`;
    const seek = key ? `AND (r.created_at < @kc OR r.id ${inclusive ? '<=' : '<'} @ki)` : '';
    const rows = this.stmt(`SELECT r.*, w.name AS workflow_name FROM runs AS r ${indexed}
      LEFT JOIN workflows AS w ON w.id = r.workflow_id
      WHERE ${cond.sql} AND r.created_at BETWEEN @lo AND @hi ${seek}
      ORDER BY r.created_at DESC, r.id DESC LIMIT @limit`)
      .all({ ...cond.params, lo, hi: key ? Math.min(hi, key.c) : hi, limit, ...(key ? { kc: key.c, ki: key.i } : {}) }) as (RunRow & { workflow_name: string | null })[];
    return rows.map((r) => ({ run: runFromRow(r), workflowName: r.workflow_name }));
  }

  /** Prepared statements by SQL text (the text depends only on which filters are present and list lengths). */
  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      if (this.statements.size >= 500) this.statements.clear();
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }
}
