import { ForbiddenError, NotFoundError, UnauthenticatedError } from '../errors.js';
import type { Logger } from '../ports/logger.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import type { TelephonyProviderCatalog } from '../ports/telephony-provider-catalog.port.js';
import type { InboundRefusal, ProviderMarkup, ProviderPlugin, WebhookRequest } from '../ports/telephony-provider.port.js';
import type { ProviderInstances } from '../telephony/provider-instances.js';
import type { ApplyCallStatus } from './apply-call-status.use-case.js';
import type { CallUrls } from './call-urls.js';
import type { CallOutcomeListeners } from './call-outcome-listener.js';
import type { ReceiveInboundCall } from './receive-inbound-call.use-case.js';

const providerNotFound = () => new NotFoundError('provider_not_found', 'No such telephony provider');
const signatureInvalid = () => new ForbiddenError('signature_invalid', 'The webhook signature does not match');

function plugin(catalog: TelephonyProviderCatalog, provider: string): ProviderPlugin {
  const p = catalog.get(provider);
  if (!p) throw providerNotFound();
  return p;
}

/**
 * Authenticates the webhook's caller with the request's API credentials (Bearer or X-API-Key), as any API
 * route does; throws `UnauthenticatedError`. The HTTP route passes it; it runs only for providers whose
 * webhooks take organization credentials.
 */
export type AuthenticateCaller = () => Promise<{ organizationId: number }>;

/**
 * The organization a webhook's caller proved, for providers whose webhooks are our own API
 * (`webhookAuth: 'organization-credentials'`: the simulator); null for carriers (their signature decides, later).
 * Runs before any lookup, so an unauthenticated caller learns nothing (401 whatever the run or number).
 */
async function callerOrganization(p: ProviderPlugin, authenticate: AuthenticateCaller | undefined): Promise<number | null> {
  if (p.webhookAuth !== 'organization-credentials') return null;
  if (!authenticate) throw new UnauthenticatedError('not_authenticated', 'Not authenticated: send Authorization: Bearer <token> or X-API-Key');
  return (await authenticate()).organizationId;
}

/**
 * `POST /telephony/<provider>/status/<run_id>`: the run (tenant-free lookup by id) → its configuration →
 * that configuration's provider instance verifies the signature (403 `signature_invalid`) and normalizes the
 * callback; unknown events are ignored with a reason; everything else goes to `ApplyCallStatus`. For a provider
 * whose webhooks take organization credentials, the caller authenticates first (401) and a run of another
 * organization is `run_not_found` (404).
 */
export class HandleStatusWebhook {
  constructor(
    private readonly catalog: TelephonyProviderCatalog,
    private readonly runs: RunRepository,
    private readonly configurations: TelephonyConfigurationRepository,
    private readonly instances: ProviderInstances,
    private readonly applyStatus: ApplyCallStatus,
    private readonly log: Logger,
  ) {}

  async execute(provider: string, runId: number, request: WebhookRequest, authenticate?: AuthenticateCaller): Promise<{ received: true; applied: boolean; ignored?: string }> {
    const organizationId = await callerOrganization(plugin(this.catalog, provider), authenticate);
    const run = await this.runs.findForProviderEvent(runId);
    if (!run || (run.provider !== null && run.provider !== provider) || (organizationId !== null && run.organizationId !== organizationId)) {
      throw new NotFoundError('run_not_found', 'Run not found');
    }
    const configuration = run.telephonyConfigurationId === null ? null : await this.configurations.findForProviderEvent(run.telephonyConfigurationId);
    if (!configuration || configuration.provider !== provider) {
      throw new NotFoundError('telephony_configuration_not_found', 'The run has no telephony configuration of this provider');
    }
    const instance = this.instances.forConfiguration(configuration);
    if (!instance.verifyWebhook({ ...request, runId })) {
      this.log.warn({ provider, run_id: runId }, 'status webhook signature invalid');
      throw signatureInvalid();
    }
    const event = instance.parseStatusCallback({ ...request, runId });
    if (event.kind === 'ignored') {
      this.log.info({ provider, run_id: runId, reason: event.reason }, 'status webhook ignored');
      return { received: true, applied: false, ignored: event.reason };
    }
    const result = await this.applyStatus.execute(provider, event, runId);
    return { received: true, applied: result.applied };
  }
}

