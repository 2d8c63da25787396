import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it, expect, beforeEach, afterEach } from '@jest/globals';
import { transformFileSync } from '@swc/core';
import { Agenda, backoffStrategies, type AgendaBackend, type JobRepository } from 'agenda';
import type { JobData } from '../../../core/ports/job-scheduler.port.js';
import { AgendaJobScheduler } from './agenda-job-scheduler.js';
import { SqliteBackend } from './sqlite-backend/sqlite-backend.js';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '../../..');
const FAST = { processEvery: 40, defaultLockLifetime: 1000 } as const;

function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const started = Date.now();
  return new Promise((ok, fail) => {
    const tick = async () => {
      if (await predicate()) return ok();
      if (Date.now() - started > timeoutMs) return fail(new Error('condition not met in time'));
      setTimeout(tick, 20);
    };
    void tick();
  });
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A backend that hides the SQLite-only atomic helper, to exercise the path every other backend takes. */
function genericBackend(inner: SqliteBackend): AgendaBackend {
  const repo = inner.repository;
  const generic = new Proxy(repo, {
    get: (target, prop) => (prop === 'upsertPendingEarliest' ? undefined : Reflect.get(target, prop, target)),
  }) as JobRepository;
  return { name: 'generic', repository: generic, ownsConnection: true, connect: () => inner.connect(), disconnect: () => inner.disconnect() };
}

describe.each([
  ['SQLite backend (atomic upsert)', (file: string) => new SqliteBackend({ database: file }) as AgendaBackend],
  ['generic Agenda backend path', (file: string) => genericBackend(new SqliteBackend({ database: file }))],
])('AgendaJobScheduler on %s', (_label, makeBackend) => {
  let dir: string;
  let file: string;
  const schedulers: AgendaJobScheduler[] = [];
  const make = (name = 's', options: ConstructorParameters<typeof AgendaJobScheduler>[1] = {}) => {
    const s = new AgendaJobScheduler({ backend: makeBackend(file), agenda: { name, ...FAST } }, options);
    schedulers.push(s);
    return s;
  };
  const pending = async (s: AgendaJobScheduler, name: string) =>
    (await s.agenda.queryJobs({ name })).jobs.filter((j) => j.nextRunAt && !j.lockedAt);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agenda-sched-'));
    file = join(dir, 'jobs.db');
  });
  afterEach(async () => {
    for (const s of schedulers.splice(0)) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to define a name twice', () => {
    const s = make();
    s.define('x', async () => {});
    expect(() => s.define('x', async () => {})).toThrow(/already defined/);
  });

  it('runs a unique job at its time with its data', async () => {
    const s = make();
    const seen: JobData[] = [];
    s.define('dispatch', async (data) => {
      seen.push(data);
    });
    await s.start();
    await s.start();
    const at = Date.now() + 200;
    await s.scheduleUnique('dispatch', 'campaign-1', new Date(at), { campaignId: 1, org: 'o' });
    await waitFor(() => seen.length === 1);
    expect(seen).toEqual([{ campaignId: 1, org: 'o' }]);
    // one-shot jobs are removed once they succeed
    await waitFor(async () => (await s.agenda.queryJobs({ name: 'dispatch' })).total === 0);
  });

  it('keeps one pending job per (name, key), moving it to the earlier time only', async () => {
    const s = make();
    s.define('dispatch', async () => {});
    const t = Date.now() + 60 * 60_000;
    await s.scheduleUnique('dispatch', 'k', new Date(t), { v: 1 });
    await s.scheduleUnique('dispatch', 'k', new Date(t + 1000), { v: 2 });
    let jobs = await pending(s, 'dispatch');
    expect(jobs).toHaveLength(1);
    expect(jobs[0].nextRunAt!.getTime()).toBe(t);
    await s.scheduleUnique('dispatch', 'k', new Date(t - 5000), { v: 3 });
    jobs = await pending(s, 'dispatch');
    expect(jobs).toHaveLength(1);
    expect(jobs[0].nextRunAt!.getTime()).toBe(t - 5000);
    await s.scheduleUnique('dispatch', 'other', new Date(t), {});
    await s.scheduleUnique('sweep', 'k', new Date(t), {});
    expect(await pending(s, 'dispatch')).toHaveLength(2);
    expect(await pending(s, 'sweep')).toHaveLength(1);
  });

  it('two schedulers on one database calling concurrently leave one pending job at the earliest time', async () => {
    const a = make('a');
    const b = make('b');
    const base = Date.now() + 60 * 60_000;
    const times = Array.from({ length: 16 }, (_, i) => base + ((i * 7919) % 16) * 1000);
    await Promise.all(times.map((t, i) => (i % 2 ? a : b).scheduleUnique('dispatch', 'k', new Date(t), { i })));
    const jobs = await pending(a, 'dispatch');
    expect(jobs).toHaveLength(1);
    expect(jobs[0].nextRunAt!.getTime()).toBe(Math.min(...times));
  });

  it('schedules a new pending job while the previous one runs', async () => {
    const s = make();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let runs = 0;
    s.define('dispatch', async () => {
      runs++;
      if (runs === 1) await gate;
    });
    await s.start();
    await s.scheduleUnique('dispatch', 'k', new Date(), {});
    await waitFor(() => runs === 1);
    await s.scheduleUnique('dispatch', 'k', new Date(), {});
    release();
    await waitFor(() => runs === 2);
  });

  it('repeats every() jobs, one per name however often declared', async () => {
    const s = make();
    let runs = 0;
    s.define('sweep', async (data) => {
      expect(data).toEqual({ scope: 'all' });
      runs++;
    });
    await s.every('sweep', 120, { scope: 'all' });
    await s.every('sweep', 120, { scope: 'all' });
    await s.start();
    await waitFor(() => runs >= 2);
    expect((await s.agenda.queryJobs({ name: 'sweep' })).total).toBe(1);
  });

  it('cancels pending jobs by name and key, and says how many', async () => {
    const s = make();
    let runs = 0;
    s.define('dispatch', async () => {
      runs++;
    });
    const soon = new Date(Date.now() + 150);
    await s.scheduleUnique('dispatch', 'a', soon, {});
    await s.scheduleUnique('dispatch', 'b', soon, {});
    await s.scheduleUnique('dispatch', 'c', soon, {});
    expect(await s.cancel('dispatch', 'a')).toBe(1);
    expect(await s.cancel('dispatch', 'a')).toBe(0);
    expect(await s.cancel('dispatch')).toBe(2);
    await s.every('sweep', 1000);
    expect(await s.cancel('sweep')).toBe(1);
    await s.start();
    await sleep(250);
    expect(runs).toBe(0);
  });

  it('retries a failing handler', async () => {
    const s = make('s', { retry: backoffStrategies.constant({ delay: 30, maxRetries: 3 }) });
    let attempts = 0;
    s.define('flaky', async () => {
      attempts++;
      if (attempts < 3) throw new Error('transient');
    });
    await s.start();
    await s.scheduleUnique('flaky', 'k', new Date(), {});
    await waitFor(() => attempts === 3);
    await waitFor(async () => (await s.agenda.queryJobs({ name: 'flaky' })).total === 0);
  });

  it('stop waits for running handlers, is idempotent, and start works again', async () => {
    const s = make();
    let finished = 0;
    let started = 0;
    s.define('slow', async () => {
      started++;
      await sleep(150);
      finished++;
    });
    await s.start();
    await s.scheduleUnique('slow', 'k', new Date(), {});
    await waitFor(() => started === 1);
    await Promise.all([s.stop(), s.stop()]);
    expect(finished).toBe(1);
    await s.stop();
    await s.start();
    await s.scheduleUnique('slow', 'k2', new Date(), {});
    await waitFor(() => finished === 2);
  });
});

