import 'reflect-metadata';
import type express from 'express';
import type { Server } from 'node:http';
import { PinoLogger } from '../adapters/logging/pino-logger.js';
import type { Logger } from '../core/ports/logger.port.js';
import { attachHttpServer, buildContainer, ExpressAppToken } from '../plugins/composition-root.js';
import { providerFaultOf } from '../plugins/provider-faults.js';
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
  guardLogger = logger;
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

/** Where the process guard logs once the service's logger exists (stderr before). */
let guardLogger: Logger | undefined;

export type StrayErrorKind = 'uncaughtException' | 'unhandledRejection';

/**
 * What the process guard does with an error that escaped every handler. A provider connection's fault
 * (`providerFaultOf`: tagged, claimed by its provider, e.g. an error thrown from inside ari-client, or a
 * `ProviderApiError`) is logged and survived: that configuration shows unhealthy through its own health and its
 * connection retries, while every other configuration and the API keep working. Anything else is an unknown,
 * possibly corrupting error: logged with its stack, then `exit(1)`. Returns whether the process survives.
 */
export function handleStrayError(err: unknown, kind: StrayErrorKind, exit: (code: number) => void = (code) => process.exit(code)): boolean {
  const fault = providerFaultOf(err);
  if (fault) {
    const fields = { kind, provider: fault.provider, telephony_configuration_id: fault.configurationId, err: fault.message };
    if (guardLogger) guardLogger.error(fields, 'a provider connection failed outside any handler; the service keeps running');
    else process.stderr.write(`callplane: ${kind} from provider ${fault.provider}: ${fault.message} (the service keeps running)\n`);
    return true;
  }
  const e = err as Error | undefined;
  guardLogger?.error({ kind, err: e?.message ?? String(err) }, 'unexpected error outside any handler; exiting');
  process.stderr.write(`callplane: fatal ${kind}: ${e?.stack ?? String(err)}\n`);
  exit(1);
  return false;
}

/** Installs the process-level guard (`handleStrayError` for uncaught exceptions and unhandled rejections). */
export function guardProcess(): void {
  process.on('uncaughtException', (err) => handleStrayError(err, 'uncaughtException'));
  process.on('unhandledRejection', (reason) => handleStrayError(reason, 'unhandledRejection'));
}

/**
 * SIGTERM/SIGINT stop the service gracefully, then exit (0, or 1 when starting or stopping failed). Installed
 * while the service is still starting (pass the start's promise): the API answers before the start hooks
 * (scheduler, provider connections, the database's checkpoint worker) are done, and a signal then waits for the
 * start and stops it, where the default action would have killed requests in flight.
 */
export function exitOnSignals(service: RunningService | Promise<RunningService>): void {
  const onSignal = (signal: string) => {
    process.stderr.write(`callplane: ${signal} received, shutting down\n`);
    Promise.resolve(service).then((s) => s.stop()).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
}

if (isMainModule(import.meta.url)) {
  guardProcess();
  const started = startService();
  exitOnSignals(started);
  started.catch(
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
