import type { Container } from 'inversify';
import { ApplyCallStatus } from '../../core/calls/apply-call-status.use-case.js';
import { CallOutcomeListeners } from '../../core/calls/call-outcome-listener.js';
import { PlaceOutboundCall } from '../../core/calls/place-outbound-call.use-case.js';
import { CampaignEngine } from '../../core/campaigns/campaign-engine.js';
import { AgentReadiness } from '../../core/campaigns/agent-readiness.js';
import { TelephonyProviderCatalog } from '../../core/ports/telephony-provider-catalog.port.js';
import { CampaignQueries, ChangeCampaignState, ContactSourceLoader, CreateCampaign, UpdateCampaign } from '../../core/campaigns/campaigns.use-case.js';
import { CampaignRepository } from '../../core/ports/campaign.repository.port.js';
import { EventPublisher } from '../../core/ports/event-publisher.port.js';
import { Clock } from '../../core/ports/clock.port.js';
import { ContactListParser } from '../../core/ports/contact-list-parser.port.js';
import { ContactSheetReader } from '../../core/ports/contact-sheet-reader.port.js';
import { TokenService } from '../../core/ports/crypto.port.js';
import { JobScheduler } from '../../core/ports/job-scheduler.port.js';
import { Logger } from '../../core/ports/logger.port.js';
import { ObjectStore } from '../../core/ports/object-store.port.js';
import { PhoneNumberRepository } from '../../core/ports/phone-number.repository.port.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import { TelephonyConfigurationUsage } from '../../core/ports/telephony-configuration-usage.port.js';
import { UploadRepository } from '../../core/ports/upload.repository.port.js';
import { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { RunViews } from '../../core/runs/runs.use-case.js';
import { ProviderInstances } from '../../core/telephony/provider-instances.js';
import { CreateUploadUrl, ReceiveUpload } from '../../core/uploads/uploads.use-case.js';
import { EnsureWorkflowCanReceiveCalls } from '../../core/workflows/ensure-workflow-can-receive-calls.use-case.js';
import { CsvContactListParser } from '../../adapters/contacts/csv-contact-list-parser.js';
import { GoogleSheetReader } from '../../adapters/contacts/google-sheet-reader.js';
import { campaignRoutes } from '../../http/routes/campaigns.routes.js';
import { uploadRoutes } from '../../http/routes/uploads.routes.js';
import type { Lifecycle } from '../lifecycle.js';
import type { Settings } from '../settings.js';
import { HttpRoutesToken, LifecycleToken } from '../tokens.js';

/**
 * Uploads, campaigns and the dispatch engine. Needs the campaign/upload repositories (storage module), the
 * telephony module (configurations, numbers, provider instances, the status path) and a JobScheduler (scheduler
 * module); without them nothing is registered. Call after the telephony module and before the scheduler module.
 * Binds the campaign storage as the telephony feature's `TelephonyConfigurationUsage` (the "in use" check).
 */
export function campaignsModule(c: Container, settings: Settings): void {
  const needed = [CampaignRepository, UploadRepository, TelephonyConfigurationRepository, PhoneNumberRepository, ProviderInstances, ApplyCallStatus, RunViews, PlaceOutboundCall];
  if (!needed.every((t) => c.isBound(t))) return;

  const usage = (campaigns: CampaignRepository): TelephonyConfigurationUsage => ({
    countActiveCampaignsUsingConfiguration: (organizationId, configurationId) => campaigns.countActiveUsingTelephonyConfiguration(organizationId, configurationId),
  });
  (c.isBound(TelephonyConfigurationUsage) ? c.rebind<TelephonyConfigurationUsage>(TelephonyConfigurationUsage) : c.bind<TelephonyConfigurationUsage>(TelephonyConfigurationUsage)).toResolvedValue(usage, [CampaignRepository]).inSingletonScope();

  if (!c.isBound(ContactListParser)) c.bind(ContactListParser).toConstantValue(new CsvContactListParser());
  c.bind(ContactSheetReader).toConstantValue(new GoogleSheetReader(settings.googleSheetsBaseUrl));
  c.bind(ContactSourceLoader).toResolvedValue(
    (store: ObjectStore, sheets: ContactSheetReader, parser: ContactListParser) => new ContactSourceLoader(store, sheets, parser),
    [ObjectStore, ContactSheetReader, ContactListParser],
  ).inSingletonScope();

  const timing = settings.campaignEngine;
  c.bind(CampaignEngine).toResolvedValue(
    (campaigns: CampaignRepository, ensure: EnsureWorkflowCanReceiveCalls, runs: RunRepository, configurations: TelephonyConfigurationRepository,
      calls: PlaceOutboundCall, providers: ProviderInstances, statuses: ApplyCallStatus, listeners: CallOutcomeListeners, scheduler: JobScheduler,
      clock: Clock, log: Logger, lifecycle: Lifecycle, events: EventPublisher | undefined) => {
      const engine = new CampaignEngine(campaigns, ensure, runs, { configurations, calls, providers, statuses }, scheduler, clock, log.child({ component: 'campaign-engine' }), {
        leaseMs: timing.leaseMs, reconcileAfterMs: timing.reconcileAfterMs, maxCallMs: timing.maxCallMs,
        sweepIntervalMs: timing.sweepIntervalMs, ringTimeoutSeconds: 30, runsDispatch: settings.role !== 'api',
      }, events);
      listeners.add(engine);
      engine.defineJobs();
      lifecycle.onStop('campaign-engine', () => engine.stop());
      return engine;
    },
    [CampaignRepository, EnsureWorkflowCanReceiveCalls, RunRepository, TelephonyConfigurationRepository, PlaceOutboundCall, ProviderInstances,
      ApplyCallStatus, CallOutcomeListeners, JobScheduler, Clock, Logger, LifecycleToken, { serviceIdentifier: EventPublisher, optional: true }],
  ).inSingletonScope();
  // the engine exists in every role (its outcome listener, its jobs); workers also sweep and dispatch
  c.get<Lifecycle>(LifecycleToken).onStart('campaign-engine', async () => {
    const engine = c.get<CampaignEngine>(CampaignEngine);
    if (settings.role !== 'api') await engine.start();
  });

  c.bind(CreateCampaign).toResolvedValue(
    (r: CampaignRepository, e: EnsureWorkflowCanReceiveCalls, t: TelephonyConfigurationRepository, s: ContactSourceLoader, clock: Clock) => new CreateCampaign(r, e, t, s, clock),
    [CampaignRepository, EnsureWorkflowCanReceiveCalls, TelephonyConfigurationRepository, ContactSourceLoader, Clock],
  ).inSingletonScope();
  c.bind(UpdateCampaign).toResolvedValue((r: CampaignRepository, clock: Clock) => new UpdateCampaign(r, clock), [CampaignRepository, Clock]).inSingletonScope();
  c.bind(CampaignQueries).toResolvedValue(
    (r: CampaignRepository, w: WorkflowRepository, t: TelephonyConfigurationRepository, runs: RunRepository, v: RunViews) => new CampaignQueries(r, w, t, runs, v),
    [CampaignRepository, WorkflowRepository, TelephonyConfigurationRepository, RunRepository, RunViews],
  ).inSingletonScope();
  c.bind(ChangeCampaignState).toResolvedValue(
    (r: CampaignRepository, e: EnsureWorkflowCanReceiveCalls, t: TelephonyConfigurationRepository, engine: CampaignEngine, clock: Clock, carriers: TelephonyProviderCatalog,
      events: EventPublisher | undefined) =>
      new ChangeCampaignState(r, e, t, engine, clock, new AgentReadiness(carriers), events),
    [CampaignRepository, EnsureWorkflowCanReceiveCalls, TelephonyConfigurationRepository, CampaignEngine, Clock, TelephonyProviderCatalog,
      { serviceIdentifier: EventPublisher, optional: true }],
  ).inSingletonScope();
  c.bind(CreateUploadUrl).toResolvedValue(
    (s: ObjectStore, u: UploadRepository, t: TokenService, clock: Clock) => new CreateUploadUrl(s, u, t, clock), [ObjectStore, UploadRepository, TokenService, Clock],
  ).inSingletonScope();
  c.bind(ReceiveUpload).toResolvedValue((s: ObjectStore, u: UploadRepository, clock: Clock) => new ReceiveUpload(s, u, clock), [ObjectStore, UploadRepository, Clock]).inSingletonScope();

  c.bind(HttpRoutesToken).toResolvedValue(
    (create: CreateCampaign, update: UpdateCampaign, queries: CampaignQueries, states: ChangeCampaignState) => campaignRoutes({ create, update, queries, states }),
    [CreateCampaign, UpdateCampaign, CampaignQueries, ChangeCampaignState],
  );
  c.bind(HttpRoutesToken).toResolvedValue(
    (createUploadUrl: CreateUploadUrl, receiveUpload: ReceiveUpload) => uploadRoutes({ createUploadUrl, receiveUpload }), [CreateUploadUrl, ReceiveUpload],
  );
}
