import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import type { JobRepository } from 'agenda';
import { runJobRepositoryContract, newJob } from '../../../../test/contracts/job-repository.contract.js';
import { SqliteBackend } from './sqlite-backend.js';

/** A fresh database file per test, with a second connection available as the "other process". */
async function fileBackedRepo() {
  const dir = mkdtempSync(join(tmpdir(), 'agenda-sqlite-'));
  const file = join(dir, 'jobs.db');
  const backends: SqliteBackend[] = [new SqliteBackend({ database: file })];
  await backends[0].connect();
  return {
    repo: backends[0].repository as JobRepository,
    peer: async () => {
      const b = new SqliteBackend({ database: file });
      await b.connect();
      backends.push(b);
      return b.repository as JobRepository;
    },
    cleanup: async () => {
      for (const b of backends) await b.disconnect();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

runJobRepositoryContract('SQLite file (WAL, two connections)', fileBackedRepo);

runJobRepositoryContract('SQLite shared in-memory Database', async () => {
  const db = new BetterSqlite3(':memory:');
  const backend = new SqliteBackend({ database: db });
  await backend.connect();
  return {
    repo: backend.repository,
    cleanup: async () => {
      await backend.disconnect();
      db.close();
    },
  };
});

describe('SqliteBackend specifics', () => {
  it('shares a Database without closing it, in its own idempotently created table, in WAL mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agenda-sqlite-'));
    const db = new BetterSqlite3(join(dir, 'service.db'));
    db.exec('CREATE TABLE service_table (x INTEGER)');
    const a = new SqliteBackend({ database: db, tableName: 'my_jobs' });
    await a.connect();
    await a.connect();
    expect(a.ownsConnection).toBe(false);
    await a.repository.saveJob(newJob({ name: 'j' }), undefined);
    const b = new SqliteBackend({ database: db, tableName: 'my_jobs' });
    await b.connect();
    expect((await b.repository.queryJobs()).total).toBe(1);
    await a.disconnect();
    expect(db.open).toBe(true);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(Number(db.pragma('busy_timeout', { simple: true }))).toBeGreaterThan(0);
    const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as Array<{ name: string }>).map((r) => r.name);
    expect(tables).toEqual(expect.arrayContaining(['service_table', 'my_jobs']));
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes a connection it opened from a path, and reopens on connect', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agenda-sqlite-'));
    const backend = new SqliteBackend({ database: join(dir, 'x.db') });
    expect(backend.ownsConnection).toBe(true);
    await backend.connect();
    await backend.repository.saveJob(newJob({ name: 'j' }), undefined);
    await backend.disconnect();
    await expect(backend.repository.queryJobs()).rejects.toThrow(/not connected/);
    await backend.connect();
    expect((await backend.repository.queryJobs()).total).toBe(1);
    await backend.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses invalid table names', () => {
    expect(() => new SqliteBackend({ database: ':memory:', tableName: 'x; DROP TABLE y' })).toThrow(/table name/);
  });

  it('keeps the lock of a running job when a job is re-saved without processor fields (every() on restart)', async () => {
    const backend = new SqliteBackend({ database: ':memory:' });
    await backend.connect();
    const repo = backend.repository;
    const j = await repo.saveJob(newJob({ name: 'tick', type: 'single', repeatInterval: 1000, nextRunAt: new Date(Date.now() - 10) }), undefined);
    const locked = await repo.getNextJobToRun('tick', new Date(Date.now() + 1000), new Date(Date.now() - 60_000), undefined, undefined);
    expect(String(locked?._id)).toBe(String(j._id));
    await repo.saveJob(newJob({ name: 'tick', type: 'single', repeatInterval: 1000 }), undefined);
    expect((await repo.getJobById(String(j._id)))!.lockedAt).toBeInstanceOf(Date);
    await backend.disconnect();
  });

  it('job logger stores, filters and clears entries', async () => {
    const backend = new SqliteBackend({ database: ':memory:' });
    await backend.connect();
    const t = Date.now();
    await backend.logger.log({ timestamp: new Date(t), level: 'info', event: 'start', jobName: 'a', jobId: '1', message: 'started' });
    await backend.logger.log({ timestamp: new Date(t + 1), level: 'error', event: 'fail', jobName: 'a', jobId: '1', message: 'failed', error: 'boom', failCount: 1, meta: { x: 1 } });
    await backend.logger.log({ timestamp: new Date(t + 2), level: 'info', event: 'start', jobName: 'b', message: 'started' });
    const all = await backend.logger.getLogs();
    expect(all.total).toBe(3);
    expect(all.entries[0].jobName).toBe('b');
    const fails = await backend.logger.getLogs({ event: ['fail'], jobName: 'a' });
    expect(fails.entries).toEqual([expect.objectContaining({ level: 'error', error: 'boom', failCount: 1, meta: { x: 1 }, jobId: '1' })]);
    expect((await backend.logger.getLogs({ sort: 'asc', limit: 1, offset: 1 })).entries.map((e) => e.event)).toEqual(['fail']);
    expect(await backend.logger.clearLogs({ jobName: 'a' })).toBe(2);
    expect(await backend.logger.clearLogs()).toBe(1);
    await backend.disconnect();
  });
});
