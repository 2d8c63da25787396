import { campaignEventKey, type EventPublisher, type PendingEvent } from '../ports/event-publisher.port.js';
import { ConflictError, InputError, NotFoundError, ValidationError } from '../errors.js';
import type { CampaignRepository, NewContact } from '../ports/campaign.repository.port.js';
import type { Clock } from '../ports/clock.port.js';
import type { ContactListParser, ContactListParseResult } from '../ports/contact-list-parser.port.js';
import type { ContactSheetReader } from '../ports/contact-sheet-reader.port.js';
import { isValidObjectKey, type ObjectStore } from '../ports/object-store.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import type { WorkflowRepository } from '../ports/workflow.repository.port.js';
import type { RunPageView, RunViews } from '../runs/runs.use-case.js';
import type { EnsureWorkflowCanReceiveCalls } from '../workflows/ensure-workflow-can-receive-calls.use-case.js';
import {
  DEFAULT_CIRCUIT_BREAKER, DEFAULT_MAX_CONCURRENCY, DEFAULT_RETRY_CONFIG, EDITABLE_STATES, TRANSITIONS, type Campaign, type CampaignAction,
  type CampaignLogEntry, type CampaignState, type CircuitBreakerConfig, type RetryConfig, type SourceType,
} from './campaign.js';
import { convertTimeSlots, parseScheduleConfig, type ScheduleConfig } from './schedule.js';
import type { AgentReadiness } from './agent-readiness.js';

/** At most this many log entries in a campaign response (API.md section 6). */
export const CAMPAIGN_LOG_LIMIT = 100;

/** A campaign with what the API adds. */
export interface CampaignView {
  campaign: Campaign;
  workflowName: string | null;
  telephonyConfigurationName: string | null;
  /** Newest last, at most CAMPAIGN_LOG_LIMIT. */
  logs: CampaignLogEntry[];
}

/** Scheduling input: `schedule_config`, or the `time_slots` alias with its optional `timezone`. */
export interface ScheduleInput {
  scheduleConfig?: unknown;
  timeSlots?: unknown;
  timezone?: string | null;
}

export interface CreateCampaignInput extends ScheduleInput {
  name: string;
  workflowId: number;
  sourceType: SourceType;
  sourceId: string;
  telephonyConfigurationId?: number | null;
  retryConfig?: Partial<RetryConfig> | null;
  maxConcurrency?: number | null;
  circuitBreaker?: Partial<CircuitBreakerConfig> | null;
}

export interface UpdateCampaignInput extends ScheduleInput {
  name?: string | null;
  retryConfig?: Partial<RetryConfig> | null;
  maxConcurrency?: number | null;
  circuitBreaker?: Partial<CircuitBreakerConfig> | null;
}

/** What the engine offers the use cases: make a running campaign dispatch now. */
export interface CampaignDispatchTrigger {
  /** Resolves once dispatch is under way (in this process) or scheduled (for a worker). Never throws. */
  kick(organizationId: number, campaignId: number): Promise<void>;
}

export const campaignNotFound = () => new NotFoundError('campaign_not_found', 'Campaign not found');
const entry = (ts: Date, event: string, message: string, details: Record<string, unknown> = {}, level: CampaignLogEntry['level'] = 'info'): CampaignLogEntry =>
  ({ ts, level, event, message, details });

/**
 * `schedule_config` from either form (API.md section 6): both forms → 422; `schedule_config: null` → no schedule
 * (`null`); neither → `undefined` (unchanged / none).
 */
export function resolveSchedule(input: ScheduleInput): ScheduleConfig | null | undefined {
  const hasAlias = input.timeSlots !== undefined && input.timeSlots !== null;
  const hasConfig = input.scheduleConfig !== undefined && input.scheduleConfig !== null;
  if (hasAlias && hasConfig) {
    throw new ValidationError([{
      loc: ['body', 'time_slots'], msg: 'Value error, send either schedule_config or time_slots (with timezone), not both', type: 'value_error',
    }]);
  }
  if (hasAlias) return convertTimeSlots(input.timeSlots, input.timezone ?? null);
  if (hasConfig) return parseScheduleConfig(input.scheduleConfig, ['body', 'schedule_config']);
  return input.scheduleConfig === null ? null : undefined;
}

