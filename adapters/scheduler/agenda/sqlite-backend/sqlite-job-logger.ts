import type { Database } from 'better-sqlite3';
import type { JobLogEntry, JobLogger, JobLogQuery, JobLogQueryResult } from 'agenda';
import { and, type SqlFragment } from './job-filters.js';

interface LogRow {
  id: number;
  timestamp: number;
  level: JobLogEntry['level'];
  event: JobLogEntry['event'];
  job_id: string | null;
  job_name: string;
  message: string;
  duration: number | null;
  error: string | null;
  fail_count: number | null;
  retry_delay: number | null;
  retry_attempt: number | null;
  agenda_name: string | null;
  meta: string | null;
}

/**
 * Agenda's persistent job event log in a SQLite table (default `agenda_logs`), created on first use.
 * Agenda only writes to it when constructed with `logging: true`.
 */
export class SqliteJobLogger implements JobLogger {
  private db: Database | undefined;
  private initialized = false;

  constructor(readonly tableName = 'agenda_logs') {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tableName)) throw new Error(`Invalid table name "${tableName}"`);
  }

  setDatabase(db: Database | undefined): void {
    this.db = db;
    this.initialized = false;
  }

  private conn(): Database | undefined {
    if (!this.db || !this.db.open) return undefined;
    if (!this.initialized) {
      const t = this.tableName;
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS ${t} (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          timestamp INTEGER NOT NULL, level TEXT NOT NULL, event TEXT NOT NULL, job_id TEXT, job_name TEXT NOT NULL,
          message TEXT NOT NULL, duration INTEGER, error TEXT, fail_count INTEGER, retry_delay INTEGER,
          retry_attempt INTEGER, agenda_name TEXT, meta TEXT
        );
        CREATE INDEX IF NOT EXISTS ${t}_timestamp ON ${t} (timestamp);
        CREATE INDEX IF NOT EXISTS ${t}_job_id ON ${t} (job_id, timestamp);
        CREATE INDEX IF NOT EXISTS ${t}_job_name ON ${t} (job_name, timestamp);
      `);
      this.initialized = true;
    }
    return this.db;
  }

  async log(entry: Omit<JobLogEntry, '_id'>): Promise<void> {
    const db = this.conn();
    if (!db) return;
    db.prepare(
      `INSERT INTO ${this.tableName} (timestamp, level, event, job_id, job_name, message, duration, error, fail_count,
         retry_delay, retry_attempt, agenda_name, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      new Date(entry.timestamp).getTime(), entry.level, entry.event, entry.jobId ?? null, entry.jobName, entry.message,
      entry.duration ?? null, entry.error ?? null, entry.failCount ?? null, entry.retryDelay ?? null,
      entry.retryAttempt ?? null, entry.agendaName ?? null, entry.meta === undefined ? null : JSON.stringify(entry.meta),
    );
  }

  private filter(query: JobLogQuery | undefined): SqlFragment {
    const parts: SqlFragment[] = [];
    if (!query) return and(parts);
    if (query.jobId) parts.push({ sql: 'job_id = ?', params: [query.jobId] });
    if (query.jobName) parts.push({ sql: 'job_name = ?', params: [query.jobName] });
    for (const [key, column] of [['level', 'level'], ['event', 'event']] as const) {
      const v = query[key];
      if (v === undefined) continue;
      const list = Array.isArray(v) ? v : [v];
      if (list.length > 0) parts.push({ sql: `${column} IN (${list.map(() => '?').join(', ')})`, params: list });
    }
    if (query.from) parts.push({ sql: 'timestamp >= ?', params: [new Date(query.from).getTime()] });
    if (query.to) parts.push({ sql: 'timestamp <= ?', params: [new Date(query.to).getTime()] });
    return and(parts);
  }

  async getLogs(query?: JobLogQuery): Promise<JobLogQueryResult> {
    const db = this.conn();
    if (!db) return { entries: [], total: 0 };
    const where = this.filter(query);
    const dir = query?.sort === 'asc' ? 'ASC' : 'DESC';
    const limit = Number.isFinite(query?.limit) ? Math.max(0, Math.floor(query!.limit!)) : 50;
    const offset = Number.isFinite(query?.offset) ? Math.max(0, Math.floor(query!.offset!)) : 0;
    const rows = db
      .prepare(`SELECT * FROM ${this.tableName} WHERE ${where.sql} ORDER BY timestamp ${dir}, id ${dir} LIMIT ? OFFSET ?`)
      .all(...where.params, limit, offset) as LogRow[];
    const { total } = db.prepare(`SELECT COUNT(*) AS total FROM ${this.tableName} WHERE ${where.sql}`).get(...where.params) as { total: number };
    const entries: JobLogEntry[] = rows.map((r) => ({
      _id: String(r.id),
      timestamp: new Date(r.timestamp),
      level: r.level,
      event: r.event,
      jobId: r.job_id ?? undefined,
      jobName: r.job_name,
      message: r.message,
      duration: r.duration ?? undefined,
      error: r.error ?? undefined,
      failCount: r.fail_count ?? undefined,
      retryDelay: r.retry_delay ?? undefined,
      retryAttempt: r.retry_attempt ?? undefined,
      agendaName: r.agenda_name ?? undefined,
      meta: r.meta === null ? undefined : JSON.parse(r.meta),
    }));
    return { entries, total };
  }

  async clearLogs(query?: JobLogQuery): Promise<number> {
    const db = this.conn();
    if (!db) return 0;
    const where = this.filter(query);
    return db.prepare(`DELETE FROM ${this.tableName} WHERE ${where.sql}`).run(...where.params).changes;
  }
}
