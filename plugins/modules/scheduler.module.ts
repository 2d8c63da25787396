import type { Container } from 'inversify';
import type { AgendaBackend } from 'agenda';
import { JobScheduler } from '../../core/ports/job-scheduler.port.js';
import { AgendaJobScheduler } from '../../adapters/scheduler/agenda/agenda-job-scheduler.js';
import { DeferredJobScheduler } from '../../adapters/scheduler/deferred-job-scheduler.js';
import { SqliteBackend } from '../../adapters/scheduler/agenda/sqlite-backend/sqlite-backend.js';
import type { SqliteDatabase } from '../../adapters/storage/sqlite/database.js';
import type { MongoStorage } from '../../adapters/storage/mongo/mongo-database.js';
import type { Lifecycle } from '../lifecycle.js';
import type { Settings } from '../settings.js';
import { LifecycleToken, SqliteDatabaseToken } from '../tokens.js';
import { MongoStorageToken } from './storage.module.js';

/** The MongoDB collection of the scheduler's jobs (mongodb storage). */
export const AGENDA_JOBS_COLLECTION = 'agendaJobs';

/**
 * The JobScheduler: Agenda 6 on the backend of the configured storage, sharing the service's database: our SQLite
 * backend on the embedded database, `@agendajs/mongo-backend` on the storage's MongoDB `Db` (collection
 * `agendaJobs`; the backend creates its index when it connects, and never closes the storage's client). Every role
 * can schedule jobs (the api role enqueues `campaign.dispatch`); only `worker` and `all` processes run them
 * (started after the feature modules defined theirs; call this module after them). Short lock lifetimes
 * (CALLPLANE_JOBS_LOCK_LIFETIME_MS) let a crashed worker's jobs be taken over quickly.
 */
export function schedulerModule(c: Container, settings: Settings): void {
  const timing = settings.campaignEngine;
  const agendaOptions = { name: `callplane-${process.pid}`, processEvery: timing.jobProcessEveryMs, defaultLockLifetime: timing.jobLockLifetimeMs };
  const schedulerOptions = { defaultLockLifetimeMs: timing.jobLockLifetimeMs };
  let prepareStorage: () => Promise<void> = async () => undefined;
  if (settings.storage === 'sqlite') {
    c.bind<JobScheduler>(JobScheduler).toResolvedValue(
      (db: SqliteDatabase, lifecycle: Lifecycle) => {
        const scheduler = new AgendaJobScheduler({ backend: new SqliteBackend({ database: db }), agenda: agendaOptions }, schedulerOptions);
        lifecycle.onStop('job-scheduler', () => scheduler.stop());
        return scheduler;
      },
      [SqliteDatabaseToken, LifecycleToken],
    ).inSingletonScope();
  } else if (settings.storage === 'mongodb') {
    c.bind<JobScheduler>(JobScheduler).toResolvedValue(
      (storage: MongoStorage, lifecycle: Lifecycle) => {
        // @agendajs/mongo-backend is an ES module that brings the MongoDB driver: imported (asynchronously) on the
        // scheduler's first operation, so nothing of it loads unless this storage is configured
        let backend: Awaited<ReturnType<typeof retryingMongoBackend>> | undefined;
        let stopped = false;
        const scheduler = new DeferredJobScheduler(async () => {
          backend = await retryingMongoBackend(storage);
          if (stopped) backend.giveUp();
          return new AgendaJobScheduler({ backend, agenda: agendaOptions }, schedulerOptions);
        });
        // registered after the storage's stop hook (the storage is resolved first), so it stops before the client closes
        lifecycle.onStop('job-scheduler', async () => {
          stopped = true;
          backend?.giveUp();
          await scheduler.stop();
        });
        return scheduler;
      },
      [MongoStorageToken, LifecycleToken],
    ).inSingletonScope();
    // jobs run only once the schema exists (prepare is memoized: the storage's own start hook shares it)
    prepareStorage = () => c.get<MongoStorage>(MongoStorageToken).prepare();
  } else {
    return;
  }
  if (settings.role === 'worker' || settings.role === 'all') {
    c.get<Lifecycle>(LifecycleToken).onStart('job-scheduler', async () => {
      await prepareStorage();
      await c.get<JobScheduler>(JobScheduler).start();
    });
  }
}

/**
 * `@agendajs/mongo-backend` (imported here, on the first call) on the storage's `Db`, whose `connect` (agenda calls
 * it once, from its constructor, without handling a failure: a rejection would be unhandled and agenda would never
 * become ready) retries with backoff until it succeeds or `giveUp` is called (the process stops). The backend never
 * closes the shared client.
 */
export async function retryingMongoBackend(storage: Pick<MongoStorage, 'db'>, firstDelayMs = 250): Promise<AgendaBackend & { giveUp(): void }> {
  const { MongoBackend } = await import('@agendajs/mongo-backend');
  const inner = new MongoBackend({ mongo: storage.db, collection: AGENDA_JOBS_COLLECTION });
  let givenUp = false;
  return {
    name: inner.name,
    get repository() { return inner.repository; },
    get logger() { return inner.logger; },
    notificationChannel: undefined,
    ownsConnection: false,
    async connect() {
      for (let delay = firstDelayMs; ; delay = Math.min(delay * 2, 10_000)) {
        try {
          await inner.connect();
          return;
        } catch {
          if (givenUp) return;
          await new Promise<void>((resolve) => setTimeout(resolve, delay).unref());
          if (givenUp) return;
        }
      }
    },
    disconnect: () => inner.disconnect(),
    giveUp() { givenUp = true; },
  };
}
