/**
 * Several Callplane "processes" inside one test process, each a whole container (composition root, lifecycle,
 * HTTP server unless the role is `worker`) with its own role, all sharing one store: a MongoDB database (the
 * in-process double, or a real server) or one SQLite file. What the roles do and how they share work is then
 * observable through the API and the store. The spawned-process version is multi-process.e2e.test.ts.
 */
import 'reflect-metadata';
import type express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import type { Container } from 'inversify';
import type { Db, MongoClient } from 'mongodb';
import { PinoLogger } from '../../adapters/logging/pino-logger.js';
import { mongoStorage } from '../../adapters/storage/mongo/mongo-database.js';
import { createHttpServer } from '../../http/app.js';
import { buildContainer, ExpressAppToken } from '../../plugins/composition-root.js';
import type { Lifecycle } from '../../plugins/lifecycle.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import { MongoStorageToken } from '../../plugins/modules/storage.module.js';
import { loadSettings, type ProcessRole } from '../../plugins/settings.js';
import { LifecycleToken } from '../../plugins/tokens.js';

export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdefghijklmnop';

/** Fast engine timings for tests (ms). */
export const FAST_ENGINE_ENV: Record<string, string> = {
  CALLPLANE_CAMPAIGN_LEASE_MS: '2000', CALLPLANE_CAMPAIGN_RECONCILE_MS: '2000', CALLPLANE_CAMPAIGN_SWEEP_MS: '500',
  CALLPLANE_JOBS_PROCESS_EVERY_MS: '50', CALLPLANE_JOBS_LOCK_LIFETIME_MS: '1000',
};

export type SharedStore = { kind: 'mongodb'; client: MongoClient; db: Db } | { kind: 'sqlite' };

export interface InProcessService {
  role: ProcessRole;
  container: Container;
  /** Null for a worker (no HTTP). */
  url: string | null;
  logs: string[];
  stop(): Promise<void>;
}

/**
 * Starts one service of `role` on `store` with `dataDir` (uploads, and the SQLite file for the sqlite store).
 * The MongoDB store is the caller's client/db (never closed here).
 */
export async function startInProcessService(
  role: ProcessRole, store: SharedStore, dataDir: string, options: { env?: Record<string, string>; providers?: ProviderRegistry } = {},
): Promise<InProcessService> {
  const settings = loadSettings({
    CALLPLANE_SIGNUP: 'open', CALLPLANE_DATA_DIR: dataDir, LOG_LEVEL: 'warn', CALLPLANE_ROLE: role, ...FAST_ENGINE_ENV,
    ...(store.kind === 'mongodb' ? { CALLPLANE_STORAGE: 'mongodb', MONGODB_URI: 'mongodb://127.0.0.1:1/unused_by_tests' } : {}),
    ...options.env,
  });
  const logs: string[] = [];
  const logger = PinoLogger.create({
    level: settings.logLevel,
    destination: new Writable({ write: (chunk, _e, cb) => { logs.push(...String(chunk).split('\n').filter(Boolean)); cb(); } }),
  });
  const container = buildContainer({ settings, secretKey: TEST_SECRET_KEY, logger, providers: options.providers });
  if (store.kind === 'mongodb') {
    const storage = mongoStorage(store.client, store.db);
    container.rebind(MongoStorageToken).toConstantValue({ ...storage, close: async () => undefined });
  }
  let server: Server | null = null;
  let url: string | null = null;
  if (role !== 'worker') {
    server = createHttpServer(container.get<express.Express>(ExpressAppToken));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  const lifecycle = container.get<Lifecycle>(LifecycleToken);
  await lifecycle.start();
  let stopped: Promise<void> | null = null;
  return {
    role, container, url, logs,
    stop: () => (stopped ??= (async () => {
      if (server) {
        server.closeAllConnections();
        await new Promise<void>((r) => server!.close(() => r()));
      }
      await lifecycle.stop();
    })()),
  };
}

export { apiClient } from './campaign-support.js';

/** Intervals [start, end] (ms): the largest number overlapping at one instant (an end before a start at the same ms). */
export function maxOverlap(intervals: ReadonlyArray<readonly [number, number]>): number {
  const events: Array<[number, number]> = [];
  for (const [s, e] of intervals) {
    events.push([s, 1], [e, -1]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let max = 0;
  for (const [, d] of events) {
    current += d;
    max = Math.max(max, current);
  }
  return max;
}
