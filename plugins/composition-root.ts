import 'reflect-metadata';
import { Container } from 'inversify';
import type express from 'express';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { Authenticate } from '../core/identity/authenticate.use-case.js';
import { Logger } from '../core/ports/logger.port.js';
import { createApp } from '../http/app.js';
import { healthRoutes } from '../http/routes/health.routes.js';
import type { RouteDefinition } from '../http/routing/route.js';
import { foundationModule, type FoundationOptions } from './modules/foundation.module.js';
import { identityModule } from './modules/identity.module.js';
import { storageModule } from './modules/storage.module.js';
import { telephonyModule } from './modules/telephony.module.js';
import { transfersModule } from './modules/transfers.module.js';
import { aiServicesModule } from './modules/ai-services.module.js';
import { chatsModule } from './modules/chats.module.js';
import { campaignsModule } from './modules/campaigns.module.js';
import { schedulerModule } from './modules/scheduler.module.js';
import { usageModule } from './modules/usage.module.js';
import { mediaModule } from './modules/media.module.js';
import { voiceModule } from './modules/voice.module.js';
import { webhooksModule } from './modules/webhooks.module.js';
import { ProviderRegistry } from './provider-registry.js';
import { workflowsModule } from './modules/workflows.module.js';
import type { Settings } from './settings.js';
import { HttpRoutesToken, HttpServerAttachmentToken, SettingsToken, StorageProbeToken } from './tokens.js';
import { packageRoot, packageVersion } from './version.js';

export const ExpressAppToken = Symbol.for('callplane.ExpressApp');

/**
 * The composition root: the only place that knows every adapter and wires core use cases to them. Core
 * classes are constructed here with `toResolvedValue`, never decorated. Entry points (http/main.ts, the CLI,
 * tests) call `buildContainer` and `container.get` what they need.
 */
export function buildContainer(options: FoundationOptions & { providers?: ProviderRegistry }): Container {
  const c = new Container();
  foundationModule(c, options);
  storageModule(c, options.settings);
  identityModule(c);
  workflowsModule(c);
  const providers = options.providers ?? ProviderRegistry.builtIn({ allowPrivateNetwork: options.settings.allowPrivateNetwork });
  telephonyModule(c, providers);
  transfersModule(c);
  aiServicesModule(c, providers.ai);
  chatsModule(c);
  campaignsModule(c, options.settings);
  webhooksModule(c, options.settings);
  schedulerModule(c, options.settings);
  usageModule(c);
  mediaModule(c, options.settings);
  voiceModule(c, options.settings);

  const version = packageVersion();
  c.bind(HttpRoutesToken).toResolvedValue(
    (probe: () => Promise<boolean>) => healthRoutes({ version, storageReachable: probe }),
    [StorageProbeToken],
  );
  c.bind<express.Express>(ExpressAppToken).toResolvedValue(
    (authenticate: Authenticate, logger: Logger, settings: Settings) =>
      createApp({
        routes: c.getAll<RouteDefinition[]>(HttpRoutesToken).flat(),
        authenticate,
        logger,
        version,
        publicUrl: settings.publicUrl,
        maxJsonBodyBytes: settings.maxJsonBodyBytes,
        consoleDir: join(packageRoot(), 'dist', 'console'),
      }),
    [Authenticate, Logger, SettingsToken],
  ).inSingletonScope();
  return c;
}

/**
 * Attaches the modules' server hooks (the media WebSocket's `upgrade` handler) to the HTTP server. Returns
 * what to call before closing the server: it ends the hooks' long-lived connections, which would otherwise
 * keep `server.close()` waiting. Idempotent close.
 */
export function attachHttpServer(c: Container, server: Server): () => Promise<void> {
  const hooks = c.isBound(HttpServerAttachmentToken) ? c.getAll<(s: Server) => () => Promise<void>>(HttpServerAttachmentToken) : [];
  const closers = hooks.map((attach) => attach(server));
  return async () => {
    await Promise.all(closers.map((close) => close()));
  };
}
