import { randomBytes } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { computeJobState, toJobId } from 'agenda';
import type {
  JobId,
  JobParameters,
  JobRepository,
  JobRepositoryOptions,
  JobsOverview,
  JobsQueryOptions,
  JobsResult,
  JobsSort,
  JobWithState,
  RemoveJobsOptions,
  SortDirection,
} from 'agenda';
import { and, dataCondition, isPlainObject, selectionCondition, uniqueCondition, type SqlFragment } from './job-filters.js';

/** Sort used to pick the next job to run; the MongoDB backend's default. */
export interface NextJobSort {
  nextRunAt?: SortDirection;
  priority?: SortDirection;
}

export interface SqliteJobRepositoryOptions {
  /** Table holding the jobs (created if missing). Default `agenda_jobs`. */
  tableName?: string;
  /** Order in which due jobs are taken. Default `{ nextRunAt: 'asc', priority: 'desc' }`. */
  sort?: NextJobSort;
}

/** A stored row, as better-sqlite3 returns it. */
interface JobRow {
  id: string;
  name: string;
  priority: number;
  type: string;
  next_run_at: number | null;
  locked_at: number | null;
  last_run_at: number | null;
  last_finished_at: number | null;
  failed_at: number | null;
  fail_count: number | null;
  fail_reason: string | null;
  repeat_interval: string | null;
  repeat_timezone: string | null;
  repeat_at: string | null;
  disabled: number | null;
  progress: number | null;
  data: string | null;
  debounce_started_at: number | null;
  last_modified_by: string | null;
  fork: number | null;
  start_date: number | null;
  end_date: number | null;
  skip_days: string | null;
}

/** Columns written by saveJob, in order. */
const JOB_COLUMNS = [
  'name', 'priority', 'type', 'next_run_at', 'locked_at', 'last_run_at', 'last_finished_at', 'failed_at',
  'fail_count', 'fail_reason', 'repeat_interval', 'repeat_timezone', 'repeat_at', 'disabled', 'progress', 'data',
  'debounce_started_at', 'last_modified_by', 'fork', 'start_date', 'end_date', 'skip_days',
] as const;
type JobColumn = (typeof JOB_COLUMNS)[number];

/**
 * Fields the job processor owns (agenda's Job.PROCESSOR_MANAGED_FIELDS): `Job.save()` leaves them out, and an
 * update through saveJob then keeps the stored values instead of clearing them (so re-saving a running job,
 * e.g. an `every()` on restart, does not drop its lock).
 */
const PROCESSOR_COLUMNS: Partial<Record<keyof JobParameters, JobColumn>> = {
  lockedAt: 'locked_at',
  lastRunAt: 'last_run_at',
  lastFinishedAt: 'last_finished_at',
  failedAt: 'failed_at',
  failCount: 'fail_count',
  failReason: 'fail_reason',
  progress: 'progress',
};

const SORT_COLUMNS: Record<keyof JobsSort, string> = {
  nextRunAt: 'next_run_at',
  lastRunAt: 'last_run_at',
  lastFinishedAt: 'last_finished_at',
  priority: 'priority',
  name: 'name',
  data: 'data',
};

const ms = (d: Date | string | number | null | undefined): number | null => {
  if (d === null || d === undefined) return null;
  const t = d instanceof Date ? d.getTime() : new Date(d).getTime();
  return Number.isNaN(t) ? null : t;
};
const date = (v: number | null): Date | undefined => (v === null ? undefined : new Date(v));

/**
 * `failReason` is typed as a string, but agenda's `Job.fail(reason)` stores whatever was thrown when it is not an
 * Error (an object, a number; fork mode's exit reports), and the MongoDB backend stores that value as it is. The
 * column stays TEXT so string reasons stay plain, queryable text: any other value is kept as JSON behind a prefix
 * no reason string starts with (a string that does start with it is escaped), so every value round-trips
 * (as JSON does: Dates inside come back as ISO strings).
 */
const LOOSE_JSON = '\u0000json:';
const LOOSE_TEXT = '\u0000text:';
function encodeLoose(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value.startsWith('\u0000') ? LOOSE_TEXT + value : value;
  let json: string | undefined;
  try {
    json = JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  } catch {
    json = undefined; // a cycle: keep what can be said about it
  }
  return LOOSE_JSON + (json ?? JSON.stringify(String(value)));
}
function decodeLoose(text: string | null): unknown {
  if (text === null) return undefined;
  if (text.startsWith(LOOSE_JSON)) return JSON.parse(text.slice(LOOSE_JSON.length));
  if (text.startsWith(LOOSE_TEXT)) return text.slice(LOOSE_TEXT.length);
  return text;
}
const bool = (v: boolean | undefined | null): number | null => (v === true ? 1 : v === false ? 0 : null);

