import type { Container } from 'inversify';
import { Clock } from '../../core/ports/clock.port.js';
import { SecretCipher, TokenService } from '../../core/ports/crypto.port.js';
import { EventPublisher } from '../../core/ports/event-publisher.port.js';
import { JobScheduler } from '../../core/ports/job-scheduler.port.js';
import { Logger } from '../../core/ports/logger.port.js';
import { WebhookRepository } from '../../core/ports/webhook.repository.port.js';
import { WebhookTransport } from '../../core/ports/webhook-transport.port.js';
import { RunViews } from '../../core/runs/runs.use-case.js';
import { WebhookDispatcher } from '../../core/webhooks/webhook-dispatcher.js';
import { WebhookEventPublisher } from '../../core/webhooks/webhook-events.js';
import { WebhookEventRecovery } from '../../core/webhooks/webhook-event-recovery.js';
import { CampaignRepository } from '../../core/ports/campaign.repository.port.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { WebhookEndpoints } from '../../core/webhooks/webhooks.use-case.js';
import { webhookRoutes } from '../../http/routes/webhooks.routes.js';
import type { RouteDefinition } from '../../http/routing/route.js';
import type { Lifecycle } from '../lifecycle.js';
import type { Settings } from '../settings.js';
import { HttpRoutesToken, LifecycleToken } from '../tokens.js';
import { PolicyWebhookTransport } from '../webhook-transport.js';
import { port, provide } from './wire.js';

/** The ports this module reads, typed once (wire.ts). */
const Ports = {
  repo: port<WebhookRepository>(WebhookRepository),
  transport: port<WebhookTransport>(WebhookTransport),
  cipher: port<SecretCipher>(SecretCipher),
  tokens: port<TokenService>(TokenService),
  scheduler: port<JobScheduler>(JobScheduler),
  clock: port<Clock>(Clock),
  log: port<Logger>(Logger),
  publisher: port<EventPublisher>(EventPublisher),
  runs: port<RunRepository>(RunRepository),
  campaigns: port<CampaignRepository>(CampaignRepository),
  routes: port<RouteDefinition[]>(HttpRoutesToken),
};

/** The defaults of docs/webhooks.md when the settings carry none. */
export const WEBHOOK_SENDER_DEFAULTS = { leaseMs: 60_000, sweepIntervalMs: 15_000, maxInFlight: 64, maxInFlightPerEndpoint: 16 };

/**
 * Event webhooks (API.md 14): the transport on the network policy, the sender (one recurring sweep job plus an
 * in-process kick), the EventPublisher core's use cases publish to (bound only here: without this module they
 * publish nothing), the endpoint use cases and routes. Wired by name. Needs a WebhookRepository (storage module)
 * and a JobScheduler; call before the scheduler module so the sweep job is defined before the scheduler starts.
 * Only worker and all processes send; an api process stores deliveries for them.
 */
export function webhooksModule(c: Container, settings: Settings): void {
  if (!c.isBound(WebhookRepository) || !c.isBound(RunViews)) return;
  const sender = { ...WEBHOOK_SENDER_DEFAULTS, ...settings.webhooks };
  const sends = settings.role !== 'api';

  if (!c.isBound(WebhookTransport)) provide(c, Ports.transport, { deps: {}, init: () => new PolicyWebhookTransport({ allowPrivateNetwork: settings.allowPrivateNetwork }) });
  provide(c, WebhookDispatcher, {
    deps: { repo: Ports.repo, transport: Ports.transport, cipher: Ports.cipher, scheduler: Ports.scheduler, clock: Ports.clock, log: Ports.log, lifecycle: port<Lifecycle>(LifecycleToken) },
    init: (d) => {
      const dispatcher = new WebhookDispatcher(d.repo, d.transport, d.cipher, d.scheduler, d.clock, d.log.child({ component: 'webhooks' }), { ...sender, sends });
      dispatcher.defineJobs();
      d.lifecycle.onStop('webhooks', () => dispatcher.stop());
      return dispatcher;
    },
  });
  provide(c, Ports.publisher, {
    deps: { repo: Ports.repo, views: RunViews, clock: Ports.clock, log: Ports.log, dispatcher: WebhookDispatcher },
    // the dispatcher is the sink: what this process publishes while it has room is stored leased to it and sent directly
    init: (d) => new WebhookEventPublisher(d.repo, d.views, d.clock, d.log.child({ component: 'webhooks' }), d.dispatcher),
  });
  provide(c, WebhookEventRecovery, {
    deps: { repo: Ports.repo, runs: Ports.runs, campaigns: Ports.campaigns, publisher: Ports.publisher, clock: Ports.clock, log: Ports.log },
    init: (d) => new WebhookEventRecovery(d.repo, d.runs, d.campaigns, d.publisher, d.clock, d.log.child({ component: 'webhooks' })),
  });
  provide(c, WebhookEndpoints, {
    deps: { repo: Ports.repo, transport: Ports.transport, cipher: Ports.cipher, tokens: Ports.tokens, clock: Ports.clock, dispatcher: WebhookDispatcher },
    init: (d) => new WebhookEndpoints(d.repo, d.transport, d.cipher, d.tokens, d.clock, () => d.dispatcher.kick()),
  });
  provide(c, Ports.routes, { deps: { endpoints: WebhookEndpoints }, init: (d) => webhookRoutes(d) });
  // the sweep job is defined when the dispatcher is built: before the scheduler module's start hook runs
  c.get<Lifecycle>(LifecycleToken).onStart('webhooks', async () => {
    const recovery = c.isBound(RunRepository) && c.isBound(CampaignRepository) ? c.get<WebhookEventRecovery>(WebhookEventRecovery) : null;
    // the sweep first publishes the event markers a crash left on runs and campaigns (docs/webhooks.md "Guarantees")
    if (recovery) c.get<WebhookDispatcher>(WebhookDispatcher).recoverWith(() => recovery.recover());
    await c.get<WebhookDispatcher>(WebhookDispatcher).start();
  });
}
