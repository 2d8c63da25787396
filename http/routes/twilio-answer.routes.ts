/**
 * `POST /api/v1/telephony/twilio/answer/{run_id}`: the answer URL of an outbound Twilio call. Twilio fetches
 * TwiML here when the callee picks up (with `AnsweredBy` when answering machine detection is on). The request
 * is verified with `X-Twilio-Signature` against the exact public URL (403 otherwise, also for a run that does
 * not exist or is not a Twilio run, so nothing is revealed); the answer is `<Connect><Stream>` to the run's
 * media WebSocket, or `<Hangup/>` for a machine.
 */
import type { MediaTokens } from '../../core/calls/media-token.js';
import { ForbiddenError } from '../../core/errors.js';
import type { ProviderMarkup, TelephonyProvider, WebhookRequest } from '../../core/ports/telephony-provider.port.js';
import type { RunRepository } from '../../core/ports/run.repository.port.js';
import type { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import type { Run } from '../../core/runs/run.js';
import type { ProviderInstances } from '../../core/telephony/provider-instances.js';
import { defineRoutes, type RouteDefinition } from '../routing/route.js';
import { webhookRequestOf } from './telephony-webhooks.routes.js';

/** A Twilio provider instance: it builds the answer TwiML (see providers/twilio/twilio.provider.ts). */
interface OutboundAnswering {
  answerOutbound(request: WebhookRequest, input: { runId: number; mediaUrl: string }): ProviderMarkup;
}

export interface TwilioAnswerRouteDeps {
  /** CALLPLANE_PUBLIC_URL: Twilio signs the URL it was given, which starts with it. */
  publicUrl: string;
  runs: Pick<RunRepository, 'findForProviderEvent'>;
  configurations: Pick<TelephonyConfigurationRepository, 'findForProviderEvent'>;
  instances: Pick<ProviderInstances, 'forConfiguration'>;
  /** Signs the media URL (the TwiML carries the token as a `<Parameter>`). */
  mediaTokens?: Pick<MediaTokens, 'signUrl'>;
}

/** The run (any organization: this is a provider webhook) and its Twilio configuration's instance, or null. */
async function twilioProviderForRun(deps: TwilioAnswerRouteDeps, runId: number): Promise<{ run: Run; provider: TelephonyProvider } | null> {
  const run = await deps.runs.findForProviderEvent(runId);
  if (!run || run.provider !== 'twilio' || run.telephonyConfigurationId === null) return null;
  const configuration = await deps.configurations.findForProviderEvent(run.telephonyConfigurationId);
  if (!configuration || configuration.provider !== 'twilio') return null;
  return { run, provider: deps.instances.forConfiguration(configuration) };
}

const canAnswer = (p: TelephonyProvider): p is TelephonyProvider & OutboundAnswering =>
  typeof (p as Partial<OutboundAnswering>).answerOutbound === 'function';

export function twilioAnswerRoutes(deps: TwilioAnswerRouteDeps): RouteDefinition[] {
  return defineRoutes([
    {
      method: 'post',
      path: '/telephony/twilio/answer/{run_id}',
      operationId: 'twilioAnswerOutboundCall',
      summary: 'Twilio answer URL of an outbound call (TwiML)',
      description:
        'Twilio requests it when an outbound call is answered. Verified with X-Twilio-Signature against the exact public URL ' +
        '(CALLPLANE_PUBLIC_URL); answers TwiML <Connect><Stream> to the run\'s media WebSocket, or <Hangup/> for an answering machine.',
      tags: ['Provider webhooks'],
      auth: 'none',
      params: {
        type: 'object',
        required: ['run_id'],
        properties: { run_id: { type: 'integer', minimum: 1 } },
      },
      rawBody: { contentType: 'application/x-www-form-urlencoded', description: "Twilio's call parameters (CallSid, AccountSid, CallStatus, AnsweredBy...)" },
      response: { contentType: 'text/xml', description: 'TwiML' },
      errors: [403],
      async handler({ params, req, res, log }) {
        const runId = Number(params.run_id);
        const found = await twilioProviderForRun(deps, runId);
        const request = webhookRequestOf(req, deps.publicUrl, runId);
        if (!found || found.run.provider !== 'twilio' || !canAnswer(found.provider) || !found.provider.verifyWebhook(request)) {
          log.warn({ run_id: runId, provider: 'twilio' }, 'Twilio answer request refused (signature, unknown run or not a Twilio run)');
          throw new ForbiddenError('signature_invalid', 'The webhook signature does not match');
        }
        const mediaUrl = `${deps.publicUrl.replace(/\/+$/, '').replace(/^http/i, 'ws')}/api/v1/telephony/twilio/media/${runId}`;
        const markup = found.provider.answerOutbound(request, { runId, mediaUrl: deps.mediaTokens ? deps.mediaTokens.signUrl('twilio', runId, mediaUrl) : mediaUrl });
        res.status(markup.status ?? 200).type(markup.contentType).send(markup.body);
        return undefined;
      },
    },
  ]);
}
