import { Agenda, backoffStrategies } from 'agenda';
import type { AgendaBackend, AgendaOptions, BackoffStrategy, JobParameters, JobRepository, JobRepositoryOptions } from 'agenda';
import type { JobData, JobDefinitionOptions, JobHandler, JobScheduler } from '../../../core/ports/job-scheduler.port.js';

/** What this adapter stores as an Agenda job's `data`. */
interface StoredJobData {
  /** The scheduleUnique key, null for `every` jobs. */
  uniqueKey: string | null;
  payload: JobData;
}

/**
 * Optional backend capability (SqliteJobRepository has it): one pending job per (name, unique query) whose
 * nextRunAt becomes the earlier of the stored and the given one, in one atomic step.
 */
interface PendingEarliestUpsert {
  upsertPendingEarliest(job: JobParameters, unique: Record<string, unknown>, options?: JobRepositoryOptions): Promise<JobParameters>;
}

function hasPendingEarliestUpsert(repo: JobRepository): repo is JobRepository & PendingEarliestUpsert {
  return typeof (repo as Partial<PendingEarliestUpsert>).upsertPendingEarliest === 'function';
}

export interface AgendaJobSchedulerOptions {
  /**
   * Retry of a failed run (agenda's backoff strategy), or `false` for none. Default: exponential from 5 s,
   * doubling, at most 5 min apart, 8 retries.
   */
  retry?: BackoffStrategy | false;
  /** Default `lockLifetimeMs` of definitions that give none (agenda's own default is 10 min). */
  defaultLockLifetimeMs?: number;
}

/** Either an Agenda the caller owns, or a backend plus Agenda options from which this adapter builds (and owns) one. */
export type AgendaSource = Agenda | { backend: AgendaBackend; agenda?: Omit<AgendaOptions, 'backend'> };

/** The part of agenda's (private) JobProcessor this adapter hooks; checked at runtime, skipped if absent. */
interface JobProcessorInternals {
  processEvery: number;
  runOrRetry: (job: { attrs: JobParameters }) => unknown;
}

type Timer = ReturnType<typeof setTimeout>;

/**
 * JobScheduler on Agenda 6, with any Agenda backend (SQLite backend of ours, MongoDB backend).
 *
 * - Jobs carry `{ uniqueKey, payload }` as data; handlers get `payload`. One-shot jobs are removed once they
 *   succeed; failures are retried with agenda's backoff (see options); a job whose retries are exhausted stays
 *   stored, failed, with no next run.
 * - scheduleUnique: a "pending" job is one with a next run time and no lock. With a backend offering
 *   `upsertPendingEarliest` (ours), keep-one-and-take-the-earlier is a single atomic step. With any other backend
 *   it is get-or-insert (agenda's unique insertOnly), then a conditional move to the earlier time, then a
 *   clean-up that keeps the earliest pending job: two racing processes may briefly store two jobs, never
 *   leave two behind (on MongoDB the get-or-insert itself is only as atomic as its upsert without a unique index).
 * - stop(): agenda keeps a lock-liveness timer of lockLifetime/2 per started run that it never clears, which
 *   keeps the process alive after stop (minutes with the default lifetime). This adapter captures exactly those
 *   timers when agenda creates them (the synchronous part of JobProcessor.runOrRetry) and unrefs them on stop.
 *   A run longer than lockLifetime/2 re-arms that timer outside the capture window; such a timer can still delay
 *   exit by up to lockLifetime/2.
 */
export class AgendaJobScheduler implements JobScheduler {
  readonly agenda: Agenda;
  private readonly ownedBackend: AgendaBackend | undefined;
  private readonly retry: BackoffStrategy | undefined;
  private readonly defaultLockLifetimeMs: number | undefined;
  private readonly names = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly livenessTimers = new Set<Timer>();
  private started = false;
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private backendClosed = false;

  constructor(source: AgendaSource, options: AgendaJobSchedulerOptions = {}) {
    if (source instanceof Agenda) {
      this.agenda = source;
    } else {
      this.ownedBackend = source.backend;
      this.agenda = new Agenda({ ...source.agenda, backend: source.backend });
    }
    this.retry =
      options.retry === false
        ? undefined
        : (options.retry ?? backoffStrategies.exponential({ delay: 5_000, factor: 2, maxDelay: 5 * 60_000, maxRetries: 8 }));
    this.defaultLockLifetimeMs = options.defaultLockLifetimeMs;
  }

  define(name: string, handler: JobHandler, options: JobDefinitionOptions = {}): void {
    if (this.names.has(name)) throw new Error(`Job "${name}" is already defined`);
    this.names.add(name);
    const agenda = this.agenda;
    this.agenda.define(
      name,
      async (job) => {
        // Settles when agenda has finished with the run (state saved), so stop() can wait for it.
        let settle!: () => void;
        const done = new Promise<void>((resolve) => (settle = resolve));
        const onComplete = (completed: unknown) => {
          if (completed === job) {
            agenda.off(`complete:${name}`, onComplete);
            settle();
          }
        };
        agenda.on(`complete:${name}`, onComplete);
        this.inFlight.add(done);
        void done.then(() => this.inFlight.delete(done));
        const data = job.attrs.data as StoredJobData | null;
        await handler({ ...(data?.payload ?? {}) });
      },
      {
        concurrency: options.concurrency ?? 5,
        lockLifetime: options.lockLifetimeMs ?? this.defaultLockLifetimeMs,
        backoff: this.retry,
        removeOnComplete: true,
      },
    );
  }

