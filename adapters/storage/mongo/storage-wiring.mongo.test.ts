/**
 * The whole service with CALLPLANE_STORAGE=mongodb: the composition root binds every repository port to its
 * Mongo adapter and the health probe to a Mongo ping. The storage is rebound to a Mongo target (the double,
 * or a real server with MONGODB_URI) before anything is resolved; the rest runs unchanged over HTTP.
 */
import 'reflect-metadata';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import type express from 'express';
import type { Container } from 'inversify';
import { PinoLogger } from '../../logging/pino-logger.js';
import { IdentityRepository } from '../../../core/ports/identity.repository.port.js';
import { createHttpServer } from '../../../http/app.js';
import { buildContainer, ExpressAppToken } from '../../../plugins/composition-root.js';
import type { Lifecycle } from '../../../plugins/lifecycle.js';
import { MongoStorageToken } from '../../../plugins/modules/storage.module.js';
import { loadSettings } from '../../../plugins/settings.js';
import { LifecycleToken } from '../../../plugins/tokens.js';
import { describeEachMongoTarget, type MongoConnection } from '../../../test/fakes/mongo/mongo-target.js';
import { MongoBackend } from '@agendajs/mongo-backend';
import type { Db } from 'mongodb';
import { JobScheduler } from '../../../core/ports/job-scheduler.port.js';
import { AgendaJobScheduler } from '../../scheduler/agenda/agenda-job-scheduler.js';
import { createMongoDouble } from '../../../test/fakes/mongo/mongo-double.js';
import { createMongoStorage, mongoStorage } from './mongo-database.js';
import { MongoIdentityRepository } from './identity.mongo.js';
import { contractLabel } from './mongo-test-support.js';

function mongoSettings() {
  return loadSettings({
    CALLPLANE_SIGNUP: 'open', CALLPLANE_DATA_DIR: '/tmp/callplane-test-unused', LOG_LEVEL: 'error',
    CALLPLANE_STORAGE: 'mongodb', MONGODB_URI: 'mongodb://127.0.0.1:1/never_contacted',
  });
}
/**
 * The scheduler of the mongodb mode is wired by the scheduler module (not this adapter); until it binds one for
 * MongoDB, the test binds Agenda on @agendajs/mongo-backend itself so the feature modules that need a JobScheduler
 * resolve. Never started here (no jobs run); stopped with the container's lifecycle.
 */
function ensureScheduler(container: Container, db: Db): void {
  if (container.isBound(JobScheduler)) return;
  const scheduler = new AgendaJobScheduler({ backend: new MongoBackend({ mongo: db, collection: 'agendaJobs' }), agenda: { processEvery: 50, defaultLockLifetime: 1000 } }, { defaultLockLifetimeMs: 1000 });
  container.bind(JobScheduler).toConstantValue(scheduler);
  container.get<Lifecycle>(LifecycleToken).onStop('test-job-scheduler', () => scheduler.stop());
}
const quietLogger = () => PinoLogger.create({ level: 'error', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

describeEachMongoTarget('service wired to MongoDB storage', (target) => {
  describe(contractLabel(target), () => {
    let conn: MongoConnection;
    let container: Container;
    let server: Server;
    let url: string;

    beforeEach(async () => {
      conn = await target.connect();
      container = buildContainer({ settings: mongoSettings(), secretKey: 'test-secret-key-0123456789abcdefghijklmnop', logger: quietLogger() });
      const storage = mongoStorage(conn.client, conn.db);
      container.rebind(MongoStorageToken).toConstantValue({ ...storage, close: async () => undefined }); // conn.close() owns the client
      container.get<Lifecycle>(LifecycleToken).onStart('mongodb', () => storage.prepare());
      ensureScheduler(container, conn.db);
      server = createHttpServer(container.get<express.Express>(ExpressAppToken));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await container.get<Lifecycle>(LifecycleToken).start();
    });
    afterEach(async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await container.get<Lifecycle>(LifecycleToken).stop();
      await conn.close();
    });

    const post = async (path: string, body: unknown, token?: string) => {
      const res = await fetch(`${url}/api/v1${path}`, {
        method: 'POST', body: JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
      return { status: res.status, body: await res.json() as any };
    };

    it('binds the identity port to the Mongo adapter and answers health with a Mongo ping', async () => {
      expect(container.get(IdentityRepository)).toBeInstanceOf(MongoIdentityRepository);
      const health = await fetch(`${url}/api/v1/health`);
      expect(health.status).toBe(200);
    });

    it('signs up, refuses a duplicate email and authenticates, with records stored in MongoDB', async () => {
      const signup = await post('/auth/signup', { email: 'm@example.com', password: 'correct horse battery', organization_name: 'Mongo Org' });
      expect(signup.status).toBe(200);
      const dup = await post('/auth/signup', { email: 'm@example.com', password: 'correct horse battery', organization_name: 'Again' });
      expect(dup.status).toBe(409);
      const users = await conn.db.collection('users').find({}).toArray();
      expect(users).toEqual([expect.objectContaining({ _id: signup.body.user.id, email: 'm@example.com' })]);
      expect(await conn.db.collection('organizations').countDocuments()).toBe(1);
      const me = await fetch(`${url}/api/v1/auth/me`, { headers: { authorization: `Bearer ${signup.body.token}` } });
      expect(me.status).toBe(200);
    });
  });
});

describe('MongoDB storage binding without a reachable server', () => {
  it('builds the client from MONGODB_URI when resolved and closes it on stop', async () => {
    const container = buildContainer({ settings: mongoSettings(), secretKey: 'test-secret-key-0123456789abcdefghijklmnop', logger: quietLogger() });
    expect(container.get(IdentityRepository)).toBeInstanceOf(MongoIdentityRepository);
    const storage = container.get<ReturnType<typeof createMongoStorage>>(MongoStorageToken);
    expect(storage.db.databaseName).toBe('never_contacted');
    expect(await container.get<Lifecycle>(LifecycleToken).stop()).toEqual([]);
    await expect(storage.prepare()).rejects.toThrow(); // closed before it could connect
  });

  it('answers the health probe with 503 quickly instead of hanging, and stops cleanly', async () => {
    const container = buildContainer({ settings: mongoSettings(), secretKey: 'test-secret-key-0123456789abcdefghijklmnop', logger: quietLogger() });
    const unreachable = createMongoStorage('mongodb://127.0.0.1:1/x', { serverSelectionTimeoutMS: 300 });
    container.rebind(MongoStorageToken).toConstantValue(unreachable);
    ensureScheduler(container, createMongoDouble().db); // the scheduler is not what this test is about
    const server = createHttpServer(container.get<express.Express>(ExpressAppToken));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const health = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/health`);
    expect(health.status).toBe(503);
    await expect(unreachable.prepare()).rejects.toThrow();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    await container.get<Lifecycle>(LifecycleToken).stop();
    await unreachable.close();
  });
});