describe('AgendaJobScheduler with an Agenda instance of the caller', () => {
  it('leaves the Agenda connection open on stop', async () => {
    const backend = new SqliteBackend({ database: ':memory:' });
    const agenda = new Agenda({ backend, ...FAST });
    const s = new AgendaJobScheduler(agenda);
    let runs = 0;
    s.define('x', async () => {
      runs++;
    });
    await s.start();
    await s.scheduleUnique('x', 'k', new Date(), {});
    await waitFor(() => runs === 1);
    await s.stop();
    expect((await agenda.queryJobs({ name: 'x' })).total).toBe(0);
    await backend.disconnect();
  });
});

describe('AgendaJobScheduler.stop in a real process', () => {
  it('lets the process exit after stop although the lock lifetime is agenda default (10 min)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agenda-exit-'));
    try {
      symlinkSync(join(projectRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
      mkdirSync(join(dir, 'sqlite-backend'));
      const compile = (src: string, dest: string) =>
        writeFileSync(dest, transformFileSync(src, { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } }).code);
      compile(join(here, 'agenda-job-scheduler.ts'), join(dir, 'agenda-job-scheduler.js'));
      for (const f of readdirSync(join(here, 'sqlite-backend')).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts'))) {
        compile(join(here, 'sqlite-backend', f), join(dir, 'sqlite-backend', f.replace(/\.ts$/, '.js')));
      }
      writeFileSync(
        join(dir, 'main.mjs'),
        `import { AgendaJobScheduler } from './agenda-job-scheduler.js';
import { SqliteBackend } from './sqlite-backend/index.js';
const s = new AgendaJobScheduler({ backend: new SqliteBackend({ database: process.argv[2] }), agenda: { processEvery: 50 } });
let ran = 0;
s.define('job', async () => { ran++; });
await s.start();
await s.scheduleUnique('job', 'k', new Date(), {});
await s.every('tick', 60000);
while (ran === 0) await new Promise((r) => setTimeout(r, 20));
await s.stop();
process.stdout.write('stopped ' + ran);
`,
      );
      const result = await new Promise<{ code: number | null; out: string; killed: boolean }>((done) => {
        const child = spawn(process.execPath, [join(dir, 'main.mjs'), join(dir, 'jobs.db')], { cwd: dir });
        let out = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (out += d));
        // A hang shows as the child still alive long after it printed "stopped".
        const guard = setTimeout(() => child.kill('SIGKILL'), 12000);
        child.on('exit', (code, signal) => {
          clearTimeout(guard);
          done({ code, out, killed: signal === 'SIGKILL' });
        });
      });
      expect(result.out).toContain('stopped 1');
      expect(result.killed).toBe(false);
      expect(result.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20000);
});
