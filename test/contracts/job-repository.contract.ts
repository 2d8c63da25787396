/**
 * Contract suite for Agenda's `JobRepository` (agenda 6), the storage half of an `AgendaBackend`.
 * Agenda's own shared suites (`agenda/testing`) are not shipped in its npm tarball, so this one covers every
 * method of the interface itself, with the MongoDB backend (`@agendajs/mongo-backend`) as the behavioural
 * reference. It is backend-agnostic: it talks to the repository only through the interface (no SQL, no Mongo).
 *
 * Usage, in a jest test file:
 * ```ts
 * runJobRepositoryContract('SQLite', async () => {
 *   const backend = new SqliteBackend({ database: ':memory:' });
 *   await backend.connect();
 *   return { repo: backend.repository, cleanup: () => backend.disconnect() };
 * });
 * ```
 * `makeRepo` is called before every test and must return a connected repository over an EMPTY store, and a
 * `cleanup` run after the test. Optionally it returns `peer`: a function opening a second repository on the
 * SAME store through another connection (what a second process would use); the locking tests then race the
 * two. Without it they race concurrent calls on the one repository.
 */
import { describe, it, expect, beforeEach, afterEach } from '@jest/globals';
import type { JobParameters, JobRepository } from 'agenda';

export interface JobRepositoryUnderTest {
  repo: JobRepository;
  cleanup: () => Promise<void>;
  /** A second repository on the same store through another connection (closed by `cleanup`). */
  peer?: () => Promise<JobRepository>;
}

const MINUTE = 60_000;

/** A new (unsaved) job; everything not given is left undefined, as agenda's Job.toJson(true) would. */
export function newJob<DATA = Record<string, unknown>>(overrides: Partial<JobParameters<DATA>> & { name: string }): JobParameters<DATA> {
  return {
    priority: 0,
    nextRunAt: new Date(),
    type: 'normal',
    data: {} as DATA,
    ...overrides,
  };
}

const time = (d: Date | null | undefined): number | null => (d ? new Date(d).getTime() : null);

