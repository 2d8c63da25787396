import type { Request } from 'express';
import type { HandleInboundWebhook, HandleStatusWebhook } from '../../core/calls/provider-webhooks.use-case.js';
import type { WebhookRequest } from '../../core/ports/telephony-provider.port.js';
import { defineRoutes } from '../routing/route.js';
import { bool, id, obj, str } from '../routing/schema-helpers.js';

export interface TelephonyWebhookRouteDeps {
  status: HandleStatusWebhook;
  inbound: HandleInboundWebhook;
  /** `Settings.publicUrl`: signatures cover the exact public URL the provider called. */
  publicUrl: string;
}

/** The webhook as the provider sent it: the exact public URL (our public base + path + query), headers, parsed and raw body. */
export function webhookRequestOf(req: Request, publicUrl: string, runId?: number): WebhookRequest {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  const query: Record<string, string> = {};
  for (const [k, v] of Object.entries((req.query ?? {}) as Record<string, unknown>)) if (typeof v === 'string') query[k] = v;
  const body = req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};
  const rawBody = (req as Request & { rawBody?: Buffer }).rawBody;
  return {
    publicUrl: `${publicUrl.replace(/\/+$/, '')}${req.originalUrl}`,
    method: req.method,
    headers,
    body,
    ...(rawBody ? { rawBody } : {}),
    query,
    ...(runId !== undefined ? { runId } : {}),
  };
}

const provider = str({ pattern: '^[a-z][a-z0-9_]{0,31}$', description: 'a registered provider id (`twilio`, `ari`, `simulator`, ...)' });
const tags = ['provider webhooks'];
const callbackBody = { contentType: 'application/x-www-form-urlencoded', description: 'The provider\'s callback as it sends it (form-encoded or JSON); verified with the provider\'s signature scheme' };

export function telephonyWebhookRoutes(d: TelephonyWebhookRouteDeps) {
  return defineRoutes([
    {
      method: 'post', path: '/telephony/{provider}/status/{run_id}', operationId: 'providerStatusCallback', summary: 'A provider\'s call status callback', tags, auth: 'none',
      description: 'Verified with the provider\'s signature against the exact public URL (403 `signature_invalid`), normalized and applied idempotently (a call never moves backwards). Unknown events are answered 200 with `ignored`. ' +
        'For `simulator` this is an API of ours: send the API credentials (Bearer or X-API-Key) of the organization owning the run (none: 401; another organization\'s: 404 `run_not_found`); `duration_seconds` is 0..86400 (422 otherwise).',
      params: obj({ provider, run_id: id() }, ['provider', 'run_id']),
      rawBody: callbackBody,
      response: obj({ received: { const: true }, applied: bool(), ignored: str() }, ['received', 'applied']),
      errors: [401, 403, 404],
      // the use case decides whether this provider's webhooks need API credentials (webhookAuth); carriers' do not
      handler: async ({ params, req, authenticate }) => d.status.execute(params.provider, params.run_id, webhookRequestOf(req, d.publicUrl, params.run_id), authenticate),
    },
    {
      method: 'post', path: '/telephony/{provider}/inbound', operationId: 'providerInboundCall', summary: 'A provider\'s inbound call webhook', tags, auth: 'none',
      description: 'Answers with the provider\'s markup (TwiML, ...) connecting the call to its workflow, or its polite refusal. ' +
        'For `simulator` this is the inbound test endpoint: JSON `{"account_id", "from", "to"}` with the API credentials (Bearer or X-API-Key) of the organization owning the number (none: 401) → 200 `{"run_id"}` when `to` is an active number of that organization bound to an active workflow, else 404 `phone_number_not_found` or 409 `workflow_archived`.',
      params: obj({ provider }, ['provider']),
      rawBody: callbackBody,
      response: { contentType: 'application/xml', description: 'Provider markup (TwiML for twilio, JSON `{"run_id"}` for simulator)' },
      errors: [401, 403, 404, 409],
      handler: async ({ params, req, res, log, authenticate }) => {
        const r = await d.inbound.execute(params.provider, webhookRequestOf(req, d.publicUrl), authenticate);
        if (r.kind === 'ignored') {
          log.info({ provider: params.provider, reason: r.reason }, 'inbound webhook ignored');
          return { received: true, ignored: r.reason };
        }
        res.status(r.markup.status ?? 200).type(r.markup.contentType).send(r.markup.body);
        return undefined;
      },
    },
  ]);
}
