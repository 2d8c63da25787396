import type { Container } from 'inversify';
import { JobScheduler } from '../../core/ports/job-scheduler.port.js';
import { AgendaJobScheduler } from '../../adapters/scheduler/agenda/agenda-job-scheduler.js';
import { SqliteBackend } from '../../adapters/scheduler/agenda/sqlite-backend/sqlite-backend.js';
import type { SqliteDatabase } from '../../adapters/storage/sqlite/database.js';
import type { Lifecycle } from '../lifecycle.js';
import type { Settings } from '../settings.js';
import { LifecycleToken, SqliteDatabaseToken } from '../tokens.js';

/**
 * The JobScheduler: Agenda on our SQLite backend sharing the service's database (embedded storage). Every role can
 * schedule jobs; only `worker` and `all` processes run them (started after the feature modules defined theirs;
 * call this module after them). Short lock lifetimes (CALLPLANE_JOBS_LOCK_LIFETIME_MS) let a crashed worker's jobs
 * be taken over quickly.
 */
export function schedulerModule(c: Container, settings: Settings): void {
  if (settings.storage !== 'sqlite') return;
  const timing = settings.campaignEngine;
  c.bind<JobScheduler>(JobScheduler).toResolvedValue(
    (db: SqliteDatabase, lifecycle: Lifecycle) => {
      const scheduler = new AgendaJobScheduler(
        { backend: new SqliteBackend({ database: db }), agenda: { name: `callplane-${process.pid}`, processEvery: timing.jobProcessEveryMs, defaultLockLifetime: timing.jobLockLifetimeMs } },
        { defaultLockLifetimeMs: timing.jobLockLifetimeMs },
      );
      lifecycle.onStop('job-scheduler', () => scheduler.stop());
      return scheduler;
    },
    [SqliteDatabaseToken, LifecycleToken],
  ).inSingletonScope();
  if (settings.role === 'worker' || settings.role === 'all') {
    c.get<Lifecycle>(LifecycleToken).onStart('job-scheduler', () => c.get<JobScheduler>(JobScheduler).start());
  }
}
