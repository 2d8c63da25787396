import { ForbiddenError, NotFoundError } from '../errors.js';
import type { Logger } from '../ports/logger.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import type { TelephonyProviderCatalog } from '../ports/telephony-provider-catalog.port.js';
import type { ProviderMarkup, TelephonyProvider, WebhookRequest } from '../ports/telephony-provider.port.js';
import type { ProviderInstances } from '../telephony/provider-instances.js';
import type { Run } from '../runs/run.js';
import type { CallUrls } from './call-urls.js';
import type { CallOutcomeListeners } from './call-outcome-listener.js';

type AnsweringProvider = TelephonyProvider & Required<Pick<TelephonyProvider, 'answerOutbound'>>;

const canAnswer = (p: TelephonyProvider): p is AnsweringProvider => typeof p.answerOutbound === 'function';

/**
 * `POST /telephony/<provider>/answer/<run_id>`: the answer URL of an outbound call (`PlaceCallRequest.answerUrl`).
 * Providers that fetch call instructions when the callee picks up (Twilio TwiML, Plivo XML) request it there.
 *
 * The run (tenant-free lookup by id) → its configuration of this provider → that configuration's instance
 * verifies the signature → its `answerOutbound` markup, with the run's media WebSocket URL (signed with a
 * media token by `CallUrls`) and status callback URL.
 *
 * Errors: 404 `provider_not_found` (no such plugin); 403 `signature_invalid` for a bad signature **and** for a
 * run that does not exist or is not a call of this provider (an unauthenticated caller learns nothing about
 * runs); 404 `outbound_answer_not_supported` when the run's provider instance has no `answerOutbound` (its calls
 * take their instructions at dial time). Never changes state; safe to repeat.
 */
export class AnswerOutboundCall {
  constructor(
    private readonly catalog: TelephonyProviderCatalog,
    private readonly runs: Pick<RunRepository, 'findForProviderEvent'>,
    private readonly configurations: Pick<TelephonyConfigurationRepository, 'findForProviderEvent'>,
    private readonly instances: Pick<ProviderInstances, 'forConfiguration'>,
    /** Builds the status and (signed) media URLs the markup gives the provider. */
    private readonly urls: Pick<CallUrls, 'status' | 'media'>,
    private readonly log: Logger,
    /** Told when a verified answer request comes (the callee picked up; the voice module prepares the greeting). */
    private readonly listeners?: Pick<CallOutcomeListeners, 'callConnecting'>,
  ) {}

  async execute(provider: string, runId: number, request: WebhookRequest): Promise<ProviderMarkup> {
    if (!this.catalog.get(provider)) throw new NotFoundError('provider_not_found', 'No such telephony provider');
    const found = await this.instanceForRun(provider, runId);
    if (!found) {
      this.log.warn({ provider, run_id: runId }, 'answer request refused: unknown run or not a run of this provider');
      throw signatureInvalid();
    }
    const { run, instance } = found;
    if (!canAnswer(instance)) {
      throw new NotFoundError('outbound_answer_not_supported', `Provider "${provider}" takes no answer URL requests: its calls get their instructions when they are placed`);
    }
    const verified = { ...request, runId };
    if (!instance.verifyWebhook(verified)) {
      this.log.warn({ provider, run_id: runId }, 'answer request signature invalid');
      throw signatureInvalid();
    }
    this.listeners?.callConnecting(run);
    return instance.answerOutbound(verified, { runId, mediaUrl: this.urls.media(provider, runId), statusCallbackUrl: this.urls.status(provider, runId) });
  }

  /** The run and its configuration's instance when the run is a call of `provider`; null otherwise. */
  private async instanceForRun(provider: string, runId: number): Promise<{ run: Run; instance: TelephonyProvider } | null> {
    const run = await this.runs.findForProviderEvent(runId);
    if (!run || run.provider !== provider || run.telephonyConfigurationId === null) return null;
    const configuration = await this.configurations.findForProviderEvent(run.telephonyConfigurationId);
    if (!configuration || configuration.provider !== provider) return null;
    return { run, instance: this.instances.forConfiguration(configuration) };
  }
}

const signatureInvalid = () => new ForbiddenError('signature_invalid', 'The webhook signature does not match');
