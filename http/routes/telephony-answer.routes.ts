/**
 * `POST /api/v1/telephony/{provider}/answer/{run_id}`: the answer URL of an outbound call, for providers that
 * fetch call instructions when the callee picks up (Twilio TwiML, Plivo XML; the provider instance's
 * `answerOutbound`). The logic lives in core/calls/answer-outbound-call.use-case.ts: the run → its
 * configuration → signature check against the exact public URL (403 `signature_invalid`, also for an unknown
 * run or a run of another provider, so nothing is revealed) → the provider's markup with the run's signed
 * media WebSocket URL. 404 for an unknown provider or one whose calls take no answer URL.
 */
import type { AnswerOutboundCall } from '../../core/calls/answer-outbound-call.use-case.js';
import { defineRoutes, type RouteDefinition } from '../routing/route.js';
import { id, obj, str } from '../routing/schema-helpers.js';
import { webhookRequestOf } from './telephony-webhooks.routes.js';

export interface TelephonyAnswerRouteDeps {
  answer: AnswerOutboundCall;
  /** CALLPLANE_PUBLIC_URL: providers sign the URL they were given, which starts with it. */
  publicUrl: string;
}

const provider = str({ pattern: '^[a-z][a-z0-9_]{0,31}$', description: 'a registered provider id whose calls use an answer URL (`twilio`, `plivo`)' });

export function telephonyAnswerRoutes(d: TelephonyAnswerRouteDeps): RouteDefinition[] {
  return defineRoutes([
    {
      method: 'post',
      path: '/telephony/{provider}/answer/{run_id}',
      operationId: 'providerAnswerOutboundCall',
      summary: "A provider's answer URL of an outbound call (call instructions markup)",
      description:
        'The provider requests it when an outbound call is answered. Verified with the provider\'s signature against the exact public URL ' +
        '(CALLPLANE_PUBLIC_URL); answers the provider\'s markup connecting the call to the run\'s media WebSocket (Twilio: TwiML ' +
        '<Connect><Stream>, Plivo: XML <Stream>), or hangs up on an answering machine. 403 `signature_invalid` for a bad signature or a run ' +
        'that is not a call of this provider; 404 for an unknown provider or one whose calls take no answer URL.',
      tags: ['provider webhooks'],
      auth: 'none',
      params: obj({ provider, run_id: id() }, ['provider', 'run_id']),
      rawBody: { contentType: 'application/x-www-form-urlencoded', description: "The provider's call parameters as it sends them (Twilio: CallSid, AccountSid, AnsweredBy...; Plivo: CallUUID, From, To...)" },
      response: { contentType: 'text/xml', description: 'Provider markup (TwiML for twilio, Plivo XML for plivo)' },
      errors: [403, 404],
      async handler({ params, req, res }) {
        const markup = await d.answer.execute(String(params.provider), Number(params.run_id), webhookRequestOf(req, d.publicUrl, Number(params.run_id)));
        res.status(markup.status ?? 200).type(markup.contentType).send(markup.body);
        return undefined;
      },
    },
  ]);
}