function newId(): string {
  // 24 hex characters, like a MongoDB ObjectId; time-prefixed so ids roughly follow creation order.
  const time = Math.floor(Date.now() / 1000).toString(16).padStart(8, '0');
  return time + randomBytes(8).toString('hex');
}

function rowToJob(row: JobRow): JobParameters {
  return {
    _id: toJobId(row.id),
    name: row.name,
    priority: row.priority,
    nextRunAt: row.next_run_at === null ? null : new Date(row.next_run_at),
    type: row.type as JobParameters['type'],
    data: row.data === null ? null : JSON.parse(row.data),
    lockedAt: date(row.locked_at),
    lastFinishedAt: date(row.last_finished_at),
    failedAt: date(row.failed_at),
    failCount: row.fail_count ?? undefined,
    failReason: decodeLoose(row.fail_reason) as string | undefined,
    repeatTimezone: row.repeat_timezone ?? undefined,
    lastRunAt: date(row.last_run_at),
    repeatInterval: row.repeat_interval === null ? undefined : JSON.parse(row.repeat_interval),
    repeatAt: row.repeat_at ?? undefined,
    disabled: row.disabled === null ? undefined : row.disabled === 1,
    progress: row.progress ?? undefined,
    lastModifiedBy: row.last_modified_by ?? undefined,
    fork: row.fork === null ? undefined : row.fork === 1,
    debounceStartedAt: date(row.debounce_started_at),
    startDate: date(row.start_date),
    endDate: date(row.end_date),
    skipDays: row.skip_days === null ? undefined : JSON.parse(row.skip_days),
  };
}

/** The column values saveJob writes for a job (undefined optional fields become NULL). */
function jobToColumns(job: JobParameters, options: JobRepositoryOptions | undefined): Record<JobColumn, unknown> {
  return {
    name: job.name,
    priority: job.priority ?? 0,
    type: job.type ?? 'normal',
    next_run_at: ms(job.nextRunAt),
    locked_at: ms(job.lockedAt),
    last_run_at: ms(job.lastRunAt),
    last_finished_at: ms(job.lastFinishedAt),
    failed_at: ms(job.failedAt),
    fail_count: job.failCount ?? null,
    fail_reason: encodeLoose(job.failReason),
    repeat_interval: job.repeatInterval === undefined || job.repeatInterval === null ? null : JSON.stringify(job.repeatInterval),
    repeat_timezone: job.repeatTimezone ?? null,
    repeat_at: job.repeatAt ?? null,
    disabled: bool(job.disabled),
    progress: job.progress ?? null,
    data: JSON.stringify(job.data === undefined ? null : job.data),
    debounce_started_at: ms(job.debounceStartedAt),
    last_modified_by: options?.lastModifiedBy ?? null,
    fork: bool(job.fork),
    start_date: ms(job.startDate),
    end_date: ms(job.endDate),
    skip_days: job.skipDays === undefined || job.skipDays === null ? null : JSON.stringify(job.skipDays),
  };
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}

/**
 * Agenda's JobRepository on SQLite (better-sqlite3). Every write that must be atomic (taking the next job,
 * unique upserts, debounce) runs in a `BEGIN IMMEDIATE` transaction, so several connections, in one process or
 * in several processes sharing the file in WAL mode, serialize on SQLite's write lock and never lock the same
 * job twice. Dates are stored as epoch milliseconds, `data` as JSON text (Dates inside it come back as ISO
 * strings, unlike MongoDB which keeps BSON dates).
 */
export class SqliteJobRepository implements JobRepository {
  readonly tableName: string;
  private readonly sort: Required<NextJobSort> | NextJobSort;
  private db: Database | undefined;
  private readonly openDb: () => Database;
  private stmtCache = new Map<string, Statement>();

