import type { Db, Document, Filter } from 'mongodb';
import { sliceAtOffset, sliceRanges, sumUsageTotals, type UsageSlice } from '../../../core/usage/usage-slices.js';
import type { UsagePage, UsageRepository } from '../../../core/ports/usage.repository.port.js';
import { EMPTY_USAGE_TOTALS, type UsageCursor, type UsageFilter, type UsageRecord, type UsageTotals } from '../../../core/usage/usage.js';
import { Collections } from './mongo-schema.js';
import { runFromDocument, type RunDocument } from './run.mongo.js';
import type { WorkflowDocument } from './workflow.mongo.js';

/** A regular expression matching `s` literally (case-sensitive substring). */
const literal = (s: string): RegExp => new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

/**
 * The filter as a MongoDB query on `runs` (pure; the reference semantics are `matchesUsageFilter`). A run without
 * a duration counts as 0 for the duration bounds; a run without a caller/called number or a disposition never
 * matches a filter on it. Date bounds are inclusive.
 */
export function usageQuery(organizationId: number, f: UsageFilter): Filter<RunDocument> {
  const and: Filter<RunDocument>[] = [];
  const q: Filter<RunDocument> = { organizationId };
  if (f.createdFrom || f.createdTo) {
    q.createdAt = { ...(f.createdFrom ? { $gte: f.createdFrom } : {}), ...(f.createdTo ? { $lte: f.createdTo } : {}) };
  }
  if (f.runId !== undefined) q._id = f.runId;
  if (f.workflowId !== undefined) q.workflowId = f.workflowId;
  if (f.campaignId !== undefined) q.campaignId = f.campaignId;
  if (f.mode !== undefined) q.mode = f.mode;
  if (f.dispositions !== undefined) q.disposition = { $in: [...f.dispositions] };
  for (const s of f.callerNumberContains ?? []) and.push({ callerNumber: { $regex: literal(s) } });
  for (const s of f.calledNumberContains ?? []) and.push({ calledNumber: { $regex: literal(s) } });
  // a missing duration is 0: it is inside a bound exactly when 0 is
  if (f.durationMin !== undefined) {
    and.push(f.durationMin <= 0 ? { $or: [{ durationSeconds: { $gte: f.durationMin } }, { durationSeconds: null }] } : { durationSeconds: { $gte: f.durationMin } });
  }
  if (f.durationMax !== undefined) {
    and.push(f.durationMax >= 0 ? { $or: [{ durationSeconds: { $lte: f.durationMax } }, { durationSeconds: null }] } : { durationSeconds: { $lte: f.durationMax } });
  }
  return and.length > 0 ? { ...q, $and: and } : q;
}

/** Runs strictly after (or, `inclusive`, at or after) `key` in the report's order (createdAt desc, _id desc). */
export function seekQuery(key: { c: Date; i: number }, inclusive: boolean): Filter<RunDocument> {
  return { $or: [{ createdAt: { $lt: key.c } }, { createdAt: key.c, _id: inclusive ? { $lte: key.i } : { $lt: key.i } }] };
}

const ORDER = { createdAt: -1, _id: -1 } as const;

export interface MongoUsageOptions {
  /** How many time slices a range is cut into while locating a deep page's boundary (default 16). */
  slices?: number;
  /** A boundary inside at most this many matching runs is found with a skip (default 4096). */
  offsetThreshold?: number;
}



/**
 * UsageRepository on MongoDB, over the `runs` indexes on (organizationId, createdAt, _id). Totals are one
 * `$group` over the match. Deep pages are not reached by skipping every earlier match: as on SQLite, the date
 * range (narrowed to the organization's first and last run) is cut into time slices whose counts and sums are
 * aggregated (together they are the totals), the slice holding the page's first run is cut again while it holds
 * more than `offsetThreshold` matches, a skip inside the last one finds the boundary key (createdAt, _id), and
 * the page is a range query from that key. Reads are not one snapshot (no transaction): runs created meanwhile
 * may shift a page, as on any live report.
 */
export class MongoUsageRepository implements UsageRepository {
  private readonly sliceCount: number;
  private readonly offsetThreshold: number;

  constructor(private readonly db: Db, options: MongoUsageOptions = {}) {
    this.sliceCount = Math.max(2, Math.floor(options.slices ?? 16));
    this.offsetThreshold = Math.max(1, Math.floor(options.offsetThreshold ?? 4096));
  }

  private get runs() {
    return this.db.collection<RunDocument>(Collections.runs);
  }

  async page(organizationId: number, filter: UsageFilter, paging: { page: number; limit: number }): Promise<UsagePage> {
    const limit = Math.max(1, Math.floor(paging.limit));
    const offset = (Math.max(1, Math.floor(paging.page)) - 1) * limit;
    const range = await this.range(organizationId, filter);
    if (!range) return { records: [], totals: { ...EMPTY_USAGE_TOTALS } };
    let totals: UsageTotals;
    let key: { c: Date; i: number } | null = null;
    if (filter.runId !== undefined || offset <= this.offsetThreshold) {
      totals = await this.aggregate(organizationId, filter, range.lo, range.hi);
      if (offset >= totals.count) return { records: [], totals };
      if (offset > 0) key = await this.keyAtOffset(organizationId, filter, range.lo, range.hi, offset);
    } else {
      const located = await this.locate(organizationId, filter, range.lo, range.hi, offset);
      totals = located.totals;
      if (!located.key) return { records: [], totals };
      key = located.key;
    }
    if (offset > 0 && !key) return { records: [], totals };
    return { records: await this.fetch(organizationId, filter, range.lo, range.hi, key, true, limit), totals };
  }