/** The key prefix of an organization's uploads. */
export const uploadPrefix = (organizationId: number) => `uploads/${organizationId}/`;

/** Drops undefined/null members so they take the defaults (or keep the stored values). */
function defined<T extends object>(value: Partial<T> | null | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(value ?? {}).filter(([, v]) => v !== undefined && v !== null)) as Partial<T>;
}

/** Reads a campaign's contact list: an uploaded CSV of the caller's organization, or a Google Sheet. */
export class ContactSourceLoader {
  constructor(
    private readonly store: ObjectStore,
    private readonly sheets: ContactSheetReader,
    private readonly parser: ContactListParser,
  ) {}

  async load(organizationId: number, sourceType: SourceType, sourceId: string): Promise<ContactListParseResult> {
    if (sourceType === 'google-sheet') return this.parser.parse(await this.sheets.open(sourceId));
    const key = sourceId.trim();
    // a key of another organization is reported exactly like a missing one
    if (!key.startsWith(uploadPrefix(organizationId)) || !isValidObjectKey(key)) {
      throw new InputError('invalid_source', 'source_id is not a file_key of an upload of your organization');
    }
    const body = await this.store.get(key);
    if (!body) throw new InputError('invalid_source', 'Nothing was uploaded under this file_key; PUT the file to its upload_url first');
    return this.parser.parse(body);
  }
}

export class CreateCampaign {
  constructor(
    private readonly campaigns: CampaignRepository,
    private readonly ensureWorkflow: Pick<EnsureWorkflowCanReceiveCalls, 'execute'>,
    private readonly configurations: Pick<TelephonyConfigurationRepository, 'get' | 'getDefaultOutbound'>,
    private readonly sources: ContactSourceLoader,
    private readonly clock: Clock,
  ) {}

  async execute(organizationId: number, input: CreateCampaignInput): Promise<Campaign> {
    const scheduleConfig = resolveSchedule(input) ?? null;
    await this.ensureWorkflow.execute(organizationId, input.workflowId);
    let configurationId: number;
    if (input.telephonyConfigurationId !== undefined && input.telephonyConfigurationId !== null) {
      const c = await this.configurations.get(organizationId, input.telephonyConfigurationId);
      if (!c) throw new InputError('telephony_configuration_not_found', 'telephony_configuration_not_found');
      configurationId = c.id;
    } else {
      const c = await this.configurations.getDefaultOutbound(organizationId);
      if (!c) {
        throw new InputError('no_default_telephony_configuration',
          'No telephony_configuration_id was given and the organization has no default outbound telephony configuration');
      }
      configurationId = c.id;
    }
    const parsed = await this.sources.load(organizationId, input.sourceType, input.sourceId);
    const now = this.clock.now();
    const contacts: NewContact[] = parsed.contacts.map((c) => ({ row: c.row, phoneNumber: c.phoneNumber, context: c.context }));
    const logs = [entry(now, 'campaign_created', `Campaign created with ${contacts.length} contacts`, {
      total_rows: contacts.length, source_type: input.sourceType, columns: parsed.columns,
    })];
    if (parsed.duplicatesSkipped > 0) {
      logs.push(entry(now, 'duplicates_skipped', `${parsed.duplicatesSkipped} rows repeat an earlier phone number and were skipped`, {
        count: parsed.duplicatesSkipped, rows: parsed.duplicateRows.slice(0, 100),
      }, 'warning'));
    }
    return this.campaigns.create(organizationId, {
      name: input.name, workflowId: input.workflowId, telephonyConfigurationId: configurationId, sourceType: input.sourceType,
      sourceId: input.sourceId.trim(), retryConfig: { ...DEFAULT_RETRY_CONFIG, ...defined(input.retryConfig) },
      maxConcurrency: input.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY, scheduleConfig,
      circuitBreaker: { ...DEFAULT_CIRCUIT_BREAKER, ...defined(input.circuitBreaker) }, contacts, logs, now,
    });
  }
}

