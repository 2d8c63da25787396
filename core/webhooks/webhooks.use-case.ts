import { NotFoundError, ValidationError } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import type { SecretCipher, TokenService } from '../ports/crypto.port.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../ports/event-publisher.port.js';
import type { WebhookRepository } from '../ports/webhook.repository.port.js';
import type { WebhookTransport } from '../ports/webhook-transport.port.js';
import { deliveryBody } from './webhook-events.js';
import { WEBHOOK_SECRET_PREFIX, webhookSecretContext, type WebhookDelivery, type WebhookEndpoint } from './webhook.js';

export const webhookNotFound = () => new NotFoundError('webhook_not_found', 'Webhook endpoint not found');
export const deliveryNotFound = () => new NotFoundError('webhook_delivery_not_found', 'Webhook delivery not found');

/** An endpoint with its secret in clear: returned by create and rotate only (shown once). */
export interface WebhookEndpointWithSecret {
  endpoint: WebhookEndpoint;
  secret: string;
}

export interface WebhookEndpointInput {
  url: string;
  events: string[];
  description?: string | null;
}

/**
 * Endpoints and their delivery log (API.md 14). Every method is scoped to the caller's organization: another
 * organization's endpoint is `webhook_not_found` (404). The url must pass the outbound network policy as
 * written (422 on `body.url`); each send checks the resolved addresses again and never follows a redirect.
 * Unknown events are 422 on `body.events.<i>`. The secret is stored encrypted and returned by create and
 * rotate only.
 */
export class WebhookEndpoints {
  constructor(
    private readonly repo: WebhookRepository,
    private readonly transport: Pick<WebhookTransport, 'checkUrl'>,
    private readonly cipher: SecretCipher,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
    /** Called after a manual retry or a test ping is stored (the sender's kick). */
    private readonly kick: () => void = () => undefined,
  ) {}

  /** Not idempotent. Throws ValidationError. */
  async create(organizationId: number, input: WebhookEndpointInput): Promise<WebhookEndpointWithSecret> {
    const events = this.check(input);
    const secret = this.newSecret();
    const secretsKeyId = this.tokens.randomToken(12);
    const endpoint = await this.repo.createEndpoint(organizationId, {
      url: input.url, events: events!, description: input.description ?? null, secretsKeyId,
      secretCiphertext: this.cipher.encrypt(secret, webhookSecretContext(organizationId, secretsKeyId)), now: this.clock.now(),
    });
    return { endpoint, secret };
  }

  async list(organizationId: number): Promise<WebhookEndpoint[]> {
    return this.repo.listEndpoints(organizationId);
  }

  /** Throws NotFoundError `webhook_not_found`. */
  async get(organizationId: number, id: number): Promise<WebhookEndpoint> {
    const e = await this.repo.getEndpoint(organizationId, id);
    if (!e) throw webhookNotFound();
    return e;
  }

  /** Changes only the sent fields. Throws NotFoundError, ValidationError. Idempotent. */
  async update(organizationId: number, id: number, patch: Partial<WebhookEndpointInput>): Promise<WebhookEndpoint> {
    const events = this.check(patch);
    const updated = await this.repo.updateEndpoint(organizationId, id, {
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(events ? { events } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      now: this.clock.now(),
    });
    if (!updated) throw webhookNotFound();
    return updated;
  }

  /** Deletes the endpoint and its delivery log. Throws NotFoundError. */
  async remove(organizationId: number, id: number): Promise<{ id: number; deleted: true }> {
    if (!(await this.repo.deleteEndpoint(organizationId, id))) throw webhookNotFound();
    return { id, deleted: true };
  }

  /** A new secret, shown once; deliveries signed from now on use it. Throws NotFoundError. */
  async rotateSecret(organizationId: number, id: number): Promise<WebhookEndpointWithSecret> {
    const current = await this.get(organizationId, id);
    const secret = this.newSecret();
    const endpoint = await this.repo.updateEndpoint(organizationId, id, {
      secretCiphertext: this.cipher.encrypt(secret, webhookSecretContext(organizationId, current.secretsKeyId)), now: this.clock.now(),
    });
    if (!endpoint) throw webhookNotFound();
    return { endpoint, secret };
  }

  /** Newest first. Throws NotFoundError when the endpoint is not the caller's. */
  async deliveries(organizationId: number, id: number, page: { page: number; limit: number }) {
    await this.get(organizationId, id);
    const { deliveries, totalCount } = await this.repo.listDeliveries(organizationId, id, page);
    return { deliveries, totalCount, page: page.page, limit: page.limit, totalPages: Math.ceil(totalCount / page.limit) };
  }

  /** Makes a delivery due now (whatever its status). Throws NotFoundError (endpoint or delivery). Idempotent. */
  async retry(organizationId: number, id: number, deliveryId: number): Promise<WebhookDelivery> {
    await this.get(organizationId, id);
    const d = await this.repo.retryDelivery(organizationId, id, deliveryId, this.clock.now());
    if (!d) throw deliveryNotFound();
    this.kick();
    return d;
  }

  /** Stores a `webhook.test` delivery to this endpoint (sent like any other). Throws NotFoundError. */
  async ping(organizationId: number, id: number): Promise<WebhookDelivery> {
    await this.get(organizationId, id);
    const now = this.clock.now();
    const [d] = await this.repo.enqueue(organizationId, [{
      endpointId: id, event: 'webhook.test', now, body: (deliveryId) => deliveryBody(deliveryId, 'webhook.test', now, { webhook_id: id }),
    }]);
    this.kick();
    return d!;
  }

  private newSecret(): string {
    return WEBHOOK_SECRET_PREFIX + this.tokens.randomToken(32);
  }

  /** Validates url and events when present; returns the events (deduplicated) or undefined. */
  private check(input: Partial<WebhookEndpointInput>): WebhookEventType[] | undefined {
    const issues: ConstructorParameters<typeof ValidationError>[0] = [];
    if (input.url !== undefined) {
      const problem = this.transport.checkUrl(input.url);
      if (problem) issues.push({ loc: ['body', 'url'], msg: problem, type: 'url_refused' });
    }
    let events: WebhookEventType[] | undefined;
    if (input.events !== undefined) {
      input.events.forEach((e, i) => {
        if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e)) {
          issues.push({ loc: ['body', 'events', i], msg: `Input should be one of ${WEBHOOK_EVENT_TYPES.map((t) => `'${t}'`).join(', ')}`, type: 'enum' });
        }
      });
      events = [...new Set(input.events)] as WebhookEventType[];
    }
    if (issues.length) throw new ValidationError(issues);
    return events;
  }
}