  constructor(openDb: () => Database, options: SqliteJobRepositoryOptions = {}) {
    const tableName = options.tableName ?? 'agenda_jobs';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tableName)) throw new Error(`Invalid table name "${tableName}"`);
    this.tableName = tableName;
    this.sort = options.sort ?? { nextRunAt: 'asc', priority: 'desc' };
    this.openDb = openDb;
  }

  /** Opens (or adopts) the database and creates the table and indexes if missing. Idempotent. */
  async connect(): Promise<void> {
    if (this.db?.open) return;
    this.stmtCache.clear();
    const db = this.openDb();
    const t = this.tableName;
    db.exec(`
      CREATE TABLE IF NOT EXISTS ${t} (
        id TEXT PRIMARY KEY NOT NULL,
        name TEXT NOT NULL,
        priority INTEGER NOT NULL DEFAULT 0,
        type TEXT NOT NULL DEFAULT 'normal',
        next_run_at INTEGER,
        locked_at INTEGER,
        last_run_at INTEGER,
        last_finished_at INTEGER,
        failed_at INTEGER,
        fail_count INTEGER,
        fail_reason TEXT,
        repeat_interval TEXT,
        repeat_timezone TEXT,
        repeat_at TEXT,
        disabled INTEGER,
        progress REAL,
        data TEXT,
        debounce_started_at INTEGER,
        last_modified_by TEXT,
        fork INTEGER,
        start_date INTEGER,
        end_date INTEGER,
        skip_days TEXT
      );
      CREATE INDEX IF NOT EXISTS ${t}_find_next ON ${t} (name, next_run_at, priority, locked_at);
      CREATE INDEX IF NOT EXISTS ${t}_locked ON ${t} (name, locked_at);
      CREATE INDEX IF NOT EXISTS ${t}_single ON ${t} (name, type);
    `);
    this.db = db;
  }

  /** Forgets the connection (closing it is the backend's decision). */
  detach(): void {
    this.db = undefined;
    this.stmtCache.clear();
  }

  private get conn(): Database {
    if (!this.db || !this.db.open) throw new Error('SqliteJobRepository is not connected');
    return this.db;
  }

  private stmt(sql: string): Statement {
    let s = this.stmtCache.get(sql);
    if (!s) {
      s = this.conn.prepare(sql);
      this.stmtCache.set(sql, s);
    }
    return s;
  }

  private immediate<T>(fn: () => T): T {
    return this.conn.transaction(fn).immediate();
  }

  private selectOne(where: SqlFragment, orderBy = 'rowid ASC'): JobRow | undefined {
    return this.stmt(`SELECT * FROM ${this.tableName} WHERE ${where.sql} ORDER BY ${orderBy} LIMIT 1`).get(...where.params) as
      | JobRow
      | undefined;
  }

  private rowById(id: string): JobRow | undefined {
    return this.stmt(`SELECT * FROM ${this.tableName} WHERE id = ?`).get(id) as JobRow | undefined;
  }

  private nextJobOrder(): string {
    const parts: string[] = [];
    for (const [field, dir] of Object.entries(this.sort)) {
      const col = SORT_COLUMNS[field as keyof JobsSort];
      if (col && dir) parts.push(`${col} ${dir === 'desc' ? 'DESC' : 'ASC'}`);
    }
    parts.push('rowid ASC');
    return parts.join(', ');
  }

  async getJobById(id: string): Promise<JobParameters | null> {
    const row = this.rowById(String(id));
    return row ? rowToJob(row) : null;
  }

  async queryJobs(options: JobsQueryOptions = {}): Promise<JobsResult> {
    const { name, names, state, id, ids, search, data, includeDisabled = true, sort } = options;
    const skip = Number.isFinite(options.skip) ? Math.max(0, Math.floor(options.skip as number)) : 0;
    const limit = Number.isFinite(options.limit) ? Math.max(0, Math.floor(options.limit as number)) : 0;
    const parts: SqlFragment[] = [];
    if (name && typeof name === 'string') parts.push({ sql: 'name = ?', params: [name] });
    else if (Array.isArray(names) && names.some((n) => typeof n === 'string')) {
      const valid = names.filter((n) => typeof n === 'string');
      parts.push({ sql: `name IN (${valid.map(() => '?').join(', ')})`, params: valid });
    }
    if (id && typeof id === 'string') parts.push({ sql: 'id = ?', params: [id] });
    else if (Array.isArray(ids) && ids.some((i) => typeof i === 'string')) {
      const valid = ids.filter((i) => typeof i === 'string');
      parts.push({ sql: `id IN (${valid.map(() => '?').join(', ')})`, params: valid });
    }
    if (search && typeof search === 'string') {
      // Case-insensitive substring of the name (ASCII case folding, as SQLite's LIKE does).
      parts.push({ sql: `name LIKE ? ESCAPE '\\'`, params: [`%${escapeLike(search)}%`] });
    }
    if (data !== undefined) parts.push(dataCondition(data));
    if (!includeDisabled) parts.push({ sql: '(disabled IS NULL OR disabled <> 1)', params: [] });
    const where = and(parts);

    const order: string[] = [];
    for (const [field, dir] of Object.entries(sort ?? {})) {
      const col = SORT_COLUMNS[field as keyof JobsSort];
      if (col && (dir === 'asc' || dir === 'desc')) order.push(`${col} ${dir === 'asc' ? 'ASC' : 'DESC'}`);
    }
    if (order.length === 0) order.push('next_run_at DESC', 'last_run_at DESC');
    order.push('rowid ASC');
    const orderBy = order.join(', ');
    const now = new Date();
    const withState = (row: JobRow): JobWithState => {
      const job = rowToJob(row) as JobWithState;
      job.state = computeJobState(job, now);
      return job;
    };

    if (!state) {
      const page = limit > 0 ? ` LIMIT ${limit} OFFSET ${skip}` : skip > 0 ? ` LIMIT -1 OFFSET ${skip}` : '';
      const rows = this.conn.prepare(`SELECT * FROM ${this.tableName} WHERE ${where.sql} ORDER BY ${orderBy}${page}`).all(...where.params) as JobRow[];
      const { total } = this.conn.prepare(`SELECT COUNT(*) AS total FROM ${this.tableName} WHERE ${where.sql}`).get(...where.params) as { total: number };
      return { jobs: rows.map(withState), total };
    }
    // The state is computed from several fields: filter in code, then paginate.
    const rows = this.conn.prepare(`SELECT * FROM ${this.tableName} WHERE ${where.sql} ORDER BY ${orderBy}`).all(...where.params) as JobRow[];
    const matching = rows.map(withState).filter((j) => (state === 'paused' ? j.disabled === true : j.state === state));
    const jobs = limit > 0 ? matching.slice(skip, skip + limit) : matching.slice(skip);
    return { jobs, total: matching.length };
  }

  async getJobsOverview(): Promise<JobsOverview[]> {
    const now = new Date();
    const rows = this.stmt(`SELECT * FROM ${this.tableName} ORDER BY name, rowid`).all() as JobRow[];
    const byName = new Map<string, JobsOverview>();
    for (const row of rows) {
      let o = byName.get(row.name);
      if (!o) {
        o = { name: row.name, total: 0, running: 0, scheduled: 0, queued: 0, completed: 0, failed: 0, repeating: 0, paused: 0 };
        byName.set(row.name, o);
      }
      const job = rowToJob(row);
      o.total++;
      o[computeJobState(job, now)]++;
      if (job.disabled === true) o.paused++;
    }
    return [...byName.values()];
  }

  async getDistinctJobNames(): Promise<string[]> {
    return (this.stmt(`SELECT DISTINCT name FROM ${this.tableName} ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name);
  }

  async getQueueSize(): Promise<number> {
    const r = this.stmt(`SELECT COUNT(*) AS n FROM ${this.tableName} WHERE next_run_at < ?`).get(Date.now()) as { n: number };
    return r.n;
  }

  async removeJobs(options: RemoveJobsOptions): Promise<number> {
    const where = selectionCondition(options as Parameters<typeof selectionCondition>[0]);
    if (!where) return 0;
    return this.conn.prepare(`DELETE FROM ${this.tableName} WHERE ${where.sql}`).run(...where.params).changes;
  }

  async disableJobs(options: RemoveJobsOptions): Promise<number> {
    return this.setDisabled(options, true);
  }

  async enableJobs(options: RemoveJobsOptions): Promise<number> {
    return this.setDisabled(options, false);
  }

  /** Counts only the jobs whose flag actually changed (MongoDB's modifiedCount). */
  private setDisabled(options: RemoveJobsOptions, disabled: boolean): number {
    const where = selectionCondition(options as Parameters<typeof selectionCondition>[0]);
    if (!where) return 0;
    const value = disabled ? 1 : 0;
    return this.conn
      .prepare(`UPDATE ${this.tableName} SET disabled = ? WHERE (${where.sql}) AND disabled IS NOT ?`)
      .run(value, ...where.params, value).changes;
  }

  async purgeAllJobs(): Promise<number> {
    return this.stmt(`DELETE FROM ${this.tableName}`).run().changes;
  }

  async saveJobState(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<void> {
    if (!job._id) throw new Error('Cannot save job state without job ID');
    const result = this.stmt(
      `UPDATE ${this.tableName} SET locked_at = ?, next_run_at = ?, last_run_at = ?, progress = ?, fail_reason = ?,
         fail_count = ?, failed_at = ?, last_finished_at = ?, last_modified_by = ? WHERE id = ? AND name = ?`,
    ).run(
      ms(job.lockedAt), ms(job.nextRunAt), ms(job.lastRunAt), job.progress ?? null, encodeLoose(job.failReason),
      job.failCount ?? null, ms(job.failedAt), ms(job.lastFinishedAt), options?.lastModifiedBy ?? null,
      String(job._id), job.name,
    );
    if (result.changes !== 1) {
      throw new Error(`job ${job._id} (name: ${job.name}) cannot be updated in the database, maybe it does not exist anymore?`);
    }
  }

  async lockJob(job: JobParameters, options: JobRepositoryOptions | undefined): Promise<JobParameters | undefined> {
    if (!job._id) return undefined;
    const nextRunAt = ms(job.nextRunAt);
    const row = this.stmt(
      `UPDATE ${this.tableName} SET locked_at = ?, last_modified_by = ?
         WHERE id = ? AND name = ? AND locked_at IS NULL AND next_run_at IS ? AND (disabled IS NULL OR disabled <> 1)
         RETURNING *`,
    ).get(Date.now(), options?.lastModifiedBy ?? null, String(job._id), job.name, nextRunAt) as JobRow | undefined;
    return row ? rowToJob(row) : undefined;
  }

  async unlockJob(job: JobParameters): Promise<void> {
    if (!job._id) return;
    // A job whose nextRunAt is null is being processed (one-shot jobs clear it when they start): keep its lock.
    this.stmt(`UPDATE ${this.tableName} SET locked_at = NULL WHERE id = ? AND next_run_at IS NOT NULL`).run(String(job._id));
  }

  async unlockJobs(jobIds: (JobId | string)[]): Promise<void> {
    if (jobIds.length === 0) return;
    const ids = jobIds.map((i) => String(i));
    this.conn.prepare(`UPDATE ${this.tableName} SET locked_at = NULL WHERE id IN (${ids.map(() => '?').join(', ')})`).run(...ids);
  }

  async getNextJobToRun(
    jobName: string,
    nextScanAt: Date,
    lockDeadline: Date,
    now: Date | undefined,
    options: JobRepositoryOptions | undefined,
  ): Promise<JobParameters | undefined> {
    const lockTime = (now ?? new Date()).getTime();
    const order = this.nextJobOrder();
    const row = this.immediate(() => {
      const candidate = this.stmt(
        `SELECT id FROM ${this.tableName}
           WHERE name = ? AND (disabled IS NULL OR disabled <> 1)
             AND ((locked_at IS NULL AND next_run_at <= ?) OR locked_at <= ?)
           ORDER BY ${order} LIMIT 1`,
      ).get(jobName, nextScanAt.getTime(), lockDeadline.getTime()) as { id: string } | undefined;
      if (!candidate) return undefined;
      return this.stmt(`UPDATE ${this.tableName} SET locked_at = ?, last_modified_by = ? WHERE id = ? RETURNING *`).get(
        lockTime,
        options?.lastModifiedBy ?? null,
        candidate.id,
      ) as JobRow;
    });
    return row ? rowToJob(row) : undefined;
  }

  private insertRow(cols: Record<JobColumn, unknown>): JobRow {
    const id = newId();
    return this.stmt(
      `INSERT INTO ${this.tableName} (id, ${JOB_COLUMNS.join(', ')}) VALUES (?, ${JOB_COLUMNS.map(() => '?').join(', ')}) RETURNING *`,
    ).get(id, ...JOB_COLUMNS.map((c) => cols[c])) as JobRow;
  }

  /** Updates the given columns of one row and returns it. */
  private updateRow(id: string, cols: Partial<Record<JobColumn, unknown>>): JobRow | undefined {
    const keys = Object.keys(cols) as JobColumn[];
    if (keys.length === 0) return this.rowById(id);
    return this.conn
      .prepare(`UPDATE ${this.tableName} SET ${keys.map((k) => `${k} = ?`).join(', ')} WHERE id = ? RETURNING *`)
      .get(...keys.map((k) => cols[k]), id) as JobRow | undefined;
  }

  /** Columns to write on an update: processor-owned fields only when the caller supplied them. */
  private updatableColumns(job: JobParameters, cols: Record<JobColumn, unknown>): Partial<Record<JobColumn, unknown>> {
    const out: Partial<Record<JobColumn, unknown>> = { ...cols };
    for (const [field, column] of Object.entries(PROCESSOR_COLUMNS) as Array<[keyof JobParameters, JobColumn]>) {
      if (!Object.prototype.hasOwnProperty.call(job, field)) delete out[column];
    }
    return out;
  }

  async saveJob<DATA = unknown>(job: JobParameters<DATA>, options: JobRepositoryOptions | undefined): Promise<JobParameters<DATA>> {
    const params = job as JobParameters;
    const cols = jobToColumns(params, options);
    const now = Date.now();

    // Known job: update it in place; a job removed in the meantime is returned unchanged (not re-created).
    if (params._id) {
      const row = this.conn
        .prepare(`SELECT id FROM ${this.tableName} WHERE id = ? AND name = ?`)
        .get(String(params._id), params.name) as { id: string } | undefined;
      if (!row) return job;
      const updated = this.updateRow(row.id, this.updatableColumns(params, cols));
      return (updated ? rowToJob(updated) : job) as JobParameters<DATA>;
    }

    // 'single' (every / repeat): one job per name; a due nextRunAt never overwrites the stored one.
    if (params.type === 'single') {
      const row = this.immediate(() => {
        const existing = this.selectOne({ sql: `name = ? AND type = 'single'`, params: [params.name] });
        if (!existing) return this.insertRow(cols);
        const update = this.updatableColumns(params, cols);
        if (cols.next_run_at !== null && (cols.next_run_at as number) <= now) delete update.next_run_at;
        return this.updateRow(existing.id, update) as JobRow;
      });
      return rowToJob(row) as JobParameters<DATA>;
    }

    if (params.unique) {
      if (!isPlainObject(params.unique)) throw new Error('unique() expects a query object');
      const where = and([{ sql: 'name = ?', params: [params.name] }, uniqueCondition(params.unique)]);
      const debounce = params.uniqueOpts?.debounce;
      const insertOnly = params.uniqueOpts?.insertOnly === true && !debounce;
      const row = this.immediate(() => {
        const existing = this.selectOne(where);
        if (debounce) {
          if (existing) {
            const startedAt = existing.debounce_started_at ?? now;
            const update = this.updatableColumns(params, cols);
            if (debounce.strategy === 'leading') {
              update.next_run_at = existing.next_run_at;
              update.debounce_started_at = startedAt;
            } else if (debounce.maxWait && now - startedAt >= debounce.maxWait) {
              update.next_run_at = now;
              update.debounce_started_at = null;
            } else {
              update.next_run_at = now + debounce.delay;
              update.debounce_started_at = startedAt;
            }
            return this.updateRow(existing.id, update) as JobRow;
          }
          const fresh = { ...cols, debounce_started_at: now };
          if (debounce.strategy !== 'leading') fresh.next_run_at = now + debounce.delay;
          return this.insertRow(fresh);
        }
        if (existing) return insertOnly ? existing : (this.updateRow(existing.id, this.updatableColumns(params, cols)) as JobRow);
        return this.insertRow(cols);
      });
      return rowToJob(row) as JobParameters<DATA>;
    }

    return rowToJob(this.insertRow(cols)) as JobParameters<DATA>;
  }

  /**
   * Not part of Agenda's interface: one pending job (nextRunAt set, not locked) per `name` and `where`,
   * whose nextRunAt becomes the earlier of the stored one and `at`; inserted from `job` when none is pending.
   * One IMMEDIATE transaction, so concurrent callers in any process never create two.
   * Used by AgendaJobScheduler when the backend offers it.
   */
  async upsertPendingEarliest(job: JobParameters, unique: Record<string, unknown>, options?: JobRepositoryOptions): Promise<JobParameters> {
    const at = ms(job.nextRunAt);
    if (at === null) throw new Error('upsertPendingEarliest needs a nextRunAt');
    const where = and([
      { sql: 'name = ? AND next_run_at IS NOT NULL AND locked_at IS NULL', params: [job.name] },
      uniqueCondition(unique),
    ]);
    const row = this.immediate(() => {
      const existing = this.selectOne(where, 'next_run_at ASC, rowid ASC');
      if (!existing) return this.insertRow(jobToColumns(job, options));
      if ((existing.next_run_at as number) <= at) return existing;
      return this.updateRow(existing.id, { next_run_at: at, last_modified_by: options?.lastModifiedBy ?? null }) as JobRow;
    });
    return rowToJob(row);
  }
}
