import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrations as allMigrations, type Migration } from './migrations/index.js';

export type SqliteDatabase = Database.Database;

/**
 * Opens (creating when absent) the embedded database: WAL so readers never wait for the writer and several
 * processes can share the file, a busy timeout so concurrent writers queue instead of failing, foreign keys on.
 * `:memory:` gives a private in-memory database (tests).
 */
export function openSqlite(path: string): SqliteDatabase {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
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
