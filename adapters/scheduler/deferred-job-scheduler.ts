import type { JobData, JobDefinitionOptions, JobHandler, JobScheduler } from '../../core/ports/job-scheduler.port.js';

/**
 * A JobScheduler whose real scheduler is built on first need by an asynchronous `load` (e.g. one whose backend
 * is an ES module imported only when that storage is configured: `@agendajs/mongo-backend`, which brings the
 * MongoDB driver). Definitions made before then are kept and handed over, in order, when it is built; every other
 * operation waits for it. `load` runs at most once while it succeeds; a failed load rejects the operation that
 * started it and the next operation tries again. `stop` before anything was loaded does nothing and loads nothing.
 */
export class DeferredJobScheduler implements JobScheduler {
  private readonly definitions: Array<[string, JobHandler, JobDefinitionOptions | undefined]> = [];
  private readonly names = new Set<string>();
  private loaded: JobScheduler | undefined;
  private loading: Promise<JobScheduler> | undefined;

  constructor(private readonly load: () => Promise<JobScheduler>) {}

  /** The real scheduler once built; undefined before (nothing loaded yet). */
  get current(): JobScheduler | undefined {
    return this.loaded;
  }

  define(name: string, handler: JobHandler, options?: JobDefinitionOptions): void {
    if (this.loaded) {
      this.loaded.define(name, handler, options);
      return;
    }
    if (this.names.has(name)) throw new Error(`Job "${name}" is already defined`);
    this.names.add(name);
    this.definitions.push([name, handler, options]);
  }

  async scheduleUnique(name: string, uniqueKey: string, at: Date, data: JobData): Promise<void> {
    return (await this.scheduler()).scheduleUnique(name, uniqueKey, at, data);
  }

  async every(name: string, intervalMs: number, data?: JobData): Promise<void> {
    return (await this.scheduler()).every(name, intervalMs, data);
  }

  async cancel(name: string, uniqueKey?: string): Promise<number> {
    return (await this.scheduler()).cancel(name, uniqueKey);
  }

  async start(): Promise<void> {
    return (await this.scheduler()).start();
  }

  async stop(): Promise<void> {
    const scheduler = this.loaded ?? (this.loading ? await this.loading.catch(() => undefined) : undefined);
    await scheduler?.stop();
  }

  private scheduler(): Promise<JobScheduler> {
    if (this.loaded) return Promise.resolve(this.loaded);
    this.loading ??= this.load().then(
      (scheduler) => {
        for (const [name, handler, options] of this.definitions) scheduler.define(name, handler, options);
        this.definitions.length = 0;
        this.loaded = scheduler;
        this.loading = undefined;
        return scheduler;
      },
      (err: unknown) => {
        this.loading = undefined;
        throw err;
      },
    );
    return this.loading;
  }
}
