/**
 * Agenda 6 on @agendajs/mongo-backend, run over the in-process Mongo TEST DOUBLE (and over a real mongod too
 * when MONGODB_URI is set). This proves the double is enough for the backend's queries and atomic claims; it
 * does not prove anything about MongoDB itself.
 *
 * Short `processEvery` and `defaultLockLifetime` keep the runs fast and let the process exit after `stop()`
 * (agenda keeps a lock-lifetime timer alive after stop; see ENVIRONMENT.md).
 */
import { describe, it, expect, beforeEach, afterEach } from '@jest/globals';
import { Agenda } from 'agenda';
import type { Job } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import type { Db } from 'mongodb';
import { describeEachMongoTarget, type MongoConnection } from './mongo-target.js';

const PROCESS_EVERY_MS = 40;
const LOCK_LIFETIME_MS = 1500;

function newAgenda(db: Db, name: string): Agenda {
  return new Agenda({
    backend: new MongoBackend({ mongo: db, collection: 'agendaJobs' }),
    name,
    processEvery: PROCESS_EVERY_MS,
    defaultLockLifetime: LOCK_LIFETIME_MS,
  });
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describeEachMongoTarget('Agenda 6 on @agendajs/mongo-backend', (target) => {
  let conn: MongoConnection | undefined;
  const started: Agenda[] = [];

  beforeEach(async () => {
    conn = undefined;
    conn = await target.connect();
  });

  afterEach(async () => {
    for (const a of started.splice(0)) await a.stop();
    await conn?.close();
  });

  async function start(name: string): Promise<Agenda> {
    const agenda = newAgenda(conn!.db, name);
    started.push(agenda);
    return agenda;
  }

  it('creates its index, runs a scheduled job with its data and records the run', async () => {
    const agenda = await start('solo');
    const seen: Array<{ data: unknown; id: string }> = [];
    agenda.define('greet', async (job: Job<{ who: string }>) => {
      seen.push({ data: job.attrs.data, id: String(job.attrs._id) });
    });
    await agenda.start();
    const job = await agenda.schedule(new Date(Date.now() + 50), 'greet', { who: 'world' });
    await waitFor(() => seen.length === 1, 'the job to run');
    expect(seen[0]).toEqual({ data: { who: 'world' }, id: String(job.attrs._id) });

    const jobs = conn!.db.collection('agendaJobs');
    await waitFor(async () => (await jobs.findOne({ name: 'greet' }))?.lastFinishedAt instanceof Date, 'lastFinishedAt');
    const stored = await jobs.findOne({ name: 'greet' });
    expect(stored).toMatchObject({ name: 'greet', data: { who: 'world' }, type: 'normal' });
    expect(stored!.lastRunAt).toBeInstanceOf(Date);
    expect((await jobs.indexes()).map((i) => i.name)).toContain('findAndLockNextJobIndex');
  });

  it('two Agenda instances on the same database run each job exactly once', async () => {
    const runs = new Map<string, number>();
    const handler = async (job: Job<{ n: number }>) => {
      const key = String(job.attrs.data.n);
      runs.set(key, (runs.get(key) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 5));
    };
    const a = await start('worker-a');
    const b = await start('worker-b');
    a.define('work', handler);
    b.define('work', handler);
    // All jobs are due before either worker starts, so both workers' first claim rounds race for them.
    const N = 12;
    for (let n = 0; n < N; n++) await a.now('work', { n });
    await Promise.all([a.start(), b.start()]);
    await waitFor(() => runs.size === N, `${N} distinct jobs to run`);
    // A few more polling rounds of both workers: a second run of any job would show up here.
    await new Promise((r) => setTimeout(r, PROCESS_EVERY_MS * 6));
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(runs.size).toBe(N);
    const finished = await conn!.db.collection('agendaJobs').countDocuments({ name: 'work', lastFinishedAt: { $ne: null } });
    expect(finished).toBe(N);
  });

  it('unique() jobs upsert into one document; every() keeps a single job per name', async () => {
    const agenda = await start('unique');
    agenda.define('sync', async () => undefined);
    agenda.define('tick', async () => undefined);
    const later = new Date(Date.now() + 60 * 60_000);
    await agenda.create('sync', { campaignId: 7 }).unique({ 'data.campaignId': 7 }).schedule(later).save();
    await agenda.create('sync', { campaignId: 7 }).unique({ 'data.campaignId': 7 }).schedule(later).save();
    await agenda.create('sync', { campaignId: 8 }).unique({ 'data.campaignId': 8 }).schedule(later).save();
    // insertOnly: a second save does not overwrite the first
    const first = new Date(Date.now() + 2 * 60 * 60_000);
    await agenda.create('sync', { campaignId: 9, v: 1 }).unique({ 'data.campaignId': 9 }, { insertOnly: true }).schedule(first).save();
    await agenda.create('sync', { campaignId: 9, v: 2 }).unique({ 'data.campaignId': 9 }, { insertOnly: true }).schedule(later).save();
    await agenda.every('1 hour', 'tick');
    await agenda.every('1 hour', 'tick');

    const jobs = conn!.db.collection('agendaJobs');
    expect(await jobs.countDocuments({ name: 'sync', 'data.campaignId': 7 })).toBe(1);
    expect(await jobs.countDocuments({ name: 'sync' })).toBe(3);
    const nine = await jobs.findOne({ name: 'sync', 'data.campaignId': 9 });
    expect(nine!.data).toEqual({ campaignId: 9, v: 1 });
    expect(nine!.nextRunAt.getTime()).toBe(first.getTime());
    expect(await jobs.countDocuments({ name: 'tick', type: 'single' })).toBe(1);
  });

  it('cancel removes matching jobs and a cancel with no criteria removes nothing', async () => {
    const agenda = await start('cancel');
    agenda.define('later', async () => undefined);
    const when = new Date(Date.now() + 60 * 60_000);
    await agenda.schedule(when, 'later', { k: 1 });
    await agenda.schedule(when, 'later', { k: 2 });
    expect(await agenda.cancel({})).toBe(0);
    expect(await agenda.cancel({ name: 'later', data: { k: 1 } })).toBe(1);
    const { jobs, total } = await agenda.queryJobs({ name: 'later' });
    expect(total).toBe(1);
    expect(jobs[0].data).toEqual({ k: 2 });
  });
});

describe('mongo-target', () => {
  it('always offers the double, and the real server only with MONGODB_URI', async () => {
    const { mongoTargets } = await import('./mongo-target.js');
    const labels = mongoTargets().map((t) => t.label);
    expect(labels[0]).toMatch(/double/);
    expect(labels.length).toBe(process.env.MONGODB_URI ? 2 : 1);
  });
});
