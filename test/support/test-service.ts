import 'reflect-metadata';
import type express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import type { Container } from 'inversify';
import { PinoLogger } from '../../adapters/logging/pino-logger.js';
import { openMigratedSqlite, type SqliteDatabase } from '../../adapters/storage/sqlite/database.js';
import type { Clock } from '../../core/ports/clock.port.js';
import { createHttpServer } from '../../http/app.js';
import { attachHttpServer, buildContainer, ExpressAppToken } from '../../plugins/composition-root.js';
import type { Lifecycle } from '../../plugins/lifecycle.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import { loadSettings, type Settings } from '../../plugins/settings.js';
import { LifecycleToken } from '../../plugins/tokens.js';

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface Credentials {
  token?: string;
  apiKey?: string;
}

/** A running service on an ephemeral port with an in-memory database, and a small JSON client for it. */
export interface TestService {
  url: string;
  container: Container;
  db: SqliteDatabase;
  settings: Settings;
  /** Every log line written so far (JSON text). */
  logs: string[];
  request<T = any>(method: string, path: string, opts?: { body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string>; auth?: Credentials }): Promise<ApiResponse<T>>;
  get<T = any>(path: string, auth?: Credentials): Promise<ApiResponse<T>>;
  post<T = any>(path: string, body?: unknown, auth?: Credentials): Promise<ApiResponse<T>>;
  put<T = any>(path: string, body?: unknown, auth?: Credentials): Promise<ApiResponse<T>>;
  patch<T = any>(path: string, body?: unknown, auth?: Credentials): Promise<ApiResponse<T>>;
  delete<T = any>(path: string, auth?: Credentials): Promise<ApiResponse<T>>;
  /** Signs up a user with a new organization (signup policy `open`) and returns its token. */
  signup(email?: string, password?: string, organizationName?: string): Promise<{ token: string; userId: number; organizationId: number }>;
  close(): Promise<void>;
}

let counter = 0;

export async function startTestService(options: { env?: Record<string, string>; clock?: Clock; db?: SqliteDatabase; providers?: ProviderRegistry } = {}): Promise<TestService> {
  const settings = loadSettings({
    CALLPLANE_SIGNUP: 'open',
    CALLPLANE_DATA_DIR: '/tmp/callplane-test-unused',
    LOG_LEVEL: 'info',
    ...options.env,
  });
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const providers = options.providers ?? ProviderRegistry.builtIn({ allowPrivateNetwork: settings.allowPrivateNetwork });
  const logger = PinoLogger.create({ level: settings.logLevel, destination, extraSensitive: providers.sensitiveFieldNames() });
  const db = options.db ?? openMigratedSqlite(':memory:');
  const container = buildContainer({ settings, secretKey: 'test-secret-key-0123456789abcdefghijklmnop', logger, sqlite: db, clock: options.clock, providers });
  const app = container.get<express.Express>(ExpressAppToken);
  const server: Server = createHttpServer(app);
  const detachServer = attachHttpServer(container, server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await container.get<Lifecycle>(LifecycleToken).start();

  const request: TestService['request'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.auth?.token) headers.authorization = `Bearer ${opts.auth.token}`;
    if (opts.auth?.apiKey) headers['x-api-key'] = opts.auth.apiKey;
    let body: string | Buffer | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(url + (path.startsWith('/api') || path.startsWith('/docs') ? path : `/api/v1${path}`), { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed as any, text, headers: res.headers };
  };

  const service: TestService = {
    url, container, db, settings, logs, request,
    get: (p, auth) => request('GET', p, { auth }),
    post: (p, body, auth) => request('POST', p, { body, auth }),
    put: (p, body, auth) => request('PUT', p, { body, auth }),
    patch: (p, body, auth) => request('PATCH', p, { body, auth }),
    delete: (p, auth) => request('DELETE', p, { auth }),
    async signup(email, password = 'correct horse battery', organizationName) {
      const r = await request('POST', '/auth/signup', {
        body: { email: email ?? `user${++counter}-${Date.now()}@example.com`, password, organization_name: organizationName ?? `Org ${counter}` },
      });
      if (r.status !== 200) throw new Error(`signup failed: ${r.status} ${r.text}`);
      return { token: r.body.token, userId: r.body.user.id, organizationId: r.body.user.organization_id };
    },
    async close() {
      await detachServer();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await container.get<Lifecycle>(LifecycleToken).stop();
      if (!options.db) db.close();
    },
  };
  return service;
}
