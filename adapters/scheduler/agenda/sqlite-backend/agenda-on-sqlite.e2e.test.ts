/**
 * Agenda 6 end to end on the SQLite backend: define, schedule, run, lock, fail and retry, repeat, unique,
 * disable, lock expiry, and two Agenda instances (two connections, then two OS processes) on one database file.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, expect, beforeEach, afterEach } from '@jest/globals';
import { transformFileSync } from '@swc/core';
import BetterSqlite3 from 'better-sqlite3';
import { Agenda, backoffStrategies, type Job } from 'agenda';
import { SqliteBackend } from './sqlite-backend.js';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '../../../..');

/** Short intervals so tests are quick and agenda's timers do not outlive them (see ENVIRONMENT.md). */
const FAST = { processEvery: 40, defaultLockLifetime: 1000 } as const;

function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const started = Date.now();
  return new Promise((resolvePromise, reject) => {
    const tick = async () => {
      try {
        if (await predicate()) return resolvePromise();
      } catch (e) {
        return reject(e);
      }
      if (Date.now() - started > timeoutMs) return reject(new Error('condition not met in time'));
      setTimeout(tick, 20);
    };
    void tick();
  });
}

describe('Agenda on the SQLite backend', () => {
  let dir: string;
  let file: string;
  const agendas: Agenda[] = [];
  const makeAgenda = (name: string, extra: Partial<ConstructorParameters<typeof Agenda>[0]> = {}) => {
    const a = new Agenda({ backend: new SqliteBackend({ database: file }), name, ...FAST, ...extra });
    agendas.push(a);
    return a;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agenda-e2e-'));
    file = join(dir, 'jobs.db');
  });
  afterEach(async () => {
    for (const a of agendas.splice(0)) await a.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs a job defined and scheduled now, with its data, and records the run', async () => {
    const agenda = makeAgenda('a');
    const seen: unknown[] = [];
    agenda.define('hello', async (job: Job<{ to: string }>) => {
      seen.push(job.attrs.data);
    });
    await agenda.start();
    const job = await agenda.now('hello', { to: 'world' });
    await waitFor(() => seen.length === 1);
    expect(seen).toEqual([{ to: 'world' }]);
    await waitFor(async () => !!(await agenda.db.getJobById(String(job.attrs._id)))?.lastFinishedAt);
    const stored = await agenda.db.getJobById(String(job.attrs._id));
    expect(stored!.lockedAt ?? null).toBeNull();
    expect(stored!.nextRunAt ?? null).toBeNull();
    expect(stored!.lastRunAt).toBeInstanceOf(Date);
  });

  it('records a job that throws a non-Error: the object is stored as its failReason and the job is released', async () => {
    const agenda = makeAgenda('a');
    agenda.define('throws-object', async () => {
      // agenda's Job.fail() keeps a thrown non-Error as it is (fork mode reports failures this way too)
      throw { code: 'E_CHILD', exitCode: 3 };
    });
    await agenda.start();
    const job = await agenda.now('throws-object', {});
    await waitFor(async () => ((await agenda.db.getJobById(String(job.attrs._id)))?.failCount ?? 0) >= 1);
    const stored = await agenda.db.getJobById(String(job.attrs._id));
    expect(stored!.failReason).toEqual({ code: 'E_CHILD', exitCode: 3 });
    expect(stored!.lockedAt ?? null).toBeNull();
    expect(stored!.failedAt).toBeInstanceOf(Date);
  });

  it('does not run a job before its time, then runs it', async () => {
    const agenda = makeAgenda('a');
    let ranAt = 0;
    agenda.define('later', async () => {
      ranAt = Date.now();
    });
    await agenda.start();
    const at = Date.now() + 300;
    await agenda.schedule(new Date(at), 'later');
    await waitFor(() => ranAt > 0);
    expect(ranAt).toBeGreaterThanOrEqual(at);
  });

  it('retries a failing job with agenda backoff until it succeeds', async () => {
    const agenda = makeAgenda('a');
    let attempts = 0;
    const retries: number[] = [];
    agenda.on('retry', (_job: unknown, details: { attempt: number }) => retries.push(details.attempt));
    agenda.define(
      'flaky',
      async () => {
        attempts++;
        if (attempts < 3) throw new Error(`fail ${attempts}`);
      },
      { backoff: backoffStrategies.constant({ delay: 50, maxRetries: 5 }) },
    );
    await agenda.start();
    const job = await agenda.now('flaky');
    await waitFor(async () => attempts === 3 && !!(await agenda.db.getJobById(String(job.attrs._id)))?.lastFinishedAt && retries.length === 2);
    await waitFor(async () => (await agenda.db.getJobById(String(job.attrs._id)))!.failCount === 0);
    expect(retries).toEqual([1, 2]);
    const stored = await agenda.db.getJobById(String(job.attrs._id));
    expect(stored!.failReason).toBe('fail 2');
  });

  it('records a failure without backoff and does not run the job again', async () => {
    const agenda = makeAgenda('a');
    let attempts = 0;
    agenda.define('broken', async () => {
      attempts++;
      throw new Error('nope');
    });
    await agenda.start();
    const job = await agenda.now('broken');
    await waitFor(async () => (await agenda.db.getJobById(String(job.attrs._id)))?.failCount === 1);
    const { jobs } = await agenda.queryJobs({ state: 'failed' });
    expect(jobs.map((j) => String(j._id))).toEqual([String(job.attrs._id)]);
    await new Promise((r) => setTimeout(r, 200));
    expect(attempts).toBe(1);
  });

  it('repeats an every() job, keeping a single stored job across re-declarations', async () => {
    const agenda = makeAgenda('a');
    let runs = 0;
    agenda.define('tick', async () => {
      runs++;
    });
    await agenda.every(150, 'tick');
    await agenda.every(150, 'tick');
    await agenda.start();
    await waitFor(() => runs >= 3);
    expect((await agenda.queryJobs({ name: 'tick' })).total).toBe(1);
  });

  it('keeps one job per unique key (insertOnly) and leaves disabled jobs alone until enabled', async () => {
    const agenda = makeAgenda('a');
    const ran: string[] = [];
    agenda.define('u', async (job: Job<{ k: string }>) => {
      ran.push(job.attrs.data.k);
    });
    for (let i = 0; i < 3; i++) {
      await agenda.create('u', { k: 'one' }).unique({ 'data.k': 'one' }, { insertOnly: true }).schedule(new Date()).save();
    }
    const off = await agenda.create('u', { k: 'off' }).schedule(new Date()).save();
    await agenda.disable({ id: off.attrs._id });
    expect((await agenda.queryJobs({ name: 'u' })).total).toBe(2);
    await agenda.start();
    await waitFor(() => ran.length === 1);
    await new Promise((r) => setTimeout(r, 150));
    expect(ran).toEqual(['one']);
    await agenda.enable({ id: off.attrs._id });
    await waitFor(() => ran.length === 2);
    expect(ran).toEqual(['one', 'off']);
  });

  it('takes over a job whose lock expired (a worker died holding it)', async () => {
    const setup = new SqliteBackend({ database: file });
    await setup.connect();
    const saved = await setup.repository.saveJob({ name: 'orphan', priority: 0, type: 'normal', nextRunAt: new Date(), data: {} }, undefined);
    const taken = await setup.repository.getNextJobToRun('orphan', new Date(Date.now() + 1000), new Date(0), undefined, { lastModifiedBy: 'dead' });
    expect(String(taken?._id)).toBe(String(saved._id));
    await setup.disconnect();
    const agenda = makeAgenda('survivor', { defaultLockLifetime: 300 });
    let ran = 0;
    agenda.define('orphan', async () => {
      ran++;
    });
    await agenda.start();
    await waitFor(() => ran === 1);
    expect((await agenda.db.getJobById(String(saved._id)))!.lastModifiedBy).toBe('survivor');
  });

  it('two Agenda instances on one database file run every job exactly once', async () => {
    const a = makeAgenda('a');
    const b = makeAgenda('b');
    const runs = new Map<string, string[]>();
    for (const agenda of [a, b]) {
      agenda.define(
        'work',
        async (job: Job<{ i: number }>) => {
          const key = String(job.attrs.data.i);
          runs.set(key, [...(runs.get(key) ?? []), agenda.attrs.name ?? "?"]);
          await new Promise((r) => setTimeout(r, 5));
        },
        { concurrency: 4 },
      );
    }
    for (let i = 0; i < 40; i++) await a.now('work', { i });
    await Promise.all([a.start(), b.start()]);
    await waitFor(() => runs.size === 40);
    await new Promise((r) => setTimeout(r, 200));
    expect([...runs.values()].every((who) => who.length === 1)).toBe(true);
    expect(runs.size).toBe(40);
  });

  it('two OS processes on one database file run every job exactly once', async () => {
    // Compile the backend to plain JS in a temp folder that resolves packages from the project.
    const out = join(dir, 'backend');
    mkdirSync(out);
    symlinkSync(join(projectRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    for (const f of readdirSync(here).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts'))) {
      const { code } = transformFileSync(join(here, f), {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'es6' },
      });
      writeFileSync(join(out, f.replace(/\.ts$/, '.js')), code);
    }
    const worker = join(dir, 'worker.mjs');
    writeFileSync(
      worker,
      `import { Agenda } from 'agenda';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteBackend } from './backend/index.js';
const [file, name, expected] = process.argv.slice(2);
const log = new BetterSqlite3(file);
log.pragma('busy_timeout = 5000');
const agenda = new Agenda({ backend: new SqliteBackend({ database: file }), name, processEvery: 30, defaultLockLifetime: 2000 });
agenda.define('work', async (job) => {
  log.prepare('INSERT INTO runs (job, worker) VALUES (?, ?)').run(job.attrs.data.i, name);
}, { concurrency: 3 });
await agenda.start();
const timer = setInterval(async () => {
  const { n } = log.prepare('SELECT COUNT(DISTINCT job) AS n FROM runs').get();
  if (n >= Number(expected)) { clearInterval(timer); await agenda.stop(); log.close(); process.exit(0); }
}, 50);
setTimeout(() => process.exit(3), 15000).unref();
`,
    );
    const setupDb = new BetterSqlite3(file);
    setupDb.pragma('journal_mode = WAL');
    setupDb.exec('CREATE TABLE runs (job INTEGER, worker TEXT)');
    const seed = new Agenda({ backend: new SqliteBackend({ database: setupDb }), ...FAST });
    agendas.push(seed);
    const total = 60;
    for (let i = 0; i < total; i++) await seed.now('work', { i });
    const runWorker = (name: string) =>
      new Promise<number>((done, fail) => {
        const child = spawn(process.execPath, [worker, file, name, String(total)], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        child.stderr.on('data', (d) => (err += d));
        child.on('error', fail);
        child.on('exit', (code) => (code === 0 ? done(code) : fail(new Error(`worker ${name} exited ${code}: ${err}`))));
      });
    await Promise.all([runWorker('p1'), runWorker('p2')]);
    const rows = setupDb.prepare('SELECT job, COUNT(*) AS n FROM runs GROUP BY job').all() as Array<{ job: number; n: number }>;
    setupDb.close();
    expect(rows.length).toBe(total);
    expect(rows.filter((r) => r.n !== 1)).toEqual([]);
  }, 25000);
});