  async after(organizationId: number, filter: UsageFilter, cursor: UsageCursor | null, limit: number): Promise<UsageRecord[]> {
    const range = await this.range(organizationId, filter);
    if (!range) return [];
    const key = cursor ? { c: new Date(cursor.createdAt), i: cursor.id } : null;
    return this.fetch(organizationId, filter, range.lo, range.hi, key, false, Math.max(1, Math.floor(limit)));
  }

  /** The filter's date range narrowed to the organization's first and last run in it (ms); null when empty. */
  private async range(org: number, f: UsageFilter): Promise<{ lo: number; hi: number } | null> {
    if (f.createdFrom && f.createdTo && f.createdFrom.getTime() > f.createdTo.getTime()) return null;
    const dates: Filter<RunDocument> = { organizationId: org };
    if (f.createdFrom || f.createdTo) dates.createdAt = { ...(f.createdFrom ? { $gte: f.createdFrom } : {}), ...(f.createdTo ? { $lte: f.createdTo } : {}) };
    const end = (dir: 1 | -1) => this.runs.find(dates, { projection: { createdAt: 1 } }).sort({ createdAt: dir, _id: dir }).limit(1).next();
    const first = await end(1);
    if (!first) return null;
    const last = await end(-1);
    return { lo: new Date(first.createdAt).getTime(), hi: new Date(last!.createdAt).getTime() };
  }

  private within(org: number, f: UsageFilter, lo: number, hi: number): Filter<RunDocument> {
    return { ...usageQuery(org, { ...f, createdFrom: new Date(lo), createdTo: new Date(hi) }) };
  }

  private async aggregate(org: number, f: UsageFilter, lo: number, hi: number): Promise<UsageTotals> {
    const [r] = await this.runs.aggregate<{ count: number; tokens: number; duration: number }>([
      { $match: this.within(org, f, lo, hi) as Document },
      { $group: { _id: null, count: { $sum: 1 }, tokens: { $sum: { $ifNull: ['$costInfo.service_token_usage', 0] } }, duration: { $sum: { $ifNull: ['$durationSeconds', 0] } } } },
    ]).toArray();
    return r ? { count: r.count, serviceTokens: r.tokens, durationSeconds: r.duration } : { ...EMPTY_USAGE_TOTALS };
  }

  /** The (createdAt, _id) of the `offset`-th (0-based) matching run within [lo, hi]. */
  private async keyAtOffset(org: number, f: UsageFilter, lo: number, hi: number, offset: number): Promise<{ c: Date; i: number } | null> {
    const d = await this.runs.find(this.within(org, f, lo, hi), { projection: { createdAt: 1 } }).sort(ORDER).skip(offset).limit(1).next();
    return d ? { c: new Date(d.createdAt), i: d._id } : null;
  }

  private async locate(org: number, f: UsageFilter, lo: number, hi: number, offset: number): Promise<{ totals: UsageTotals; key: { c: Date; i: number } | null }> {
    let slices = await this.split(org, f, lo, hi);
    const totals = sumUsageTotals(slices);
    if (offset >= totals.count) return { totals, key: null };
    let rest = offset;
    for (;;) {
      const at = sliceAtOffset(slices, rest, this.offsetThreshold);
      if (at.final) return { totals, key: await this.keyAtOffset(org, f, at.slice.lo, at.slice.hi, at.rest) };
      rest = at.rest;
      slices = await this.split(org, f, at.slice.lo, at.slice.hi);
    }
  }

  /** [lo, hi] cut into up to `sliceCount` contiguous time slices with their totals, newest first. */
  private async split(org: number, f: UsageFilter, lo: number, hi: number): Promise<UsageSlice[]> {
    const slices: UsageSlice[] = [];
    for (const r of sliceRanges(lo, hi, this.sliceCount)) slices.push({ ...r, totals: await this.aggregate(org, f, r.lo, r.hi) });
    return slices;
  }

  /** Up to `limit` matching runs from `key` on (report order) within [lo, hi], with their workflow's name. */
  private async fetch(org: number, f: UsageFilter, lo: number, hi: number, key: { c: Date; i: number } | null, inclusive: boolean, limit: number): Promise<UsageRecord[]> {
    const base = this.within(org, f, lo, key ? Math.min(hi, key.c.getTime()) : hi);
    const query = key ? { $and: [base, seekQuery(key, inclusive)] } : base;
    const docs = await this.runs.find(query as Filter<RunDocument>).sort(ORDER).limit(limit).toArray();
    const workflowIds = [...new Set(docs.map((d) => d.workflowId))];
    const names = new Map<number, string>();
    if (workflowIds.length > 0) {
      const workflows = await this.db.collection<WorkflowDocument>(Collections.workflows)
        .find({ _id: { $in: workflowIds }, organizationId: org }, { projection: { name: 1 } }).toArray();
      for (const w of workflows) names.set(w._id, w.name);
    }
    return docs.map((d) => ({ run: runFromDocument(d), workflowName: names.get(d.workflowId) ?? null }));
  }
}
