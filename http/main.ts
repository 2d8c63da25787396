import 'reflect-metadata';
import type express from 'express';
import type { Server } from 'node:http';
import { PinoLogger } from '../adapters/logging/pino-logger.js';
import { attachHttpServer, buildContainer, ExpressAppToken } from '../plugins/composition-root.js';
import { ProviderRegistry } from '../plugins/provider-registry.js';
import type { Lifecycle } from '../plugins/lifecycle.js';
import { ensureSecretKey, loadSettings, SettingsError, type Settings } from '../plugins/settings.js';
import { LifecycleToken } from '../plugins/tokens.js';
import { isMainModule } from './is-main.js';
import { createHttpServer } from './app.js';

export interface RunningService {
  server: Server | null;
  settings: Settings;
  stop(): Promise<void>;
}

/**
 * Starts the service: settings (a bad value stops the process with one line naming the variable), the
 * container, background parts, and the HTTP server on HOST:PORT. SIGTERM/SIGINT stop accepting
 * connections, let in-flight requests finish, stop jobs and close the database, then exit.
 */
export async function startService(env: NodeJS.ProcessEnv = process.env): Promise<RunningService> {
  const settings = loadSettings(env);
  const secretKey = ensureSecretKey(settings);
  // third-party provider plugins load first: a bad one stops start-up, and their sensitive fields are redacted from logs
  const providers = await ProviderRegistry.load(settings);
  const logger = PinoLogger.create({ level: settings.logLevel, extraSensitive: providers.sensitiveFieldNames() });
  const container = buildContainer({ settings, secretKey, logger, providers });
  const lifecycle = container.get<Lifecycle>(LifecycleToken);
  let server: Server | null = null;
  let detachServer: () => Promise<void> = async () => undefined;
  if (settings.role !== 'worker') {
    const app = container.get<express.Express>(ExpressAppToken);
    server = createHttpServer(app);
    detachServer = attachHttpServer(container, server);
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(settings.port, settings.host, () => resolve());
    });
  }
  await lifecycle.start();
  logger.info({ host: settings.host, port: settings.port, role: settings.role, storage: settings.storage, data_dir: settings.dataDir }, 'callplane started');

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      if (server) {
        await detachServer();
        const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
        server.closeIdleConnections();
        const force = setTimeout(() => server!.closeAllConnections(), 10_000);
        force.unref();
        await closed;
        clearTimeout(force);
      }
      const failed = await lifecycle.stop();
      logger.info({ failed }, 'callplane stopped');
    })());
  return { server, settings, stop };
}

/** SIGTERM/SIGINT stop the service gracefully, then exit (0, or 1 when stopping failed). */
export function exitOnSignals(service: RunningService): void {
  const onSignal = (signal: string) => {
    process.stderr.write(`callplane: ${signal} received, shutting down\n`);
    service.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
}

if (isMainModule(import.meta.url)) {
  startService().then(
    exitOnSignals,
    (err: unknown) => {
      if (err instanceof SettingsError) {
        process.stderr.write(`callplane: ${err.message}\n`);
      } else {
        const e = err as NodeJS.ErrnoException;
        process.stderr.write(`callplane: failed to start: ${e?.code ? `${e.code} ` : ''}${e?.message ?? String(err)}\n`);
      }
      process.exit(1);
    },
  );
}