  async scheduleUnique(name: string, uniqueKey: string, at: Date, data: JobData): Promise<void> {
    await this.agenda.ready;
    const stored: StoredJobData = { uniqueKey, payload: data };
    const repo = this.agenda.db;
    const modifier = { lastModifiedBy: this.agenda.attrs.name || undefined };
    if (hasPendingEarliestUpsert(repo)) {
      const job = this.agenda.create(name, stored);
      job.attrs.nextRunAt = at;
      await repo.upsertPendingEarliest(job.toJson(true) as JobParameters, { 'data.uniqueKey': uniqueKey }, modifier);
      return;
    }
    // Generic path over agenda's public unique() semantics.
    const pending = { 'data.uniqueKey': uniqueKey, nextRunAt: { $ne: null }, lockedAt: null };
    const first = this.agenda.create(name, stored).schedule(at).unique(pending, { insertOnly: true });
    await first.save();
    const current = first.attrs.nextRunAt;
    if (current && current.getTime() > at.getTime()) {
      const earlier = this.agenda
        .create(name, stored)
        .schedule(at)
        .unique({ 'data.uniqueKey': uniqueKey, nextRunAt: { $gt: at }, lockedAt: null });
      await earlier.save();
      await this.keepEarliestPending(name, uniqueKey);
    }
  }

  /** Removes all but the earliest pending job of (name, uniqueKey); every racing caller picks the same one. */
  private async keepEarliestPending(name: string, uniqueKey: string): Promise<void> {
    const { jobs } = await this.agenda.queryJobs({ name, data: { uniqueKey } });
    const pending = jobs
      .filter((j) => j.nextRunAt && !j.lockedAt)
      .sort((a, b) => a.nextRunAt!.getTime() - b.nextRunAt!.getTime() || String(a._id).localeCompare(String(b._id)));
    if (pending.length > 1) await this.agenda.cancel({ ids: pending.slice(1).map((j) => j._id) });
  }

  async every(name: string, intervalMs: number, data: JobData = {}): Promise<void> {
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) throw new Error('every() needs a positive interval in ms');
    const stored: StoredJobData = { uniqueKey: null, payload: data };
    await this.agenda.every(intervalMs, name, stored as never);
  }

  async cancel(name: string, uniqueKey?: string): Promise<number> {
    await this.agenda.ready;
    const { jobs } = await this.agenda.queryJobs(uniqueKey === undefined ? { name } : { name, data: { uniqueKey } });
    // Pending: due later and not taken; a repeating job is cancelled even while it runs (else it would re-arm).
    const ids = jobs.filter((j) => (j.nextRunAt && !j.lockedAt) || j.repeatInterval || j.repeatAt).map((j) => j._id);
    if (ids.length === 0) return 0;
    return this.agenda.cancel({ ids });
  }

  async start(): Promise<void> {
    if (this.started) return;
    if (this.stopping) await this.stopping;
    if (!this.starting) {
      this.starting = (async () => {
        if (this.backendClosed && this.ownedBackend) {
          await this.ownedBackend.connect();
          this.backendClosed = false;
        }
        await this.agenda.start();
        this.captureLivenessTimers();
        this.started = true;
      })().finally(() => (this.starting = undefined));
    }
    await this.starting;
  }

  async stop(): Promise<void> {
    if (this.starting) await this.starting;
    if (!this.started) return;
    if (!this.stopping) {
      this.stopping = (async () => {
        // Stop polling and release the jobs locked but not started; running ones keep going...
        await this.agenda.stop(false);
        // ...and are awaited here, so their final state is saved before anything closes.
        while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
        await new Promise<void>((resolve) => setImmediate(resolve));
        for (const t of this.livenessTimers) t.unref();
        this.livenessTimers.clear();
        if (this.ownedBackend) {
          await this.ownedBackend.disconnect();
          this.backendClosed = true;
        }
        this.started = false;
      })().finally(() => (this.stopping = undefined));
    }
    await this.stopping;
  }

  /** See the class comment: records agenda's per-run liveness timers so stop() can unref them. */
  private captureLivenessTimers(): void {
    const processor = (this.agenda as unknown as { jobProcessor?: Partial<JobProcessorInternals> }).jobProcessor;
    if (!processor || typeof processor.runOrRetry !== 'function' || typeof processor.processEvery !== 'number') return;
    const original = processor.runOrRetry;
    const processEvery = processor.processEvery;
    const timers = this.livenessTimers;
    const definitions = this.agenda.definitions;
    processor.runOrRetry = function (this: unknown, job: { attrs: JobParameters }) {
      const definition = definitions[job?.attrs?.name];
      if (!definition) return original.call(this, job);
      const livenessMs = Math.max(processEvery / 2, definition.lockLifetime / 2);
      const realSetTimeout = globalThis.setTimeout;
      globalThis.setTimeout = ((fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
        if (ms !== livenessMs) return realSetTimeout(fn, ms, ...args);
        const timer: Timer = realSetTimeout(() => {
          timers.delete(timer);
          fn(...args);
        }, ms);
        timers.add(timer);
        return timer;
      }) as typeof setTimeout;
      try {
        return original.call(this, job);
      } finally {
        globalThis.setTimeout = realSetTimeout;
      }
    };
  }
}
