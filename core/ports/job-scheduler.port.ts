/**
 * Coarse background work: a dispatch tick per running campaign, the next schedule-slot opening,
 * reconciliation sweeps. Never one job per call (the Agenda adapter drains about 100 jobs/s).
 * Delivery is at least once: every handler must be idempotent.
 */
export const JobScheduler = Symbol.for('callplane.JobScheduler');

export type JobData = Record<string, string | number | boolean | null>;
export type JobHandler = (data: JobData) => Promise<void>;

export interface JobDefinitionOptions {
  /** How many jobs of this name one process runs at once (default 5). */
  concurrency?: number;
  /** How long a started job stays locked before another process may take it over (ms). */
  lockLifetimeMs?: number;
}

export interface JobScheduler {
  /** Registers the handler for `name`. Call before `start`. Throws if `name` is already defined. */
  define(name: string, handler: JobHandler, options?: JobDefinitionOptions): void;
  /**
   * Makes sure one job `name` keyed by `uniqueKey` runs at `at` or earlier. Idempotent: when a pending job
   * with the same (name, uniqueKey) exists, it is kept and its run time becomes the earlier of the two;
   * no second job is created. Throws only when storage fails.
   */
  scheduleUnique(name: string, uniqueKey: string, at: Date, data: JobData): Promise<void>;
  /** Repeats `name` every `intervalMs` (one job per name across processes). Idempotent. */
  every(name: string, intervalMs: number, data?: JobData): Promise<void>;
  /** Removes the pending job(s) `name` (only the one keyed `uniqueKey` when given); returns how many. */
  cancel(name: string, uniqueKey?: string): Promise<number>;
  /** Starts processing due jobs in this process. Idempotent. */
  start(): Promise<void>;
  /** Stops taking new jobs, waits for running ones, releases locks. Idempotent. */
  stop(): Promise<void>;
}
