import { WEBHOOK_EVENT_TYPES } from '../../core/ports/event-publisher.port.js';
import { WEBHOOK_DESCRIPTION_MAX_LENGTH, WEBHOOK_URL_MAX_LENGTH, type WebhookDelivery, type WebhookEndpoint } from '../../core/webhooks/webhook.js';
import type { WebhookEndpoints } from '../../core/webhooks/webhooks.use-case.js';
import { defineRoutes } from '../routing/route.js';
import { arr, dateTime, deletedResponse, id, int, nullable, obj, pagination, pathParams, str } from '../routing/schema-helpers.js';

export interface WebhookRouteDeps {
  endpoints: WebhookEndpoints;
}

/** An endpoint as API.md 14 shows it (never its secret). */
export const presentWebhook = (e: WebhookEndpoint) => ({
  id: e.id,
  url: e.url,
  events: e.events,
  description: e.description,
  created_at: e.createdAt.toISOString(),
  updated_at: e.updatedAt.toISOString(),
});

export const presentDelivery = (d: WebhookDelivery) => ({
  id: d.id,
  event: d.event,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.lastStatusCode,
  last_error: d.lastError,
  next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
  created_at: d.createdAt.toISOString(),
});

const eventEnum = { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] };
const url = str({ minLength: 1, maxLength: WEBHOOK_URL_MAX_LENGTH, description: 'https (http too where CALLPLANE_ALLOW_PRIVATE_NETWORK allows); must pass the outbound network policy' });
const events = arr(eventEnum, { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length * 2 });
const description = nullable(str({ maxLength: WEBHOOK_DESCRIPTION_MAX_LENGTH }));
const webhookFields = { id: id(), url: str(), events: arr(eventEnum), description: nullable(str()), created_at: dateTime(), updated_at: dateTime() };
const webhookRequired = ['id', 'url', 'events', 'description', 'created_at', 'updated_at'];
const webhookSchema = obj(webhookFields, webhookRequired);
const withSecret = obj({ ...webhookFields, secret: str({ description: 'whsec_ + 43 base64url characters; shown in this response only' }) }, [...webhookRequired, 'secret']);
const deliverySchema = obj({
  id: id(), event: str(), status: str({ enum: ['pending', 'delivered', 'failed'] }), attempts: int({ minimum: 0 }),
  last_status_code: nullable(int()), last_error: nullable(str()), next_attempt_at: nullable(dateTime()), created_at: dateTime(),
}, ['id', 'event', 'status', 'attempts', 'last_status_code', 'last_error', 'next_attempt_at', 'created_at']);
const tags = ['webhooks'];
const webhookParam = pathParams('webhook_id');

/** Event webhooks (API.md 14; docs/webhooks.md). */
export function webhookRoutes(d: WebhookRouteDeps) {
  return defineRoutes([
    {
      method: 'post', path: '/organizations/webhooks', operationId: 'createWebhook', summary: 'Subscribe an endpoint to events', tags, auth: 'any',
      description: 'The response carries the signing `secret`, shown once. Unknown events and URLs the network policy refuses (cloud metadata; private addresses unless allowed): 422.',
      body: obj({ url, events, description }, ['url', 'events']),
      response: withSecret,
      handler: async ({ body, principal }) => {
        const r = await d.endpoints.create(principal.organizationId, body);
        return { ...presentWebhook(r.endpoint), secret: r.secret };
      },
    },
    {
      method: 'get', path: '/organizations/webhooks', operationId: 'listWebhooks', summary: "The organization's webhook endpoints, oldest first", tags, auth: 'any',
      response: obj({ webhooks: arr(webhookSchema) }, ['webhooks']),
      handler: async ({ principal }) => ({ webhooks: (await d.endpoints.list(principal.organizationId)).map(presentWebhook) }),
    },
    {
      method: 'get', path: '/organizations/webhooks/{webhook_id}', operationId: 'getWebhook', summary: 'A webhook endpoint', tags, auth: 'any',
      params: webhookParam, response: webhookSchema, errors: [404],
      handler: async ({ params, principal }) => presentWebhook(await d.endpoints.get(principal.organizationId, params.webhook_id)),
    },
    {
      method: 'put', path: '/organizations/webhooks/{webhook_id}', operationId: 'updateWebhook', summary: "Change an endpoint's url, events or description", tags, auth: 'any',
      description: 'Partial: only the sent fields change. The secret changes only through rotate-secret.',
      params: webhookParam, body: obj({ url, events, description }), response: webhookSchema, errors: [404],
      handler: async ({ params, body, principal }) => presentWebhook(await d.endpoints.update(principal.organizationId, params.webhook_id, body)),
    },
    {
      method: 'delete', path: '/organizations/webhooks/{webhook_id}', operationId: 'deleteWebhook', summary: 'Delete an endpoint and its delivery log', tags, auth: 'any',
      params: webhookParam, response: deletedResponse, errors: [404],
      handler: async ({ params, principal }) => d.endpoints.remove(principal.organizationId, params.webhook_id),
    },
    {
      method: 'post', path: '/organizations/webhooks/{webhook_id}/rotate-secret', operationId: 'rotateWebhookSecret', summary: 'A new signing secret, shown once', tags, auth: 'any',
      description: 'Every attempt from now on is signed with the new secret (retries of older deliveries included).',
      params: webhookParam, bodyOptional: true, body: obj({}), response: withSecret, errors: [404],
      handler: async ({ params, principal }) => {
        const r = await d.endpoints.rotateSecret(principal.organizationId, params.webhook_id);
        return { ...presentWebhook(r.endpoint), secret: r.secret };
      },
    },
    {
      method: 'post', path: '/organizations/webhooks/{webhook_id}/test', operationId: 'testWebhook', summary: 'Send a `webhook.test` event to the endpoint', tags, auth: 'any',
      description: 'Stored and sent like any delivery (signed, retried); returns the delivery.',
      params: webhookParam, bodyOptional: true, body: obj({}), response: deliverySchema, errors: [404],
      handler: async ({ params, principal }) => presentDelivery(await d.endpoints.ping(principal.organizationId, params.webhook_id)),
    },
    {
      method: 'get', path: '/organizations/webhooks/{webhook_id}/deliveries', operationId: 'listWebhookDeliveries', summary: "The endpoint's deliveries, newest first", tags, auth: 'any',
      params: webhookParam, query: obj({ ...pagination }),
      response: obj({ deliveries: arr(deliverySchema), total_count: int({ minimum: 0 }), page: int({ minimum: 1 }), limit: int({ minimum: 1 }), total_pages: int({ minimum: 0 }) },
        ['deliveries', 'total_count', 'page', 'limit', 'total_pages']),
      errors: [404],
      handler: async ({ params, query, principal }) => {
        const p = await d.endpoints.deliveries(principal.organizationId, params.webhook_id, { page: query.page, limit: query.limit });
        return { deliveries: p.deliveries.map(presentDelivery), total_count: p.totalCount, page: p.page, limit: p.limit, total_pages: p.totalPages };
      },
    },
    {
      method: 'post', path: '/organizations/webhooks/{webhook_id}/deliveries/{delivery_id}/retry', operationId: 'retryWebhookDelivery', summary: 'Send a delivery again now', tags, auth: 'any',
      description: 'Makes the delivery due now (`pending`), whatever its status; the same id and body are sent.',
      params: pathParams('webhook_id', 'delivery_id'), bodyOptional: true, body: obj({}), response: deliverySchema, errors: [404],
      handler: async ({ params, principal }) => presentDelivery(await d.endpoints.retry(principal.organizationId, params.webhook_id, params.delivery_id)),
    },
  ]);
}
