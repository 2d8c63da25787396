import type { Container } from 'inversify';
import { AnswerOutboundCall } from '../../core/calls/answer-outbound-call.use-case.js';
import { ApplyCallStatus } from '../../core/calls/apply-call-status.use-case.js';
import { EventPublisher } from '../../core/ports/event-publisher.port.js';
import { CallOutcomeListeners } from '../../core/calls/call-outcome-listener.js';
import { CallUrls } from '../../core/calls/call-urls.js';
import { PlaceOutboundCall } from '../../core/calls/place-outbound-call.use-case.js';
import { HandleInboundWebhook, HandleStatusWebhook } from '../../core/calls/provider-webhooks.use-case.js';
import { MediaTokens } from '../../core/calls/media-token.js';
import { ReceiveInboundCall } from '../../core/calls/receive-inbound-call.use-case.js';
import { Clock } from '../../core/ports/clock.port.js';
import { SecretCipher, TokenService } from '../../core/ports/crypto.port.js';
import { Logger } from '../../core/ports/logger.port.js';
import { PhoneAddressNormalizer } from '../../core/ports/phone-address-normalizer.port.js';
import { PhoneNumberRepository } from '../../core/ports/phone-number.repository.port.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { OrganizationSettingsRepository } from '../../core/ports/organization-settings.repository.port.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import { TelephonyConfigurationUsage } from '../../core/ports/telephony-configuration-usage.port.js';
import { TelephonyProviderCatalog } from '../../core/ports/telephony-provider-catalog.port.js';
import { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { CheckCredentials } from '../../core/telephony/check-credentials.use-case.js';
import { CredentialVault } from '../../core/telephony/credential-vault.js';
import {
  CreatePhoneNumber, DeletePhoneNumber, GetPhoneNumber, ListPhoneNumbers, PhoneNumberService, SetDefaultCallerId, UpdatePhoneNumber,
} from '../../core/telephony/phone-numbers.use-case.js';
import { ProviderInstances } from '../../core/telephony/provider-instances.js';
import { SimulatedCallers } from '../../core/ports/simulated-callers.port.js';
import {
  CreateTelephonyConfiguration, DeleteTelephonyConfiguration, GetTelephonyConfiguration, ListTelephonyConfigurations,
  SetDefaultOutboundConfiguration, TelephonyConfigurationReader, UpdateTelephonyConfiguration,
} from '../../core/telephony/telephony-configurations.use-case.js';
import { EnsureWorkflowCanReceiveCalls } from '../../core/workflows/ensure-workflow-can-receive-calls.use-case.js';
import { LibphonenumberNormalizer } from '../../adapters/phone/libphonenumber-normalizer.js';
import { phoneNumberRoutes } from '../../http/routes/phone-numbers.routes.js';
import { telephonyWebhookRoutes } from '../../http/routes/telephony-webhooks.routes.js';
import { telephonyAnswerRoutes } from '../../http/routes/telephony-answer.routes.js';
import { telephonyRoutes } from '../../http/routes/telephony.routes.js';
import type { Lifecycle } from '../lifecycle.js';
import { ProviderRegistry } from '../provider-registry.js';
import type { Settings } from '../settings.js';
import { HttpRoutesToken, LifecycleToken, SettingsToken } from '../tokens.js';

/**
 * Until campaign storage implements `TelephonyConfigurationUsage`, nothing can use a configuration: answers 0.
 * The campaign module replaces this binding (`c.rebind(TelephonyConfigurationUsage)`).
 */
export const noCampaignsUsage: TelephonyConfigurationUsage = { countActiveCampaignsUsingConfiguration: async () => 0 };

/**
 * Telephony: the provider registry (built by the entry point, which also loaded third-party plugins),
 * configurations, numbers, provider instances, the one call-status path, inbound calls and the provider
 * webhook routes. Repositories come from the storage module; without them (a storage whose adapters have not
 * landed) only the provider metadata is served.
 */
export function telephonyModule(c: Container, registry: ProviderRegistry): void {
  c.bind(ProviderRegistry).toConstantValue(registry);
  c.bind(TelephonyProviderCatalog).toConstantValue(registry);
  if (!c.isBound(PhoneAddressNormalizer)) c.bind(PhoneAddressNormalizer).toConstantValue(new LibphonenumberNormalizer());
  c.bind(CredentialVault).toResolvedValue((cipher: SecretCipher) => new CredentialVault(cipher), [SecretCipher]).inSingletonScope();
  c.bind(CallOutcomeListeners).toConstantValue(new CallOutcomeListeners());
  const metadataOnly = () => telephonyRoutes({
    configSchema: registry.configSchema(), providerIds: registry.ids(), metadata: () => registry.metadata(),
  } as never).filter((r) => r.operationId === 'getTelephonyProviderMetadata');
  if (!c.isBound(TelephonyConfigurationRepository) || !c.isBound(PhoneNumberRepository) || !c.isBound(RunRepository) || !c.isBound(WorkflowRepository)) {
    c.bind(HttpRoutesToken).toConstantValue(metadataOnly());
    return;
  }
  if (!c.isBound(TelephonyConfigurationUsage)) c.bind(TelephonyConfigurationUsage).toConstantValue(noCampaignsUsage);
  if (!c.isBound(EnsureWorkflowCanReceiveCalls)) {
    c.bind(EnsureWorkflowCanReceiveCalls).toResolvedValue((w: WorkflowRepository) => new EnsureWorkflowCanReceiveCalls(w), [WorkflowRepository]).inSingletonScope();
  }

  c.bind(ApplyCallStatus).toResolvedValue(
    (runs: RunRepository, l: CallOutcomeListeners, clock: Clock, log: Logger, prices: OrganizationSettingsRepository | undefined, events: EventPublisher | undefined) =>
      new ApplyCallStatus(runs, l, clock, log, prices, events),
    [RunRepository, CallOutcomeListeners, Clock, Logger, { serviceIdentifier: OrganizationSettingsRepository, optional: true }, { serviceIdentifier: EventPublisher, optional: true }],
  ).inSingletonScope();
  c.bind(ReceiveInboundCall).toResolvedValue(
    (cfg: TelephonyConfigurationRepository, n: PhoneNumberRepository, e: EnsureWorkflowCanReceiveCalls, r: RunRepository, norm: PhoneAddressNormalizer, clock: Clock, log: Logger) =>
      new ReceiveInboundCall(cfg, n, e, r, norm, clock, log),
    [TelephonyConfigurationRepository, PhoneNumberRepository, EnsureWorkflowCanReceiveCalls, RunRepository, PhoneAddressNormalizer, Clock, Logger],
  ).inSingletonScope();
  c.bind(ProviderInstances).toResolvedValue(
    (v: CredentialVault, cfg: TelephonyConfigurationRepository, apply: ApplyCallStatus, receive: ReceiveInboundCall, log: Logger, s: Settings, lifecycle: Lifecycle, urls: CallUrls) => {
      const instances = new ProviderInstances(registry, v, cfg, {
        reportStatus: async (provider, event) => {
          await apply.execute(provider, event, event.runId);
        },
        reportInbound: async (provider, call) => {
          const r = await receive.execute({ provider, accountId: call.accountId, configurationId: call.configurationId, providerCallId: call.providerCallId, from: call.from, to: call.to });
          // the signed media URL too: ARI connects an accepted call's media itself (external media channel)
          return r.kind === 'accepted' ? { runId: r.run.id, mediaUrl: urls.media(provider, r.run.id) } : { refused: r.reason };
        },
        // bound by the voice module in processes that run the voice pipeline; resolved per call (modules bind later)
        connectSimulatedCaller: (request) => c.isBound(SimulatedCallers) && c.get<SimulatedCallers>(SimulatedCallers).connect(request),
      }, log, { publicUrl: s.publicUrl, allowPrivateNetwork: s.allowPrivateNetwork, persistentConnections: s.role !== 'api' });
      lifecycle.onStop('telephony-providers', () => instances.closeAll());
      return instances;
    },
    [CredentialVault, TelephonyConfigurationRepository, ApplyCallStatus, ReceiveInboundCall, Logger, SettingsToken, LifecycleToken, CallUrls],
  ).inSingletonScope();

  // persistent provider connections (ARI's event socket) live in the worker side of the process roles
  c.get<Lifecycle>(LifecycleToken).onStart('telephony-providers', async () => {
    if (c.get<Settings>(SettingsToken).role === 'api') return;
    await c.get(ProviderInstances).startPersistent();
  });

  c.bind(TelephonyConfigurationReader).toResolvedValue(
    (r: TelephonyConfigurationRepository, n: PhoneNumberRepository, v: CredentialVault) => new TelephonyConfigurationReader(r, n, registry, v),
    [TelephonyConfigurationRepository, PhoneNumberRepository, CredentialVault],
  ).inSingletonScope();
  c.bind(CheckCredentials).toResolvedValue(
    (r: TelephonyConfigurationRepository, i: ProviderInstances, clock: Clock, log: Logger) => new CheckCredentials(r, i, clock, log),
    [TelephonyConfigurationRepository, ProviderInstances, Clock, Logger],
  ).inSingletonScope();
  c.bind(CreateTelephonyConfiguration).toResolvedValue(
    (r: TelephonyConfigurationRepository, rd: TelephonyConfigurationReader, v: CredentialVault, t: TokenService, i: ProviderInstances, clock: Clock, check: CheckCredentials) =>
      new CreateTelephonyConfiguration(r, rd, registry, v, t, i, clock, check),
    [TelephonyConfigurationRepository, TelephonyConfigurationReader, CredentialVault, TokenService, ProviderInstances, Clock, CheckCredentials],
  ).inSingletonScope();
  c.bind(UpdateTelephonyConfiguration).toResolvedValue(
    (r: TelephonyConfigurationRepository, rd: TelephonyConfigurationReader, v: CredentialVault, i: ProviderInstances, clock: Clock, n: PhoneNumberRepository, s: Settings, log: Logger,
      check: CheckCredentials, events: EventPublisher | undefined) =>
      new UpdateTelephonyConfiguration(r, rd, registry, v, i, clock, n, s.publicUrl, log, check, events),
    [TelephonyConfigurationRepository, TelephonyConfigurationReader, CredentialVault, ProviderInstances, Clock, PhoneNumberRepository, SettingsToken, Logger, CheckCredentials,
      { serviceIdentifier: EventPublisher, optional: true }],
  ).inSingletonScope();
  c.bind(ListTelephonyConfigurations).toResolvedValue(
    (r: TelephonyConfigurationRepository, n: PhoneNumberRepository, rd: TelephonyConfigurationReader) => new ListTelephonyConfigurations(r, n, rd),
    [TelephonyConfigurationRepository, PhoneNumberRepository, TelephonyConfigurationReader],
  ).inSingletonScope();
  c.bind(GetTelephonyConfiguration).toResolvedValue((rd: TelephonyConfigurationReader) => new GetTelephonyConfiguration(rd), [TelephonyConfigurationReader]).inSingletonScope();
  c.bind(SetDefaultOutboundConfiguration).toResolvedValue(
    (r: TelephonyConfigurationRepository, rd: TelephonyConfigurationReader, clock: Clock) => new SetDefaultOutboundConfiguration(r, rd, clock),
    [TelephonyConfigurationRepository, TelephonyConfigurationReader, Clock],
  ).inSingletonScope();
  c.bind(DeleteTelephonyConfiguration).toResolvedValue(
    (r: TelephonyConfigurationRepository, n: PhoneNumberRepository, rd: TelephonyConfigurationReader, u: TelephonyConfigurationUsage, i: ProviderInstances, log: Logger,
      events: EventPublisher | undefined) =>
      new DeleteTelephonyConfiguration(r, n, rd, u, i, log, events),
    [TelephonyConfigurationRepository, PhoneNumberRepository, TelephonyConfigurationReader, TelephonyConfigurationUsage, ProviderInstances, Logger, { serviceIdentifier: EventPublisher, optional: true }],
  ).inSingletonScope();

  c.bind(PhoneNumberService).toResolvedValue(
    (n: PhoneNumberRepository, rd: TelephonyConfigurationReader, w: WorkflowRepository, e: EnsureWorkflowCanReceiveCalls, norm: PhoneAddressNormalizer, i: ProviderInstances, log: Logger, s: Settings,
      events: EventPublisher | undefined) =>
      new PhoneNumberService(n, rd, w, e, norm, i, log, s.publicUrl, events),
    [PhoneNumberRepository, TelephonyConfigurationReader, WorkflowRepository, EnsureWorkflowCanReceiveCalls, PhoneAddressNormalizer, ProviderInstances, Logger, SettingsToken,
      { serviceIdentifier: EventPublisher, optional: true }],
  ).inSingletonScope();
  c.bind(CreatePhoneNumber).toResolvedValue((s: PhoneNumberService, clock: Clock) => new CreatePhoneNumber(s, clock), [PhoneNumberService, Clock]).inSingletonScope();
  c.bind(UpdatePhoneNumber).toResolvedValue((s: PhoneNumberService, clock: Clock) => new UpdatePhoneNumber(s, clock), [PhoneNumberService, Clock]).inSingletonScope();
  c.bind(GetPhoneNumber).toResolvedValue((s: PhoneNumberService) => new GetPhoneNumber(s), [PhoneNumberService]).inSingletonScope();
  c.bind(ListPhoneNumbers).toResolvedValue((s: PhoneNumberService) => new ListPhoneNumbers(s), [PhoneNumberService]).inSingletonScope();
  c.bind(DeletePhoneNumber).toResolvedValue((s: PhoneNumberService) => new DeletePhoneNumber(s), [PhoneNumberService]).inSingletonScope();
  c.bind(SetDefaultCallerId).toResolvedValue((s: PhoneNumberService, clock: Clock) => new SetDefaultCallerId(s, clock), [PhoneNumberService, Clock]).inSingletonScope();

  c.bind(HandleStatusWebhook).toResolvedValue(
    (runs: RunRepository, cfg: TelephonyConfigurationRepository, i: ProviderInstances, apply: ApplyCallStatus, log: Logger) => new HandleStatusWebhook(registry, runs, cfg, i, apply, log),
    [RunRepository, TelephonyConfigurationRepository, ProviderInstances, ApplyCallStatus, Logger],
  ).inSingletonScope();
  // every URL a provider is given, the media one signed (MediaTokens: the media module)
  c.bind(CallUrls).toResolvedValue((s: Settings, tokens: MediaTokens) => new CallUrls(s.publicUrl, tokens), [SettingsToken, MediaTokens]).inSingletonScope();
  c.bind(PlaceOutboundCall).toResolvedValue(
    (runs: RunRepository, n: PhoneNumberRepository, i: ProviderInstances, urls: CallUrls, clock: Clock) => new PlaceOutboundCall(runs, n, i, urls, clock),
    [RunRepository, PhoneNumberRepository, ProviderInstances, CallUrls, Clock],
  ).inSingletonScope();
  c.bind(HandleInboundWebhook).toResolvedValue(
    (cfg: TelephonyConfigurationRepository, i: ProviderInstances, receive: ReceiveInboundCall, urls: CallUrls, log: Logger, listeners: CallOutcomeListeners) =>
      new HandleInboundWebhook(registry, cfg, i, receive, urls, log, listeners),
    [TelephonyConfigurationRepository, ProviderInstances, ReceiveInboundCall, CallUrls, Logger, CallOutcomeListeners],
  ).inSingletonScope();

  c.bind(HttpRoutesToken).toResolvedValue(
    (create: CreateTelephonyConfiguration, update: UpdateTelephonyConfiguration, list: ListTelephonyConfigurations, get: GetTelephonyConfiguration,
      remove: DeleteTelephonyConfiguration, setDefaultOutbound: SetDefaultOutboundConfiguration) =>
      telephonyRoutes({ create, update, list, get, remove, setDefaultOutbound, configSchema: registry.configSchema(), providerIds: registry.ids(), metadata: () => registry.metadata() }),
    [CreateTelephonyConfiguration, UpdateTelephonyConfiguration, ListTelephonyConfigurations, GetTelephonyConfiguration, DeleteTelephonyConfiguration, SetDefaultOutboundConfiguration],
  );
  c.bind(HttpRoutesToken).toResolvedValue(
    (create: CreatePhoneNumber, get: GetPhoneNumber, list: ListPhoneNumbers, update: UpdatePhoneNumber, remove: DeletePhoneNumber, setDefaultCaller: SetDefaultCallerId) =>
      phoneNumberRoutes({ create, get, list, update, remove, setDefaultCaller }),
    [CreatePhoneNumber, GetPhoneNumber, ListPhoneNumbers, UpdatePhoneNumber, DeletePhoneNumber, SetDefaultCallerId],
  );
  c.bind(HttpRoutesToken).toResolvedValue(
    (status: HandleStatusWebhook, inbound: HandleInboundWebhook, s: Settings) => telephonyWebhookRoutes({ status, inbound, publicUrl: s.publicUrl }),
    [HandleStatusWebhook, HandleInboundWebhook, SettingsToken],
  );
  c.bind(AnswerOutboundCall).toResolvedValue(
    (runs: RunRepository, cfg: TelephonyConfigurationRepository, i: ProviderInstances, urls: CallUrls, log: Logger, listeners: CallOutcomeListeners) =>
      new AnswerOutboundCall(registry, runs, cfg, i, urls, log, listeners),
    [RunRepository, TelephonyConfigurationRepository, ProviderInstances, CallUrls, Logger, CallOutcomeListeners],
  ).inSingletonScope();
  c.bind(HttpRoutesToken).toResolvedValue(
    (answer: AnswerOutboundCall, s: Settings) => telephonyAnswerRoutes({ answer, publicUrl: s.publicUrl }),
    [AnswerOutboundCall, SettingsToken],
  );
}
