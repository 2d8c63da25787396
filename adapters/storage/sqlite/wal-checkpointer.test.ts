import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite, type SqliteDatabase } from './database.js';
import { DEFAULT_AUTOCHECKPOINT_PAGES, SqliteWalCheckpointer } from './wal-checkpointer.js';

describe('SQLite WAL checkpoints on a worker thread (adapters/storage/sqlite/wal-checkpointer.ts)', () => {
  let dir: string;
  let db: SqliteDatabase;
  let checkpointer: SqliteWalCheckpointer | null = null;
  const file = () => join(dir, 'callplane.db');
  const walBytes = () => statSync(`${file()}-wal`).size;
  const pageSize = () => Number(db.pragma('page_size', { simple: true }));
  /** Writes about `pages` pages, one commit per page (as requests and events do). */
  const write = (pages: number) => {
    const insert = db.prepare('INSERT INTO t (body) VALUES (?)');
    const body = 'x'.repeat(pageSize() - 100);
    for (let i = 0; i < pages; i++) insert.run(body);
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'callplane-wal-'));
    db = openSqlite(file());
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  });
  afterEach(async () => {
    await checkpointer?.stop();
    checkpointer = null;
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('turns the connection\'s own automatic checkpoint off: commits past 1,000 pages never checkpoint on this thread', async () => {
    checkpointer = await SqliteWalCheckpointer.start(db, { everyMs: 3_600_000 });
    expect(checkpointer).not.toBeNull();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    write(1500);
    // with the automatic checkpoint the WAL would have been copied back at 1,000 pages and reused from its start
    expect(walBytes()).toBeGreaterThan(1500 * pageSize());
    const result = await checkpointer!.checkpointNow();
    expect(result.busy).toBe(false);
    expect(result.logFrames).toBeGreaterThanOrEqual(1500);
    expect(result.checkpointedFrames).toBe(result.logFrames);
    // the copied-back WAL is reused from its start by the next commits: it stops growing
    const before = walBytes();
    write(500);
    expect(walBytes()).toBe(before);
    expect((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(2000);
  });

  it('checkpoints on its own every period', async () => {
    checkpointer = await SqliteWalCheckpointer.start(db, { everyMs: 50 });
    write(300);
    await new Promise((r) => setTimeout(r, 300));
    // a periodic checkpoint copied the 300 pages back, so the next commits reuse the WAL from its start
    // (without one, 200 more pages would grow it)
    const before = walBytes();
    expect(before).toBeGreaterThan(300 * pageSize());
    write(200);
    expect(walBytes()).toBe(before);
  });

  it('switches the automatic checkpoint back on when stopped, and when the worker dies', async () => {
    checkpointer = await SqliteWalCheckpointer.start(db, { everyMs: 3_600_000 });
    await checkpointer!.stop();
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(DEFAULT_AUTOCHECKPOINT_PAGES);
    await expect(checkpointer!.checkpointNow()).rejects.toThrow(/not running/);

    const failures: string[] = [];
    checkpointer = await SqliteWalCheckpointer.start(db, { everyMs: 3_600_000, onFailure: (m) => failures.push(m) });
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    // the worker dies (as if its thread crashed)
    await (checkpointer as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await new Promise((r) => setTimeout(r, 20));
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(DEFAULT_AUTOCHECKPOINT_PAGES);
    expect(failures).toEqual([expect.stringMatching(/automatic checkpoints are back on/)]);
  });

  it('does nothing for an in-memory database', async () => {
    const memory = openSqlite(':memory:');
    try {
      expect(await SqliteWalCheckpointer.start(memory)).toBeNull();
    } finally {
      memory.close();
    }
  });
});
