import type { SqliteDatabase } from './database.js';

/** Test helper: a row in `organizations`, which workflows and runs reference. */
export function insertOrganization(db: SqliteDatabase, name: string): number {
  return Number(db.prepare('INSERT INTO organizations (name, created_at) VALUES (?, 0)').run(name).lastInsertRowid);
}
