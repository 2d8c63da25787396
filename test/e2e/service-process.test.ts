import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distFile, runNode, spawnService, type SpawnedService } from '../support/process.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'callplane-e2e-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the built service as a process', () => {
  let svc: SpawnedService | undefined;
  afterAll(() => {
    svc?.child.kill('SIGKILL');
  });

  it('starts on the embedded default, serves health, keeps state in the data dir, and shuts down gracefully on SIGTERM', async () => {
    const dataDir = tempDir();
    svc = await spawnService({ CALLPLANE_DATA_DIR: dataDir });
    const health = await (await fetch(`${svc.url}/api/v1/health`)).json();
    expect(health).toEqual({ status: 'ok', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(statSync(join(dataDir, 'callplane.db')).isFile()).toBe(true);
    expect(statSync(join(dataDir, 'secret.key')).mode & 0o777).toBe(0o600);

    // an in-flight request (scrypt hashing) finishes although SIGTERM arrives while it runs
    const inFlight = fetch(`${svc.url}/api/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'first@example.com', password: 'long enough' }),
    });
    await new Promise((r) => setTimeout(r, 15));
    svc.child.kill('SIGTERM');
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await svc.exited).toEqual({ code: 0, signal: null });
    const logLines = svc.stdout.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(logLines.some((l) => l.msg === 'callplane stopped')).toBe(true);
    // the database's WAL checkpoints (its fsyncs) run on a worker thread, off the event loop
    expect(logLines.some((l) => l.msg === 'sqlite checkpoints run on a worker thread')).toBe(true);
    expect(logLines.some((l) => l.msg === 'sqlite checkpoints')).toBe(false);
    expect(svc.stdout.join('')).not.toContain('long enough');

    // state survives a restart: the first user exists, so first-user signup is now closed
    svc = await spawnService({ CALLPLANE_DATA_DIR: dataDir });
    const again = await fetch(`${svc.url}/api/v1/auth/signup`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'second@example.com', password: 'long enough' }),
    });
    expect(again.status).toBe(403);
    expect(((await again.json()) as { code: string }).code).toBe('signup_disabled');
    const login = await fetch(`${svc.url}/api/v1/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'first@example.com', password: 'long enough' }),
    });
    expect(login.status).toBe(200);
    svc.child.kill('SIGINT');
    expect((await svc.exited).code).toBe(0);
  }, 40_000);

  it('stops with one clear line naming a bad setting', async () => {
    const r = await runNode([distFile('http/main.js')], { PORT: 'eighty', CALLPLANE_DATA_DIR: tempDir() });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringContaining('PORT')]);
    expect(r.stderr).toMatch(/^callplane: invalid setting PORT: "eighty"/);
  });

  it('creates users from the operator CLI', async () => {
    const dataDir = tempDir();
    const ok = await runNode([distFile('http/cli.js'), 'users', 'create', '--email', 'ops@example.com', '--password', 'operator-pass', '--organization', 'Ops'], { CALLPLANE_DATA_DIR: dataDir });
    // a data directory without a database may not be the service's: the CLI says where it creates one (issue 10)
    const database = join(dataDir, 'callplane.db');
    expect(ok.stderr).toBe(`callplane: no database at ${database} yet: creating a new one. If the service runs with another ` +
      'CALLPLANE_DATA_DIR (or with MongoDB), run this command with the same settings.\n');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^created user \d+ <ops@example.com> in organization \d+ "Ops" in /);
    expect(ok.stdout.endsWith(` in ${database}\n`)).toBe(true);
    const second = await runNode([distFile('http/cli.js'), 'users', 'create', '--email', 'ops2@example.com', '--password', 'operator-pass', '--organization', 'ops'], { CALLPLANE_DATA_DIR: dataDir });
    expect(second.stderr).toBe(''); // the database exists now: no warning
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('"Ops"'); // joined the existing organization
    const dup = await runNode([distFile('http/cli.js'), 'users', 'create', '--email', 'ops@example.com', '--password', 'operator-pass'], { CALLPLANE_DATA_DIR: dataDir });
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain('already exists');
    const usage = await runNode([distFile('http/cli.js'), 'users', 'create', '--email', 'x@example.com'], { CALLPLANE_DATA_DIR: dataDir });
    expect(usage.code).toBe(2);

    const svc2 = await spawnService({ CALLPLANE_DATA_DIR: dataDir });
    try {
      const login = await fetch(`${svc2.url}/api/v1/auth/login`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ops2@example.com', password: 'operator-pass' }),
      });
      expect(login.status).toBe(200);
    } finally {
      svc2.child.kill('SIGTERM');
      await svc2.exited;
    }
  }, 40_000);
});