/** Campaign reads with names and logs. */
export class CampaignQueries {
  constructor(
    private readonly campaigns: CampaignRepository,
    private readonly workflows: Pick<WorkflowRepository, 'get' | 'getMany'>,
    private readonly configurations: Pick<TelephonyConfigurationRepository, 'get' | 'list'>,
    private readonly runs: Pick<RunRepository, 'listByCampaign'>,
    private readonly runViews: Pick<RunViews, 'view'>,
  ) {}

  async view(campaign: Campaign): Promise<CampaignView> {
    const [workflow, configuration, logs] = await Promise.all([
      this.workflows.get(campaign.organizationId, campaign.workflowId),
      campaign.telephonyConfigurationId === null ? null : this.configurations.get(campaign.organizationId, campaign.telephonyConfigurationId),
      this.campaigns.listLogs(campaign.organizationId, campaign.id, CAMPAIGN_LOG_LIMIT),
    ]);
    return { campaign, workflowName: workflow?.name ?? null, telephonyConfigurationName: configuration?.name ?? null, logs };
  }

  async get(organizationId: number, campaignId: number): Promise<CampaignView> {
    const c = await this.campaigns.get(organizationId, campaignId);
    if (!c) throw campaignNotFound();
    return this.view(c);
  }

  async list(organizationId: number, filter: { state?: CampaignState } = {}): Promise<CampaignView[]> {
    const list = await this.campaigns.list(organizationId, filter);
    const [workflows, configurations] = await Promise.all([
      this.workflows.getMany(organizationId, [...new Set(list.map((c) => c.workflowId))]),
      this.configurations.list(organizationId),
    ]);
    const wf = new Map(workflows.map((w) => [w.id, w.name]));
    const cf = new Map(configurations.map((c) => [c.id, c.name]));
    return Promise.all(list.map(async (campaign) => ({
      campaign,
      workflowName: wf.get(campaign.workflowId) ?? null,
      telephonyConfigurationName: campaign.telephonyConfigurationId === null ? null : (cf.get(campaign.telephonyConfigurationId) ?? null),
      logs: await this.campaigns.listLogs(organizationId, campaign.id, CAMPAIGN_LOG_LIMIT),
    })));
  }

  /** The campaign's runs, newest first. 404 `campaign_not_found` when absent or in another organization. */
  async runsOf(organizationId: number, campaignId: number, page: { page: number; limit: number }): Promise<RunPageView> {
    if (!(await this.campaigns.get(organizationId, campaignId))) throw campaignNotFound();
    const p = await this.runs.listByCampaign(organizationId, campaignId, page);
    return {
      runs: await Promise.all(p.runs.map((r) => this.runViews.view(r))), totalCount: p.totalCount, page: page.page, limit: page.limit,
      totalPages: Math.ceil(p.totalCount / page.limit),
    };
  }
}

/** PATCH: only in draft or paused (409 `campaign_not_editable`); objects merge into the stored ones. */
export class UpdateCampaign {
  constructor(
    private readonly campaigns: CampaignRepository,
    private readonly clock: Clock,
  ) {}

  async execute(organizationId: number, campaignId: number, input: UpdateCampaignInput): Promise<Campaign> {
    const current = await this.campaigns.get(organizationId, campaignId);
    if (!current) throw campaignNotFound();
    const notEditable = () => new ConflictError('campaign_not_editable', `A ${current.state} campaign cannot be changed; only draft or paused campaigns can (pause it first)`);
    if (!EDITABLE_STATES.includes(current.state)) throw notEditable();
    const scheduleConfig = resolveSchedule(input);
    const patch = {
      now: this.clock.now(),
      ...(input.name != null ? { name: input.name } : {}),
      ...(input.maxConcurrency != null ? { maxConcurrency: input.maxConcurrency } : {}),
      ...(input.retryConfig != null ? { retryConfig: { ...current.retryConfig, ...defined(input.retryConfig) } } : {}),
      ...(input.circuitBreaker != null ? { circuitBreaker: { ...current.circuitBreaker, ...defined(input.circuitBreaker) } } : {}),
      ...(scheduleConfig !== undefined ? { scheduleConfig } : {}),
    };
    const { campaign, updated } = await this.campaigns.update(organizationId, campaignId, patch, EDITABLE_STATES);
    if (!campaign) throw campaignNotFound();
    if (!updated) throw notEditable();
    return campaign;
  }
}