export function runJobRepositoryContract(label: string, makeRepo: () => Promise<JobRepositoryUnderTest>): void {
  describe(`JobRepository contract: ${label}`, () => {
    let sut: JobRepositoryUnderTest;
    let repo: JobRepository;

    beforeEach(async () => {
      sut = await makeRepo();
      repo = sut.repo;
    });
    afterEach(async () => {
      await sut.cleanup();
    });

    const save = <D = Record<string, unknown>>(j: Partial<JobParameters<D>> & { name: string }) =>
      repo.saveJob(newJob<D>(j), undefined);
    /** An id that has the backend's id format but matches no job. */
    const absentId = async (): Promise<string> => {
      const j = await save({ name: 'ghost' });
      await repo.removeJobs({ id: j._id });
      return String(j._id);
    };

    describe('connect', () => {
      it('is idempotent and leaves stored jobs alone', async () => {
        const j = await save({ name: 'a' });
        await repo.connect();
        expect((await repo.getJobById(String(j._id)))?.name).toBe('a');
      });
    });

    describe('saveJob (insert) and getJobById', () => {
      it('inserts a job with an id and round-trips every field', async () => {
        const next = new Date(Date.now() + MINUTE);
        const start = new Date(Date.now() - MINUTE);
        const end = new Date(Date.now() + 60 * MINUTE);
        const saved = await repo.saveJob(
          newJob({
            name: 'roundtrip',
            priority: 10,
            nextRunAt: next,
            data: { n: 1, s: 'x', flag: true, nested: { a: 'b' }, list: [1, 2], nil: null },
            repeatInterval: 30000,
            repeatTimezone: 'Europe/Paris',
            startDate: start,
            endDate: end,
            skipDays: [0, 6],
          }),
          { lastModifiedBy: 'worker-1' },
        );
        expect(typeof saved._id).toBe('string');
        expect(String(saved._id).length).toBeGreaterThan(0);
        const got = await repo.getJobById(String(saved._id));
        expect(got).not.toBeNull();
        expect(String(got!._id)).toBe(String(saved._id));
        expect(got!.name).toBe('roundtrip');
        expect(got!.priority).toBe(10);
        expect(got!.type).toBe('normal');
        expect(time(got!.nextRunAt)).toBe(next.getTime());
        expect(got!.data).toEqual({ n: 1, s: 'x', flag: true, nested: { a: 'b' }, list: [1, 2], nil: null });
        expect(got!.repeatInterval).toBe(30000);
        expect(got!.repeatTimezone).toBe('Europe/Paris');
        expect(time(got!.startDate)).toBe(start.getTime());
        expect(time(got!.endDate)).toBe(end.getTime());
        expect(got!.skipDays).toEqual([0, 6]);
        expect(got!.lastModifiedBy).toBe('worker-1');
        expect(got!.lockedAt ?? null).toBeNull();
        expect(got!.lastRunAt ?? null).toBeNull();
        expect(got!.failCount ?? null).toBeNull();
      });

      it('keeps a string repeatInterval and a repeatAt as given', async () => {
        const a = await save({ name: 'r1', repeatInterval: '5 minutes' });
        const b = await save({ name: 'r2', repeatAt: '3:30pm' });
        expect((await repo.getJobById(String(a._id)))!.repeatInterval).toBe('5 minutes');
        expect((await repo.getJobById(String(b._id)))!.repeatAt).toBe('3:30pm');
      });

      it('inserts two normal jobs with the same name and data as two jobs', async () => {
        const a = await save({ name: 'same', data: { k: 1 } });
        const b = await save({ name: 'same', data: { k: 1 } });
        expect(String(a._id)).not.toBe(String(b._id));
        expect((await repo.queryJobs({ name: 'same' })).total).toBe(2);
      });

      it('stores a null nextRunAt as null', async () => {
        const j = await save({ name: 'nonext', nextRunAt: null });
        expect((await repo.getJobById(String(j._id)))!.nextRunAt ?? null).toBeNull();
      });

      it('returns null for an id that matches no job', async () => {
        expect(await repo.getJobById(await absentId())).toBeNull();
      });
    });

    describe('saveJob (update by id)', () => {
      it('updates the stored job in place', async () => {
        const j = await save({ name: 'upd', data: { v: 1 }, priority: 0 });
        const later = new Date(Date.now() + 5 * MINUTE);
        const res = await repo.saveJob({ ...j, data: { v: 2 }, priority: 5, nextRunAt: later }, undefined);
        expect(String(res._id)).toBe(String(j._id));
        const got = await repo.getJobById(String(j._id));
        expect(got!.data).toEqual({ v: 2 });
        expect(got!.priority).toBe(5);
        expect(time(got!.nextRunAt)).toBe(later.getTime());
        expect((await repo.queryJobs({ name: 'upd' })).total).toBe(1);
      });

      it('does not re-create a job removed in the meantime and returns the given data', async () => {
        const j = await save({ name: 'gone', data: { v: 1 } });
        await repo.removeJobs({ id: j._id });
        const res = await repo.saveJob({ ...j, data: { v: 2 } }, undefined);
        expect(res.data).toEqual({ v: 2 });
        expect(await repo.getJobById(String(j._id))).toBeNull();
        expect((await repo.queryJobs({ name: 'gone' })).total).toBe(0);
      });
    });

    describe("saveJob type 'single' (every/repeat)", () => {
      it('keeps one job per name: a second save updates the first', async () => {
        const a = await save({ name: 'tick', type: 'single', repeatInterval: 1000, data: { v: 1 } });
        const b = await save({ name: 'tick', type: 'single', repeatInterval: 2000, data: { v: 2 } });
        expect(String(b._id)).toBe(String(a._id));
        const all = await repo.queryJobs({ name: 'tick' });
        expect(all.total).toBe(1);
        expect(all.jobs[0].data).toEqual({ v: 2 });
        expect(all.jobs[0].repeatInterval).toBe(2000);
      });

      it('does not overwrite the stored nextRunAt with a due one, but does with a future one', async () => {
        const first = new Date(Date.now() + 10 * MINUTE);
        const a = await save({ name: 'tick', type: 'single', nextRunAt: first });
        await save({ name: 'tick', type: 'single', nextRunAt: new Date(Date.now() - 1000) });
        expect(time((await repo.getJobById(String(a._id)))!.nextRunAt)).toBe(first.getTime());
        const future = new Date(Date.now() + 20 * MINUTE);
        await save({ name: 'tick', type: 'single', nextRunAt: future });
        expect(time((await repo.getJobById(String(a._id)))!.nextRunAt)).toBe(future.getTime());
      });

      it('inserts a due single job with its nextRunAt', async () => {
        const due = new Date(Date.now() - 1000);
        const a = await save({ name: 'fresh', type: 'single', nextRunAt: due });
        expect(time((await repo.getJobById(String(a._id)))!.nextRunAt)).toBe(due.getTime());
      });

      it('is per name: singles of two names are two jobs, and a normal job of the same name is separate', async () => {
        await save({ name: 's1', type: 'single' });
        await save({ name: 's2', type: 'single' });
        await save({ name: 's1', type: 'normal' });
        await save({ name: 's1', type: 'single' });
        expect((await repo.queryJobs({ name: 's1' })).total).toBe(2);
        expect((await repo.queryJobs({ name: 's2' })).total).toBe(1);
      });
    });

    describe('saveJob with unique()', () => {
      it('updates the job matching the unique query instead of inserting', async () => {
        const a = await save({ name: 'u', data: { k: 'x', v: 1 }, unique: { 'data.k': 'x' } });
        const b = await save({ name: 'u', data: { k: 'x', v: 2 }, unique: { 'data.k': 'x' } });
        expect(String(b._id)).toBe(String(a._id));
        const jobs = await repo.queryJobs({ name: 'u' });
        expect(jobs.total).toBe(1);
        expect(jobs.jobs[0].data).toEqual({ k: 'x', v: 2 });
      });

      it('scopes the unique query to the job name and to the given values', async () => {
        await save({ name: 'u', data: { k: 'x' }, unique: { 'data.k': 'x' } });
        await save({ name: 'u', data: { k: 'y' }, unique: { 'data.k': 'y' } });
        await save({ name: 'other', data: { k: 'x' }, unique: { 'data.k': 'x' } });
        expect((await repo.queryJobs({ name: 'u' })).total).toBe(2);
        expect((await repo.queryJobs({ name: 'other' })).total).toBe(1);
      });

      it('distinguishes value types (number 1 is not string "1")', async () => {
        await save({ name: 'u', data: { k: 1 }, unique: { 'data.k': 1 } });
        await save({ name: 'u', data: { k: '1' }, unique: { 'data.k': '1' } });
        await save({ name: 'u', data: { k: 1, again: true }, unique: { 'data.k': 1 } });
        const jobs = await repo.queryJobs({ name: 'u' });
        expect(jobs.total).toBe(2);
      });

      it('matches on several fields and nested paths', async () => {
        await save({ name: 'u', data: { a: { b: 1 }, c: 'z' }, unique: { 'data.a.b': 1, 'data.c': 'z' } });
        await save({ name: 'u', data: { a: { b: 1 }, c: 'w' }, unique: { 'data.a.b': 1, 'data.c': 'w' } });
        await save({ name: 'u', data: { a: { b: 1 }, c: 'z', more: 1 }, unique: { 'data.a.b': 1, 'data.c': 'z' } });
        expect((await repo.queryJobs({ name: 'u' })).total).toBe(2);
      });

      it('with insertOnly returns the existing job unchanged', async () => {
        const at1 = new Date(Date.now() + MINUTE);
        const a = await save({ name: 'u', nextRunAt: at1, data: { k: 'x', v: 1 }, unique: { 'data.k': 'x' }, uniqueOpts: { insertOnly: true } });
        const b = await save({
          name: 'u',
          nextRunAt: new Date(Date.now() + 2 * MINUTE),
          data: { k: 'x', v: 2 },
          unique: { 'data.k': 'x' },
          uniqueOpts: { insertOnly: true },
        });
        expect(String(b._id)).toBe(String(a._id));
        expect(b.data).toEqual({ k: 'x', v: 1 });
        expect(time(b.nextRunAt)).toBe(at1.getTime());
        const got = await repo.getJobById(String(a._id));
        expect(got!.data).toEqual({ k: 'x', v: 1 });
        expect((await repo.queryJobs({ name: 'u' })).total).toBe(1);
      });

      it('with insertOnly inserts when nothing matches', async () => {
        const a = await save({ name: 'u', data: { k: 'x' }, unique: { 'data.k': 'x' }, uniqueOpts: { insertOnly: true } });
        const b = await save({ name: 'u', data: { k: 'y' }, unique: { 'data.k': 'y' }, uniqueOpts: { insertOnly: true } });
        expect(String(a._id)).not.toBe(String(b._id));
        expect((await repo.queryJobs({ name: 'u' })).total).toBe(2);
      });

      it('never creates two jobs for one unique key under concurrent saves', async () => {
        const peer = sut.peer ? await sut.peer() : repo;
        const saves = Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? peer : repo).saveJob(
            newJob({ name: 'race', data: { k: 'same', i }, unique: { 'data.k': 'same' }, uniqueOpts: { insertOnly: true } }),
            undefined,
          ),
        );
        const results = await Promise.all(saves);
        expect(new Set(results.map((r) => String(r._id))).size).toBe(1);
        expect((await repo.queryJobs({ name: 'race' })).total).toBe(1);
      });

      it('rejects server-side code operators in a unique query', async () => {
        await expect(save({ name: 'u', data: {}, unique: { $where: 'true' } })).rejects.toThrow();
      });
    });

    describe('saveJob with debounce', () => {
      const delay = 10 * MINUTE;
      it('trailing (default): schedules delay after the save and pushes it on every save', async () => {
        const t0 = Date.now();
        const a = await save({ name: 'd', data: { k: 1 }, unique: { 'data.k': 1 }, uniqueOpts: { debounce: { delay } } });
        expect(time(a.nextRunAt)!).toBeGreaterThanOrEqual(t0 + delay);
        expect(time(a.debounceStartedAt)).not.toBeNull();
        await new Promise((r) => setTimeout(r, 20));
        const b = await save({ name: 'd', data: { k: 1, v: 2 }, unique: { 'data.k': 1 }, uniqueOpts: { debounce: { delay } } });
        expect(String(b._id)).toBe(String(a._id));
        expect(time(b.nextRunAt)!).toBeGreaterThan(time(a.nextRunAt)!);
        expect(time(b.debounceStartedAt)).toBe(time(a.debounceStartedAt));
        expect(b.data).toEqual({ k: 1, v: 2 });
        expect((await repo.queryJobs({ name: 'd' })).total).toBe(1);
      });

      it('trailing with maxWait exceeded: runs now and restarts the window', async () => {
        const a = await save({ name: 'd', data: { k: 1 }, unique: { 'data.k': 1 }, uniqueOpts: { debounce: { delay, maxWait: 10 } } });
        await new Promise((r) => setTimeout(r, 30));
        const before = Date.now();
        const b = await save({ name: 'd', data: { k: 1 }, unique: { 'data.k': 1 }, uniqueOpts: { debounce: { delay, maxWait: 10 } } });
        expect(String(b._id)).toBe(String(a._id));
        expect(time(b.nextRunAt)!).toBeLessThanOrEqual(Date.now());
        expect(time(b.nextRunAt)!).toBeGreaterThanOrEqual(before - 5);
        expect(b.debounceStartedAt ?? null).toBeNull();
      });

      it('leading: a new job keeps its nextRunAt; later saves keep the first nextRunAt and update data', async () => {
        const now = new Date();
        const a = await save({ name: 'd', nextRunAt: now, data: { v: 1 }, unique: { 'data.v': { $exists: true } }, uniqueOpts: { debounce: { delay, strategy: 'leading' } } });
        expect(time(a.nextRunAt)).toBe(now.getTime());
        const b = await save({
          name: 'd',
          nextRunAt: new Date(Date.now() + MINUTE),
          data: { v: 2 },
          unique: { 'data.v': { $exists: true } },
          uniqueOpts: { debounce: { delay, strategy: 'leading' } },
        });
        expect(String(b._id)).toBe(String(a._id));
        expect(time(b.nextRunAt)).toBe(now.getTime());
        expect(b.data).toEqual({ v: 2 });
      });
    });

    describe('saveJobState', () => {
      it('writes the processing fields', async () => {
        const j = await save({ name: 's' });
        const lockedAt = new Date(Date.now() - 1000);
        const lastRunAt = new Date(Date.now() - 900);
        const failedAt = new Date(Date.now() - 800);
        const lastFinishedAt = new Date(Date.now() - 700);
        await repo.saveJobState(
          { ...j, lockedAt, lastRunAt, failedAt, lastFinishedAt, failCount: 2, failReason: 'boom', progress: 50, nextRunAt: null },
          { lastModifiedBy: 'w2' },
        );
        const got = await repo.getJobById(String(j._id));
        expect(time(got!.lockedAt)).toBe(lockedAt.getTime());
        expect(time(got!.lastRunAt)).toBe(lastRunAt.getTime());
        expect(time(got!.failedAt)).toBe(failedAt.getTime());
        expect(time(got!.lastFinishedAt)).toBe(lastFinishedAt.getTime());
        expect(got!.failCount).toBe(2);
        expect(got!.failReason).toBe('boom');
        expect(got!.progress).toBe(50);
        expect(got!.nextRunAt ?? null).toBeNull();
        expect(got!.lastModifiedBy).toBe('w2');
      });

      it('clears fields that are undefined', async () => {
        const j = await save({ name: 's' });
        await repo.saveJobState({ ...j, lockedAt: new Date(), failCount: 1, failReason: 'x' }, undefined);
        await repo.saveJobState({ ...j, lockedAt: undefined, failCount: undefined, failReason: undefined }, undefined);
        const got = await repo.getJobById(String(j._id));
        expect(got!.lockedAt ?? null).toBeNull();
        expect(got!.failCount ?? null).toBeNull();
        expect(got!.failReason ?? null).toBeNull();
      });

      it('stores a failReason that is not a string as it was given, as agenda\'s Job.fail() records a thrown non-Error', async () => {
        // agenda types failReason as a string, yet stores whatever was thrown when it is not an Error, and the
        // MongoDB backend keeps that value: it must round-trip (JSON-shaped), release the lock and not break the save
        const reasons: unknown[] = [
          { code: 'E_FORK', exitCode: 1, nested: { list: [1, 'two', null] } },
          42,
          false,
          ['a', 1],
          '\u0000json:{"looks":"encoded"}',
          'plain text',
        ];
        for (const reason of reasons) {
          const j = await save({ name: 'fails' });
          await repo.saveJobState(
            { ...j, lockedAt: undefined, failCount: 1, failReason: reason as string, failedAt: new Date(), lastFinishedAt: new Date() },
            undefined,
          );
          const got = await repo.getJobById(String(j._id));
          expect(got!.failReason).toEqual(reason);
          expect(got!.lockedAt ?? null).toBeNull();
          expect(got!.failCount).toBe(1);
          // and through a full save (insert and update), as Job.save() writes it
          const inserted = await repo.saveJob({ ...newJob({ name: 'fails-saved' }), failReason: reason as string }, undefined);
          expect((await repo.getJobById(String(inserted._id)))!.failReason).toEqual(reason);
          const updated = await repo.saveJob({ ...inserted, failReason: { again: reason } as never }, undefined);
          expect((await repo.getJobById(String(updated._id)))!.failReason).toEqual({ again: reason });
        }
      });

      it('does not touch the job definition fields (data, priority)', async () => {
        const j = await save({ name: 's', data: { v: 1 }, priority: 3 });
        await repo.saveJobState({ ...j, data: { v: 99 }, priority: 99, lastRunAt: new Date() }, undefined);
        const got = await repo.getJobById(String(j._id));
        expect(got!.data).toEqual({ v: 1 });
        expect(got!.priority).toBe(3);
      });

      it('throws for a job that no longer exists, or without an id', async () => {
        const id = await absentId();
        await expect(repo.saveJobState({ ...newJob({ name: 'ghost' }), _id: id as never }, undefined)).rejects.toThrow();
        await expect(repo.saveJobState(newJob({ name: 'ghost' }), undefined)).rejects.toThrow();
      });
    });

    describe('getNextJobToRun', () => {
      const scan = () => new Date(Date.now() + 1000);
      const deadline = () => new Date(Date.now() - 10 * MINUTE);

      it('locks and returns a due job, then finds nothing more', async () => {
        const j = await save({ name: 'n', nextRunAt: new Date(Date.now() - 1000) });
        const lockTime = new Date(Date.now() - 5);
        const got = await repo.getNextJobToRun('n', scan(), deadline(), lockTime, { lastModifiedBy: 'w1' });
        expect(String(got?._id)).toBe(String(j._id));
        expect(time(got!.lockedAt)).toBe(lockTime.getTime());
        expect(time((await repo.getJobById(String(j._id)))!.lockedAt)).toBe(lockTime.getTime());
        expect((await repo.getJobById(String(j._id)))!.lastModifiedBy).toBe('w1');
        expect(await repo.getNextJobToRun('n', scan(), deadline(), undefined, undefined)).toBeUndefined();
      });

      it('uses the current time as lock time when none is given', async () => {
        await save({ name: 'n', nextRunAt: new Date(Date.now() - 1000) });
        const before = Date.now();
        const got = await repo.getNextJobToRun('n', scan(), deadline(), undefined, undefined);
        expect(time(got!.lockedAt)!).toBeGreaterThanOrEqual(before);
        expect(time(got!.lockedAt)!).toBeLessThanOrEqual(Date.now());
      });

      it('takes jobs due before nextScanAt, not later ones, and only of the given name', async () => {
        await save({ name: 'n', nextRunAt: new Date(Date.now() + 10 * MINUTE) });
        await save({ name: 'other', nextRunAt: new Date(Date.now() - 1000) });
        expect(await repo.getNextJobToRun('n', scan(), deadline(), undefined, undefined)).toBeUndefined();
        const soon = await save({ name: 'n', nextRunAt: new Date(Date.now() + 500) });
        expect(String((await repo.getNextJobToRun('n', scan(), deadline(), undefined, undefined))?._id)).toBe(String(soon._id));
      });

      it('never takes a job without nextRunAt that is not locked', async () => {
        await save({ name: 'n', nextRunAt: null });
        expect(await repo.getNextJobToRun('n', scan(), deadline(), undefined, undefined)).toBeUndefined();
      });

      it('skips disabled jobs', async () => {
        const j = await save({ name: 'n', nextRunAt: new Date(Date.now() - 1000), disabled: true });
        expect(await repo.getNextJobToRun('n', scan(), deadline(), undefined, undefined)).toBeUndefined();
        await repo.enableJobs({ id: j._id });
        expect(String((await repo.getNextJobToRun('n', scan(), deadline(), undefined, undefined))?._id)).toBe(String(j._id));
      });

      it('orders by nextRunAt ascending, then priority descending', async () => {
        const t = Date.now() - MINUTE;
        const late = await save({ name: 'n', nextRunAt: new Date(t + 2000), priority: 100 });
        const lowEarly = await save({ name: 'n', nextRunAt: new Date(t), priority: -10 });
        const highEarly = await save({ name: 'n', nextRunAt: new Date(t), priority: 10 });
        const order: string[] = [];
        for (let i = 0; i < 3; i++) order.push(String((await repo.getNextJobToRun('n', scan(), deadline(), undefined, undefined))?._id));
        expect(order).toEqual([String(highEarly._id), String(lowEarly._id), String(late._id)]);
      });

      it('takes over a job whose lock expired (lockedAt at or before lockDeadline), but not a fresh lock', async () => {
        const j = await save({ name: 'n', nextRunAt: new Date(Date.now() - 1000) });
        await repo.saveJobState({ ...j, lockedAt: new Date(Date.now() - 5000) }, undefined);
        expect(await repo.getNextJobToRun('n', scan(), new Date(Date.now() - 10_000), undefined, undefined)).toBeUndefined();
        const got = await repo.getNextJobToRun('n', scan(), new Date(Date.now() - 1000), undefined, undefined);
        expect(String(got?._id)).toBe(String(j._id));
        expect(time(got!.lockedAt)!).toBeGreaterThan(Date.now() - 1000);
      });

      it('takes over an expired lock even when the job has no nextRunAt (crashed one-shot job)', async () => {
        const j = await save({ name: 'n', nextRunAt: null });
        await repo.saveJobState({ ...j, nextRunAt: null, lockedAt: new Date(Date.now() - 20 * MINUTE) }, undefined);
        expect(String((await repo.getNextJobToRun('n', scan(), deadline(), undefined, undefined))?._id)).toBe(String(j._id));
      });

      it('never hands one job to two concurrent callers', async () => {
        const peer = sut.peer ? await sut.peer() : repo;
        const ids = new Set<string>();
        for (let i = 0; i < 10; i++) ids.add(String((await save({ name: 'c', nextRunAt: new Date(Date.now() - 1000), data: { i } }))._id));
        const calls = Array.from({ length: 30 }, (_, i) =>
          (i % 2 ? peer : repo).getNextJobToRun('c', scan(), deadline(), undefined, { lastModifiedBy: `w${i}` }),
        );
        const got = (await Promise.all(calls)).filter((j): j is JobParameters => j !== undefined).map((j) => String(j._id));
        expect(got.length).toBe(10);
        expect(new Set(got)).toEqual(ids);
      });
    });

    describe('lockJob', () => {
      it('locks an unlocked job whose nextRunAt matches, once', async () => {
        const j = await save({ name: 'l', nextRunAt: new Date(Date.now() - 1000) });
        const locked = await repo.lockJob(j, { lastModifiedBy: 'w1' });
        expect(String(locked?._id)).toBe(String(j._id));
        expect(locked!.lockedAt).toBeInstanceOf(Date);
        expect(locked!.lastModifiedBy).toBe('w1');
        expect(await repo.lockJob(j, undefined)).toBeUndefined();
      });

      it('refuses when nextRunAt changed since the job was read', async () => {
        const j = await save({ name: 'l', nextRunAt: new Date(Date.now() - 1000) });
        await repo.saveJob({ ...j, nextRunAt: new Date(Date.now() + MINUTE) }, undefined);
        expect(await repo.lockJob(j, undefined)).toBeUndefined();
      });

      it('refuses disabled jobs and jobs without id', async () => {
        const j = await save({ name: 'l', disabled: true });
        expect(await repo.lockJob(j, undefined)).toBeUndefined();
        expect(await repo.lockJob(newJob({ name: 'l' }), undefined)).toBeUndefined();
      });
    });

    describe('unlockJob / unlockJobs', () => {
      it('unlockJob releases a lock when the job has a nextRunAt', async () => {
        const j = await save({ name: 'u', nextRunAt: new Date(Date.now() - 1000) });
        const locked = await repo.getNextJobToRun('u', new Date(Date.now() + 1000), new Date(Date.now() - MINUTE), undefined, undefined);
        await repo.unlockJob(locked!);
        expect((await repo.getJobById(String(j._id)))!.lockedAt ?? null).toBeNull();
      });

      it('unlockJob keeps the lock of a running one-shot job (nextRunAt null) and ignores a job without id', async () => {
        const j = await save({ name: 'u' });
        await repo.saveJobState({ ...j, nextRunAt: null, lockedAt: new Date() }, undefined);
        await repo.unlockJob({ ...j, nextRunAt: null });
        expect((await repo.getJobById(String(j._id)))!.lockedAt).toBeInstanceOf(Date);
        await expect(repo.unlockJob(newJob({ name: 'u' }))).resolves.toBeUndefined();
      });

      it('unlockJobs releases the given jobs whatever their nextRunAt, and only those', async () => {
        const a = await save({ name: 'u' });
        const b = await save({ name: 'u' });
        const c = await save({ name: 'u' });
        for (const j of [a, b, c]) await repo.saveJobState({ ...j, nextRunAt: null, lockedAt: new Date() }, undefined);
        await repo.unlockJobs([a._id!, String(b._id)]);
        expect((await repo.getJobById(String(a._id)))!.lockedAt ?? null).toBeNull();
        expect((await repo.getJobById(String(b._id)))!.lockedAt ?? null).toBeNull();
        expect((await repo.getJobById(String(c._id)))!.lockedAt).toBeInstanceOf(Date);
        await expect(repo.unlockJobs([])).resolves.toBeUndefined();
      });
    });

    describe('removeJobs', () => {
      const seed = async () => ({
        a: await save({ name: 'a', data: { g: 1, tag: { x: 'y' } } }),
        b: await save({ name: 'b', data: { g: 1 } }),
        c: await save({ name: 'c', data: { g: 2 } }),
      });

      it('removes nothing without criteria', async () => {
        await seed();
        expect(await repo.removeJobs({})).toBe(0);
        expect(await repo.removeJobs({ ids: [] })).toBe(0);
        expect((await repo.queryJobs()).total).toBe(3);
      });

      it('removes by id and by ids', async () => {
        const { a, b, c } = await seed();
        expect(await repo.removeJobs({ id: a._id })).toBe(1);
        expect(await repo.removeJobs({ ids: [String(b._id), String(c._id)] })).toBe(2);
        expect((await repo.queryJobs()).total).toBe(0);
      });

      it('removes by name, names and notNames', async () => {
        await seed();
        await save({ name: 'a' });
        expect(await repo.removeJobs({ name: 'a' })).toBe(2);
        expect(await repo.removeJobs({ notNames: ['b'] })).toBe(1);
        expect((await repo.getDistinctJobNames()).sort()).toEqual(['b']);
        await save({ name: 'c' });
        expect(await repo.removeJobs({ names: ['b', 'c', 'zzz'] })).toBe(2);
        expect((await repo.queryJobs()).total).toBe(0);
      });

      it('removes by partial data match, combined with a name', async () => {
        await seed();
        expect(await repo.removeJobs({ name: 'b', data: { g: 2 } })).toBe(0);
        expect(await repo.removeJobs({ data: { tag: { x: 'y' } } })).toBe(1);
        expect(await repo.removeJobs({ data: { g: 1 } })).toBe(1);
        expect((await repo.getDistinctJobNames()).sort()).toEqual(['c']);
      });

      it('returns 0 for an unknown id', async () => {
        await seed();
        expect(await repo.removeJobs({ id: await absentId() })).toBe(0);
        expect((await repo.queryJobs()).total).toBe(3);
      });
    });

    describe('disableJobs / enableJobs', () => {
      it('disables and enables matching jobs, counting only changed ones', async () => {
        const a = await save({ name: 'x', data: { k: 1 } });
        await save({ name: 'x', data: { k: 2 } });
        await save({ name: 'y' });
        expect(await repo.disableJobs({ name: 'x' })).toBe(2);
        expect(await repo.disableJobs({ name: 'x' })).toBe(0);
        expect((await repo.getJobById(String(a._id)))!.disabled).toBe(true);
        expect(await repo.enableJobs({ name: 'x', data: { k: 1 } })).toBe(1);
        expect((await repo.getJobById(String(a._id)))!.disabled).toBe(false);
        expect((await repo.queryJobs({ includeDisabled: false })).total).toBe(2);
      });

      it('touch nothing without criteria', async () => {
        await save({ name: 'x' });
        expect(await repo.disableJobs({})).toBe(0);
        expect(await repo.enableJobs({})).toBe(0);
        expect((await repo.queryJobs({ includeDisabled: false })).total).toBe(1);
      });

      it('select by id, ids and notNames too', async () => {
        const a = await save({ name: 'x' });
        const b = await save({ name: 'y' });
        const c = await save({ name: 'z' });
        expect(await repo.disableJobs({ id: a._id })).toBe(1);
        expect(await repo.disableJobs({ ids: [String(b._id), String(c._id)] })).toBe(2);
        expect(await repo.enableJobs({ notNames: ['x'] })).toBe(2);
        expect((await repo.queryJobs({ includeDisabled: false })).jobs.map((j) => j.name).sort()).toEqual(['y', 'z']);
      });
    });

    describe('purgeAllJobs', () => {
      it('removes every job and says how many', async () => {
        await save({ name: 'a' });
        await save({ name: 'b', type: 'single' });
        expect(await repo.purgeAllJobs()).toBe(2);
        expect((await repo.queryJobs()).total).toBe(0);
        expect(await repo.purgeAllJobs()).toBe(0);
      });
    });

    describe('getQueueSize', () => {
      it('counts jobs whose nextRunAt is in the past', async () => {
        expect(await repo.getQueueSize()).toBe(0);
        await save({ name: 'q', nextRunAt: new Date(Date.now() - 1000) });
        await save({ name: 'q', nextRunAt: new Date(Date.now() - 2000) });
        await save({ name: 'q', nextRunAt: new Date(Date.now() + MINUTE) });
        await save({ name: 'q', nextRunAt: null });
        expect(await repo.getQueueSize()).toBe(2);
      });
    });

    describe('getDistinctJobNames', () => {
      it('lists each name once', async () => {
        expect(await repo.getDistinctJobNames()).toEqual([]);
        await save({ name: 'b' });
        await save({ name: 'a' });
        await save({ name: 'b' });
        expect((await repo.getDistinctJobNames()).sort()).toEqual(['a', 'b']);
      });
    });

    describe('queryJobs', () => {
      /** One job per computed state, plus a disabled one. */
      const seedStates = async () => {
        const now = Date.now();
        const running = await save({ name: 'st', data: { s: 'running' } });
        await repo.saveJobState({ ...running, lockedAt: new Date(now), lastRunAt: new Date(now) }, undefined);
        const failed = await save({ name: 'st', data: { s: 'failed' }, nextRunAt: null });
        await repo.saveJobState({ ...failed, nextRunAt: null, failedAt: new Date(now), lastFinishedAt: new Date(now), failCount: 1, failReason: 'x' }, undefined);
        await save({ name: 'st', data: { s: 'repeating' }, repeatInterval: 60000, nextRunAt: new Date(now + MINUTE) });
        await save({ name: 'st', data: { s: 'scheduled' }, nextRunAt: new Date(now + MINUTE) });
        await save({ name: 'st', data: { s: 'queued' }, nextRunAt: new Date(now - MINUTE) });
        const completed = await save({ name: 'st', data: { s: 'completed' }, nextRunAt: null });
        await repo.saveJobState({ ...completed, nextRunAt: null, lastRunAt: new Date(now - 10), lastFinishedAt: new Date(now) }, undefined);
        await save({ name: 'st', data: { s: 'paused' }, nextRunAt: new Date(now + MINUTE), disabled: true });
      };

      it('returns every job with a computed state and a total', async () => {
        await seedStates();
        const res = await repo.queryJobs();
        expect(res.total).toBe(7);
        const byData = Object.fromEntries(res.jobs.map((j) => [(j.data as { s: string }).s, j.state]));
        expect(byData).toEqual({
          running: 'running',
          failed: 'failed',
          repeating: 'repeating',
          scheduled: 'scheduled',
          queued: 'queued',
          completed: 'completed',
          paused: 'scheduled',
        });
        for (const j of res.jobs) expect(typeof j._id).toBe('string');
      });

      it.each(['running', 'failed', 'repeating', 'queued', 'completed'] as const)('filters on state %s', async (state) => {
        await seedStates();
        const res = await repo.queryJobs({ state });
        expect(res.total).toBe(1);
        expect(res.jobs.map((j) => (j.data as { s: string }).s)).toEqual([state]);
      });

      it("filters on state 'scheduled' and on 'paused' (the disabled flag)", async () => {
        await seedStates();
        const scheduled = await repo.queryJobs({ state: 'scheduled' });
        expect(scheduled.jobs.map((j) => (j.data as { s: string }).s).sort()).toEqual(['paused', 'scheduled']);
        const paused = await repo.queryJobs({ state: 'paused' });
        expect(paused.jobs.map((j) => (j.data as { s: string }).s)).toEqual(['paused']);
        expect((await repo.queryJobs({ state: 'scheduled', includeDisabled: false })).total).toBe(1);
      });

      it('paginates after state filtering', async () => {
        for (let i = 0; i < 5; i++) await save({ name: 'p', nextRunAt: new Date(Date.now() + (i + 1) * MINUTE), data: { i } });
        await save({ name: 'p', nextRunAt: new Date(Date.now() - MINUTE), data: { i: 99 } });
        const page = await repo.queryJobs({ state: 'scheduled', sort: { nextRunAt: 'asc' }, skip: 1, limit: 2 });
        expect(page.total).toBe(5);
        expect(page.jobs.map((j) => (j.data as { i: number }).i)).toEqual([1, 2]);
      });

      it('filters by name, names, id, ids', async () => {
        const a = await save({ name: 'a' });
        const b = await save({ name: 'b' });
        await save({ name: 'c' });
        expect((await repo.queryJobs({ name: 'a' })).jobs.map((j) => String(j._id))).toEqual([String(a._id)]);
        expect((await repo.queryJobs({ names: ['a', 'b'] })).total).toBe(2);
        expect((await repo.queryJobs({ id: String(b._id) })).jobs.map((j) => j.name)).toEqual(['b']);
        expect((await repo.queryJobs({ ids: [String(a._id), String(b._id)] })).total).toBe(2);
        expect((await repo.queryJobs({ id: await absentId() })).total).toBe(0);
      });

      it('searches names case-insensitively, treating special characters literally', async () => {
        await save({ name: 'Send.Email' });
        await save({ name: 'sendXemail' });
        await save({ name: 'report' });
        expect((await repo.queryJobs({ search: 'send' })).total).toBe(2);
        expect((await repo.queryJobs({ search: 'd.e' })).jobs.map((j) => j.name)).toEqual(['Send.Email']);
        expect((await repo.queryJobs({ search: '%' })).total).toBe(0);
      });

      it('filters by partial data match', async () => {
        await save({ name: 'd', data: { org: 1, kind: 'a', deep: { x: 1, y: 2 } } });
        await save({ name: 'd', data: { org: 1, kind: 'b' } });
        await save({ name: 'd', data: { org: 2, kind: 'a' } });
        expect((await repo.queryJobs({ data: { org: 1 } })).total).toBe(2);
        expect((await repo.queryJobs({ data: { org: 1, kind: 'a' } })).total).toBe(1);
        expect((await repo.queryJobs({ data: { deep: { y: 2 } } })).total).toBe(1);
        expect((await repo.queryJobs({ data: { org: '1' } })).total).toBe(0);
      });

      it('sorts and paginates, with the total before pagination', async () => {
        const t = Date.now();
        for (const [i, p] of [3, 1, 2].entries()) await save({ name: `n${p}`, priority: p * 10, nextRunAt: new Date(t + (i + 1) * MINUTE) });
        expect((await repo.queryJobs({ sort: { name: 'asc' } })).jobs.map((j) => j.name)).toEqual(['n1', 'n2', 'n3']);
        expect((await repo.queryJobs({ sort: { priority: 'desc' } })).jobs.map((j) => j.name)).toEqual(['n3', 'n2', 'n1']);
        expect((await repo.queryJobs({ sort: { nextRunAt: 'asc' } })).jobs.map((j) => j.name)).toEqual(['n3', 'n1', 'n2']);
        const page = await repo.queryJobs({ sort: { name: 'desc' }, skip: 1, limit: 1 });
        expect(page.total).toBe(3);
        expect(page.jobs.map((j) => j.name)).toEqual(['n2']);
        expect((await repo.queryJobs({ sort: { name: 'asc' }, skip: 2 })).jobs.map((j) => j.name)).toEqual(['n3']);
      });
    });

    describe('getJobsOverview', () => {
      it('counts jobs per name and state, paused from the disabled flag', async () => {
        const now = Date.now();
        await save({ name: 'o', nextRunAt: new Date(now + MINUTE) });
        await save({ name: 'o', nextRunAt: new Date(now - MINUTE) });
        await save({ name: 'o', nextRunAt: new Date(now + MINUTE), disabled: true });
        const r = await save({ name: 'o' });
        await repo.saveJobState({ ...r, lockedAt: new Date(), lastRunAt: new Date() }, undefined);
        await save({ name: 'p', type: 'single', repeatInterval: 1000 });
        const overview = (await repo.getJobsOverview()).sort((a, b) => a.name.localeCompare(b.name));
        expect(overview).toEqual([
          { name: 'o', total: 4, running: 1, scheduled: 2, queued: 1, completed: 0, failed: 0, repeating: 0, paused: 1 },
          { name: 'p', total: 1, running: 0, scheduled: 0, queued: 0, completed: 0, failed: 0, repeating: 1, paused: 0 },
        ]);
        await repo.purgeAllJobs();
        expect(await repo.getJobsOverview()).toEqual([]);
      });
    });
  });
}
