/**
 * The operator CLI as people run it: the built `dist/http/cli.js` in its own process (`npm test` builds first).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { distFile, runNode } from '../test/support/process.js';

describe('callplane CLI (built)', () => {
  const root = mkdtempSync(join(tmpdir(), 'callplane-cli-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const cli = (args: string[], env: Record<string, string> = {}) => runNode([distFile('http/cli.js'), ...args], env);

  it('prints the usage and exits 0 on --help, -h and help, naming the settings it reads', async () => {
    for (const args of [['--help'], ['-h'], ['help'], ['users', 'create', '--help'], ['migrate', '-h']]) {
      const r = await cli(args);
      expect([args.join(' '), r.code]).toEqual([args.join(' '), 0]);
      expect(r.stdout).toContain('callplane users create --email EMAIL');
      expect(r.stdout).toContain('CALLPLANE_DATA_DIR');
      expect(r.stderr).toBe('');
    }
  });

  it('exits 2 with the usage on stderr for no command or an unknown one', async () => {
    for (const args of [[], ['frobnicate']]) {
      const r = await cli(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('usage:');
    }
  });

  it('creates a user in the data directory of the settings and says where; warns when that database is new', async () => {
    const dataDir = join(root, 'service-data');
    const first = await cli(['users', 'create', '--email', 'ops@example.com', '--password', 'correct horse battery'], { CALLPLANE_DATA_DIR: dataDir });
    expect(first.code).toBe(0);
    const db = join(dataDir, 'callplane.db');
    expect(first.stdout).toMatch(new RegExp(`^created user \\d+ <ops@example.com> in organization \\d+ ".*" in ${db.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n$`));
    expect(first.stderr).toContain(`no database at ${db} yet`);
    expect(existsSync(db)).toBe(true);

    // the same data directory again: it exists, no warning
    const second = await cli(['users', 'create', '--email', 'ops2@example.com', '--password', 'correct horse battery'], { CALLPLANE_DATA_DIR: dataDir });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`in ${db}`);
    expect(second.stderr).toBe('');
  }, 30_000);

  it('names the MongoDB database it would write to, without the credentials of the URI', async () => {
    const { storageLocation } = await import('./cli.js');
    const settings = { storage: 'mongodb', mongodbUri: 'mongodb://app:s3cret@db1:27017,db2/tenant_a?replicaSet=rs0', dataDir: '/x' };
    expect(storageLocation(settings as never)).toBe('MongoDB database "tenant_a" on db1:27017,db2');
    expect(storageLocation({ ...settings, mongodbUri: 'mongodb+srv://cluster.example.net' } as never)).toBe('MongoDB database "callplane" on cluster.example.net');
    expect(storageLocation({ storage: 'sqlite', mongodbUri: null, dataDir: '/srv/cp' } as never)).toBe('/srv/cp/callplane.db');
  });
});