const ACTION_LOG: Record<CampaignAction, { event: string; message: string }> = {
  start: { event: 'campaign_started', message: 'Campaign started' },
  resume: { event: 'campaign_resumed', message: 'Campaign resumed' },
  pause: { event: 'campaign_paused', message: 'Campaign paused; calls in flight finish' },
  cancel: { event: 'campaign_cancelled', message: 'Campaign cancelled; queued contacts dropped, calls in flight finish' },
};

/**
 * start, pause, resume, cancel: the state table of API.md section 6; any other move 409 `invalid_state_transition`.
 * Moving to running also needs an active workflow, an existing configuration and, with `agentReadiness`, an agent
 * that can talk on that carrier (400 `agent_not_configured`, API.md 11); a refused move changes nothing.
 */
export class ChangeCampaignState {
  constructor(
    private readonly campaigns: CampaignRepository,
    private readonly ensureWorkflow: Pick<EnsureWorkflowCanReceiveCalls, 'execute'>,
    private readonly configurations: Pick<TelephonyConfigurationRepository, 'get'>,
    private readonly dispatch: CampaignDispatchTrigger,
    private readonly clock: Clock,
    private readonly agentReadiness?: AgentReadiness,
    /** Customer webhooks: start and resume publish `campaign.started`, pause `campaign.paused` (reason `paused_by_user`). */
    private readonly events?: EventPublisher,
  ) {}

  async execute(organizationId: number, campaignId: number, action: CampaignAction): Promise<Campaign> {
    const current = await this.campaigns.get(organizationId, campaignId);
    if (!current) throw campaignNotFound();
    const rule = TRANSITIONS[action];
    const invalid = (state: CampaignState) =>
      new ConflictError('invalid_state_transition', `Cannot ${action} a ${state} campaign (allowed from: ${rule.from.join(', ')})`);
    if (!rule.from.includes(current.state)) throw invalid(current.state);
    if (rule.to === 'running') {
      // an archived workflow gets no calls (API.md 7); a deleted configuration cannot place any
      const { workflow } = await this.ensureWorkflow.execute(organizationId, current.workflowId);
      const configuration = current.telephonyConfigurationId === null ? null : await this.configurations.get(organizationId, current.telephonyConfigurationId);
      if (!configuration) throw new InputError('telephony_configuration_not_found', 'telephony_configuration_not_found');
      this.agentReadiness?.assertCanTakeCalls(workflow, configuration.provider);
    }
    const now = this.clock.now();
    const log = ACTION_LOG[action];
    // the customer event's marker goes with the transition (one atomic step; docs/webhooks.md "Guarantees")
    const eventType = !this.events ? null : rule.to === 'running' ? 'campaign.started' : rule.to === 'paused' ? 'campaign.paused' : null;
    const pending: PendingEvent | undefined = eventType ? {
      key: campaignEventKey(campaignId, eventType, now), type: eventType, at: now, previousState: current.state,
      ...(eventType === 'campaign.paused' ? { reason: 'paused_by_user' } : {}),
    } : undefined;
    const { campaign, changed } = await this.campaigns.transition(organizationId, campaignId, {
      from: rule.from, to: rule.to, now, log: entry(now, log.event, log.message, { from: current.state }), ...(pending ? { event: pending } : {}),
    });
    if (!campaign) throw campaignNotFound();
    if (!changed) throw invalid(campaign.state);
    if (campaign.state === 'running') await this.dispatch.kick(organizationId, campaignId);
    const type = campaign.state === 'running' ? 'campaign.started' : campaign.state === 'paused' ? 'campaign.paused' : null;
    if (type && pending) {
      await this.events?.publish({
        type, organizationId, campaign, previousState: pending.previousState ?? current.state, ...(pending.reason ? { reason: pending.reason } : {}), pending,
      });
    }
    return campaign;
  }
}

