import BetterSqlite3 from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import type { AgendaBackend, NotificationChannel } from 'agenda';
import { SqliteJobRepository, type NextJobSort } from './sqlite-job-repository.js';
import { SqliteJobLogger } from './sqlite-job-logger.js';

export interface SqliteBackendOptions {
  /** A database file path (the backend opens and owns the connection) or an open better-sqlite3 Database (shared). */
  database: string | Database;
  /** Jobs table, created if missing. Default `agenda_jobs`. */
  tableName?: string;
  /** Job event log table (used only with Agenda's `logging: true`). Default `agenda_logs`. */
  logTableName?: string;
  /** How long a connection waits for another writer (ms). Default 5000. For a shared Database, set only when it has none. */
  busyTimeoutMs?: number;
  /** Order in which due jobs are taken. Default `{ nextRunAt: 'asc', priority: 'desc' }`. */
  sort?: NextJobSort;
  /**
   * Optional notification channel (e.g. agenda's InMemoryNotificationChannel for a single process). SQLite has
   * no cross-process push, so without one Agenda polls every `processEvery`.
   */
  notificationChannel?: NotificationChannel;
}

/** Applies WAL and a busy timeout. A shared connection keeps a busy timeout it already has. */
function prepareConnection(db: Database, busyTimeoutMs: number, owned: boolean): void {
  if (!db.memory) {
    const mode = db.pragma('journal_mode', { simple: true });
    if (String(mode).toLowerCase() !== 'wal') db.pragma('journal_mode = WAL');
  }
  const current = Number(db.pragma('busy_timeout', { simple: true }));
  if (owned || current === 0) db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
}

/**
 * Agenda backend on SQLite: `new Agenda({ backend: new SqliteBackend({ database: 'data/callplane.db' }) })`.
 * Storage only (Agenda polls), plus a job logger; see SqliteJobRepository for the locking model.
 */
export class SqliteBackend implements AgendaBackend {
  readonly name = 'SQLite';
  readonly repository: SqliteJobRepository;
  readonly logger: SqliteJobLogger;
  readonly notificationChannel: NotificationChannel | undefined;
  readonly ownsConnection: boolean;
  private db: Database | undefined;

  constructor(private readonly options: SqliteBackendOptions) {
    this.ownsConnection = typeof options.database === 'string';
    this.notificationChannel = options.notificationChannel;
    this.logger = new SqliteJobLogger(options.logTableName);
    this.repository = new SqliteJobRepository(() => this.open(), { tableName: options.tableName, sort: options.sort });
  }

  private open(): Database {
    if (this.db?.open) return this.db;
    const { database } = this.options;
    const db = typeof database === 'string' ? new BetterSqlite3(database) : database;
    if (!db.open) throw new Error('The SQLite database passed to SqliteBackend is closed');
    prepareConnection(db, this.options.busyTimeoutMs ?? 5000, this.ownsConnection);
    this.db = db;
    this.logger.setDatabase(db);
    return db;
  }

  /** Opens the file (or adopts the shared Database) and creates the tables. Idempotent. */
  async connect(): Promise<void> {
    await this.repository.connect();
  }

  /** Closes the connection when this backend opened it; a shared Database is left open. Idempotent. */
  async disconnect(): Promise<void> {
    this.repository.detach();
    this.logger.setDatabase(undefined);
    if (this.ownsConnection && this.db?.open) this.db.close();
    this.db = undefined;
  }
}
