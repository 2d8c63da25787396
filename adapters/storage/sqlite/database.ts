import Database from 'better-sqlite3';
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrations as allMigrations, type Migration } from './migrations/index.js';

export type SqliteDatabase = Database.Database;

/**
 * Opens (creating when absent) the embedded database: WAL so readers never wait for the writer and several
 * processes can share the file, a busy timeout so concurrent writers queue instead of failing, foreign keys on.
 * `:memory:` gives a private in-memory database (tests).
 */
export function openSqlite(path: string): SqliteDatabase {
  if (path === ':memory:') return configure(new Database(path));
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // Owner-only files (docs/security.md, "File modes"). SQLite creates the -wal and -shm files itself, giving
  // them the database file's mode: so the database file is made 0600 before SQLite opens it (tightening one
  // left 0644 by an earlier version), any leftover -wal/-shm too, and the umask is narrowed while it opens.
  closeSync(openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) tighten(file);
  return configure(withOwnerOnlyUmask(() => new Database(path)));
}

/** chmod 0600 when the file exists. */
function tighten(file: string): void {
  try {
    chmodSync(file, 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/** Runs `open` (synchronous) with umask 077, restoring the previous one; worker threads cannot set it. */
function withOwnerOnlyUmask<T>(open: () => T): T {
  let previous: number | undefined;
  try {
    previous = process.umask(0o077);
  } catch {
    /* worker thread: the modes set above still apply */
  }
  try {
    return open();
  } finally {
    if (previous !== undefined) process.umask(previous);
  }
}

function configure(db: SqliteDatabase): SqliteDatabase {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 10000');
  db.pragma('foreign_keys = ON');
  return db;
}

/**
 * Applies every migration newer than the recorded version, each in its own IMMEDIATE transaction, so
 * that two processes starting at once apply each one exactly once. Idempotent. Returns the versions applied.
 */
export function migrate(db: SqliteDatabase, migrations: readonly Migration[] = allMigrations): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const versions = migrations.map((m) => m.version);
  if (new Set(versions).size !== versions.length) throw new Error('Duplicate migration version');
  const applied: number[] = [];
  const isApplied = db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    const apply = db.transaction(() => {
      if (isApplied.get(m.version)) return false;
      m.up(db);
      record.run(m.version, m.name, Date.now());
      return true;
    });
    if (apply.immediate()) applied.push(m.version);
  }
  return applied;
}

/** Opens and migrates in one step. */
export function openMigratedSqlite(path: string): SqliteDatabase {
  const db = openSqlite(path);
  migrate(db);
  return db;
}

/** Milliseconds since the epoch ↔ Date, the way every timestamp column is stored. */
export const toMs = (d: Date): number => d.getTime();
export const toMsOrNull = (d: Date | null | undefined): number | null => (d ? d.getTime() : null);
export const fromMs = (ms: number): Date => new Date(ms);
export const fromMsOrNull = (ms: number | null): Date | null => (ms == null ? null : new Date(ms));

/** True when `e` is SQLite's unique-constraint failure (optionally on a given index/column text). */
export function isUniqueViolation(e: unknown, hint?: string): boolean {
  const err = e as { code?: string; message?: string };
  return err?.code === 'SQLITE_CONSTRAINT_UNIQUE' && (!hint || (err.message ?? '').includes(hint));
}