export type InboundWebhookResult = { kind: 'markup'; markup: ProviderMarkup } | { kind: 'ignored'; reason: string };

/**
 * `POST /telephony/<provider>/inbound`: the plugin parses the call (account id, from, to) → the number is
 * found by (provider, account id, normalized to) → its configuration's instance verifies the signature →
 * `ReceiveInboundCall` → the provider's answer markup, or its polite refusal. A call to an unknown number
 * cannot be verified (no configuration), so it gets the refusal and nothing else. For a provider whose webhooks
 * take organization credentials, the caller authenticates first (401) and only numbers of its own organization
 * are found (another organization's: the `phone_number_not_found` refusal).
 */
export class HandleInboundWebhook {
  constructor(
    private readonly catalog: TelephonyProviderCatalog,
    private readonly configurations: TelephonyConfigurationRepository,
    private readonly instances: ProviderInstances,
    private readonly receive: ReceiveInboundCall,
    /** Builds the status and (signed) media URLs the answer markup gives the provider. */
    private readonly urls: Pick<CallUrls, 'status' | 'media'>,
    private readonly log: Logger,
    /** Told of every accepted call before its markup is returned (the voice module prepares the greeting). */
    private readonly listeners?: Pick<CallOutcomeListeners, 'callConnecting'>,
  ) {}

  async execute(provider: string, request: WebhookRequest, authenticate?: AuthenticateCaller): Promise<InboundWebhookResult> {
    const p = plugin(this.catalog, provider);
    if (!p.parseInboundCall) throw new NotFoundError('inbound_webhook_not_supported', `Provider "${provider}" takes no inbound HTTP webhooks`);
    const organizationId = await callerOrganization(p, authenticate);
    const call = p.parseInboundCall(request);
    if ('ignored' in call) {
      this.log.info({ provider, reason: call.ignored }, 'inbound webhook ignored');
      return { kind: 'ignored', reason: call.ignored };
    }
    const number = await this.receive.findNumber(provider, call.accountId, call.to);
    const configuration = number ? await this.configurations.findForProviderEvent(number.telephonyConfigurationId) : null;
    if (!number || !configuration || (organizationId !== null && number.organizationId !== organizationId)) {
      return { kind: 'markup', markup: this.refusal(p, 'phone_number_not_found') };
    }
    const instance = this.instances.forConfiguration(configuration);
    if (!instance.verifyWebhook(request)) {
      this.log.warn({ provider, telephony_configuration_id: configuration.id }, 'inbound webhook signature invalid');
      throw signatureInvalid();
    }
    const result = await this.receive.execute({ provider, accountId: call.accountId, providerCallId: call.providerCallId, from: call.from, to: call.to });
    if (result.kind === 'refused') return { kind: 'markup', markup: this.refusal(p, result.reason) };
    const runId = result.run.id;
    this.listeners?.callConnecting(result.run);
    return {
      kind: 'markup',
      markup: instance.inboundAnswer({
        runId, providerCallId: call.providerCallId, mediaUrl: this.urls.media(provider, runId), statusCallbackUrl: this.urls.status(provider, runId),
        ...(call.caller ? { caller: call.caller } : {}),
      }),
    };
  }

  private refusal(p: ProviderPlugin, reason: InboundRefusal): ProviderMarkup {
    if (p.inboundReject) return p.inboundReject(reason);
    const status = reason === 'workflow_archived' ? 409 : 404;
    return { status, contentType: 'application/json', body: JSON.stringify({ detail: reason.replace(/_/g, ' '), code: reason }) };
  }
}
