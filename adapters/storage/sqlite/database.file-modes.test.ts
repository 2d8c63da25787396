import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMigratedSqlite } from './database.js';

const mode = (p: string) => statSync(p).mode & 0o777;

describe('SQLite database file modes (docs/security.md, "File modes")', () => {
  let root: string;
  let umask: number;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'callplane-modes-'));
    umask = process.umask(0o022); // the usual default, under which files come out 0644
  });
  afterEach(() => {
    process.umask(umask);
    rmSync(root, { recursive: true, force: true });
  });

  it('creates the data directory 0700 and the database, -wal and -shm files 0600', () => {
    const dir = join(root, 'data', 'nested');
    const file = join(dir, 'callplane.db');
    const db = openMigratedSqlite(file);
    try {
      db.prepare('CREATE TABLE IF NOT EXISTS t (x INTEGER)').run();
      db.prepare('INSERT INTO t VALUES (1)').run();
      expect(mode(join(root, 'data'))).toBe(0o700);
      expect(mode(dir)).toBe(0o700);
      expect(mode(file)).toBe(0o600);
      expect(mode(`${file}-wal`)).toBe(0o600);
      expect(mode(`${file}-shm`)).toBe(0o600);
    } finally {
      db.close();
    }
    expect(process.umask()).toBe(0o022); // restored after opening
  });

  it('tightens a database file an earlier version left 0644', () => {
    const file = join(root, 'old.db');
    openMigratedSqlite(file).close();
    chmodSync(file, 0o644);
    writeFileSync(`${file}-wal`, '');
    chmodSync(`${file}-wal`, 0o644);
    const db = openMigratedSqlite(file);
    try {
      expect(mode(file)).toBe(0o600);
      expect(mode(`${file}-wal`)).toBe(0o600);
    } finally {
      db.close();
    }
  });
});
