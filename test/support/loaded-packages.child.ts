/**
 * A child process (run from dist/ by test/e2e/lazy-sdk-loading.test.ts): builds the
 * service the way `npm start` does (http/main.ts's import graph, settings from the environment, provider plugins,
 * the container, the express app, the start hooks) without listening, then runs the steps named in argv and
 * prints one JSON line per step: which of the heavy optional packages are loaded by then.
 *
 * Steps: `start` (the above), `build` (the same without the start hooks), `openapi` and `docs` (a request to /api/v1/openapi.json or /docs/ through an
 * ephemeral server), `ari` (one REST operation against ARI_URL, user/password `callplane`/`pw`), `twilio` (one REST
 * call against TWILIO_URL with TWILIO_ACCOUNT_SID/TWILIO_AUTH_TOKEN). The packages are CommonJS, so "loaded" means present in require.cache; an ES module
 * (`@agendajs/mongo-backend`) is never there, its driver is.
 */
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type express from 'express';
import type { Container } from 'inversify';
import { PinoLogger } from '../../adapters/logging/pino-logger.js';
import { createHttpServer } from '../../http/app.js';
import '../../http/main.js';
import { buildContainer, ExpressAppToken } from '../../plugins/composition-root.js';
import type { Lifecycle } from '../../plugins/lifecycle.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import { ensureSecretKey, loadSettings } from '../../plugins/settings.js';
import { LifecycleToken } from '../../plugins/tokens.js';
import { AriClient } from '../../providers/ari/ari.client.js';
import { TwilioClient } from '../../providers/twilio/twilio.client.js';

/** The optional packages a deployment may never use (docs/deployment.md, "Memory at start-up"). */
export const WATCHED_PACKAGES = ['ari-client', 'swagger-client', 'request', 'mongodb', 'twilio', 'swagger-ui-express', 'swagger-ui-dist'] as const;

function loadedPackages(): string[] {
  const files = Object.keys(createRequire(import.meta.url).cache);
  return WATCHED_PACKAGES.filter((name) => files.some((f) => f.includes(`/node_modules/${name}/`)));
}

async function viaServer(app: express.Express, path: string): Promise<number> {
  const server = createHttpServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    await res.arrayBuffer();
    return res.status;
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

async function main(steps: string[]): Promise<void> {
  let container: Container | undefined;
  const report = (step: string, extra: Record<string, unknown> = {}) =>
    process.stdout.write(`${JSON.stringify({ step, loaded: loadedPackages(), ...extra })}\n`);
  for (const step of steps) {
    if (step === 'build' || step === 'start') {
      const settings = loadSettings(process.env);
      const secretKey = ensureSecretKey(settings);
      const providers = await ProviderRegistry.load(settings);
      const logger = PinoLogger.create({ level: 'error', extraSensitive: providers.sensitiveFieldNames() });
      container = buildContainer({ settings, secretKey, logger, providers });
      container.get<express.Express>(ExpressAppToken);
      if (step === 'start') await container.get<Lifecycle>(LifecycleToken).start();
      report(step);
    } else if (step === 'openapi' || step === 'docs') {
      const status = await viaServer(container!.get<express.Express>(ExpressAppToken), step === 'openapi' ? '/api/v1/openapi.json' : '/docs/');
      report(step, { status });
    } else if (step === 'ari') {
      const client = new AriClient({ url: process.env.ARI_URL!, username: 'callplane', password: 'pw', app: 'callplane', allowPrivateNetwork: true });
      const constructed = loadedPackages();
      const channel = await client.getChannel('no-such-channel');
      await client.close();
      report(step, { constructed, result: channel });
    } else if (step === 'twilio') {
      const client = new TwilioClient({ accountSid: process.env.TWILIO_ACCOUNT_SID!, authToken: process.env.TWILIO_AUTH_TOKEN!, baseUrl: process.env.TWILIO_URL });
      const constructed = loadedPackages();
      const account = await client.fetchAccount();
      report(step, { constructed, result: account.status });
    } else {
      throw new Error(`unknown step ${step}`);
    }
  }
  if (container) await container.get<Lifecycle>(LifecycleToken).stop();
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  },
);
