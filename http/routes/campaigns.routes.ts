import { ValidationError } from '../../core/errors.js';
import { CAMPAIGN_STATES, type CampaignAction } from '../../core/campaigns/campaign.js';
import type { CampaignQueries, CampaignView, ChangeCampaignState, CreateCampaign, UpdateCampaign } from '../../core/campaigns/campaigns.use-case.js';
import { defineRoutes } from '../routing/route.js';
import { anyObject, arr, bool, dateTime, id, int, nullable, num, obj, pagination, pathParams, str } from '../routing/schema-helpers.js';
import { presentRun, runSchema } from './workflows.routes.js';

export interface CampaignRouteDeps {
  create: CreateCampaign;
  update: UpdateCampaign;
  queries: CampaignQueries;
  states: ChangeCampaignState;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A campaign as spec 2.6 and API.md section 6 define it. */
export const presentCampaign = (v: CampaignView) => {
  const c = v.campaign;
  return {
    id: c.id, name: c.name, workflow_id: c.workflowId, workflow_name: v.workflowName, state: c.state, source_type: c.sourceType, source_id: c.sourceId,
    total_rows: c.totalRows, processed_rows: c.processedRows, failed_rows: c.failedRows, created_at: iso(c.createdAt), started_at: iso(c.startedAt),
    completed_at: iso(c.completedAt), retry_config: c.retryConfig, max_concurrency: c.maxConcurrency, schedule_config: c.scheduleConfig,
    circuit_breaker: c.circuitBreaker, executed_count: c.executedCount, total_queued_count: c.totalQueuedCount,
    parent_campaign_id: c.parentCampaignId, redialed_campaign_id: c.redialedCampaignId, telephony_configuration_id: c.telephonyConfigurationId,
    telephony_configuration_name: v.telephonyConfigurationName,
    logs: v.logs.map((l) => ({ ts: l.ts.toISOString(), level: l.level, event: l.event, message: l.message, details: l.details })),
  };
};

const retryConfigSchema = obj({
  enabled: bool(), max_retries: int({ minimum: 0, maximum: 10 }), retry_delay_seconds: int({ minimum: 30, maximum: 86400 }),
  retry_on_busy: bool(), retry_on_no_answer: bool(), retry_on_voicemail: bool(),
}, [], { additionalProperties: false, description: 'missing fields take the defaults (create) or keep their values (PATCH)' });
const breakerSchema = obj({
  enabled: bool(), failure_threshold: num({ exclusiveMinimum: 0, maximum: 1 }), window_seconds: int({ minimum: 10, maximum: 3600 }),
  min_calls_in_window: int({ minimum: 1, maximum: 1000 }),
}, [], { additionalProperties: false });
const scheduleInput = anyObject({
  description: '{enabled (default true), timezone (IANA, default UTC), slots: 1..50 of {day_of_week 0..6 (0 = Monday), start_time HH:MM, end_time HH:MM or 24:00}}',
});
const timeSlots = arr(anyObject({ properties: { day: str(), start: str(), end: str() } }), {
  description: 'alias of schedule_config.slots: [{day: "monday", start: "09:00", end: "17:00"}] with a top-level timezone; not with schedule_config',
});
const logSchema = obj({ ts: dateTime(), level: str(), event: str(), message: str(), details: anyObject() }, ['ts', 'level', 'event', 'message', 'details']);
const STATE = { type: 'string', enum: [...CAMPAIGN_STATES] };

export const campaignSchema = obj({
  id: id(), name: str(), workflow_id: id(), workflow_name: nullable(str()), state: STATE, source_type: { type: 'string', enum: ['csv', 'google-sheet'] },
  source_id: str(), total_rows: nullable(int()), processed_rows: int(), failed_rows: int(), created_at: dateTime(), started_at: nullable(dateTime()),
  completed_at: nullable(dateTime()), retry_config: retryConfigSchema, max_concurrency: nullable(int()), schedule_config: nullable(anyObject()),
  circuit_breaker: breakerSchema, executed_count: int(), total_queued_count: int(), parent_campaign_id: nullable(id()),
  redialed_campaign_id: nullable(id()), telephony_configuration_id: nullable(id()), telephony_configuration_name: nullable(str()),
  logs: arr(logSchema, { description: 'newest last, at most the latest 100' }),
}, ['id', 'name', 'workflow_id', 'workflow_name', 'state', 'source_type', 'source_id', 'total_rows', 'processed_rows', 'failed_rows', 'created_at',
  'started_at', 'completed_at', 'retry_config', 'executed_count', 'total_queued_count', 'logs']);

const editable = {
  retry_config: nullable(retryConfigSchema), max_concurrency: nullable(int({ minimum: 1, maximum: 100 })), schedule_config: nullable(scheduleInput),
  circuit_breaker: nullable(breakerSchema), time_slots: nullable(timeSlots), timezone: nullable(str({ maxLength: 64 })),
};

const ACTIONS: Array<{ action: CampaignAction; summary: string; description: string }> = [
  { action: 'start', summary: 'Start (draft or paused → running)', description: 'Dialing begins, up to max_concurrency calls at once.' },
  { action: 'pause', summary: 'Pause (running → paused)', description: 'No new calls; calls in flight run to completion.' },
  { action: 'resume', summary: 'Resume (paused → running)', description: 'Dialing continues; the circuit breaker window starts afresh.' },
  { action: 'cancel', summary: 'Cancel (draft, running or paused → cancelled)', description: 'Queued contacts are dropped; calls in flight finish.' },
];

export function campaignRoutes(d: CampaignRouteDeps) {
  return defineRoutes([
    {
      method: 'post', path: '/campaign/create', operationId: 'createCampaign', summary: 'Create a campaign (state draft) from an uploaded CSV or a Google Sheet',
      tags: ['campaigns'], auth: 'any',
      description: 'The contact list is parsed now: `total_rows` is the number of contacts queued (repeated numbers dialed once, logged as ' +
        '`duplicates_skipped`); a file breaking the CSV rules is 400 `invalid_source`. `source_url` is read as `source_id`; `time_slots` ' +
        '(+ `timezone`) is converted into `schedule_config` (both forms: 422).',
      body: obj({
        name: str({ minLength: 1, maxLength: 255 }), workflow_id: id(), source_type: { type: 'string', enum: ['csv', 'google-sheet'] },
        source_id: str({ minLength: 1, maxLength: 2048, description: 'the upload file_key (csv) or the sheet URL (google-sheet)' }),
        source_url: str({ minLength: 1, maxLength: 2048, description: 'alias of source_id' }),
        telephony_configuration_id: nullable(id({ description: 'default: the organization default outbound configuration' })), ...editable,
      }, ['name', 'workflow_id', 'source_type'], {
        additionalProperties: false,
        // source_id or its alias: checked with the other fields, so every missing field is reported at once
        anyOf: [{ required: ['source_id'] }, { required: ['source_url'] }],
      }),
      response: campaignSchema, errors: [400],
      handler: async ({ principal, body }) => {
        const sourceId = body.source_id ?? body.source_url;
        if (sourceId === undefined) throw new ValidationError([{ loc: ['body', 'source_id'], msg: 'Field required', type: 'missing' }]);
        const campaign = await d.create.execute(principal.organizationId, {
          name: body.name, workflowId: body.workflow_id, sourceType: body.source_type, sourceId, telephonyConfigurationId: body.telephony_configuration_id,
          retryConfig: body.retry_config, maxConcurrency: body.max_concurrency, circuitBreaker: body.circuit_breaker,
          scheduleConfig: body.schedule_config, timeSlots: body.time_slots, timezone: body.timezone,
        });
        return presentCampaign(await d.queries.view(campaign));
      },
    },
    {
      method: 'get', path: '/campaign', operationId: 'listCampaigns', summary: "The organization's campaigns, newest first", tags: ['campaigns'], auth: 'any',
      query: obj({ state: STATE }),
      response: obj({ campaigns: arr(campaignSchema) }, ['campaigns']),
      handler: async ({ principal, query }) => ({ campaigns: (await d.queries.list(principal.organizationId, { state: query.state })).map(presentCampaign) }),
    },
    {
      method: 'get', path: '/campaign/{campaign_id}', operationId: 'getCampaign', summary: 'A campaign with its counters and latest logs', tags: ['campaigns'],
      auth: 'any', params: pathParams('campaign_id'), response: campaignSchema, errors: [404],
      handler: async ({ principal, params }) => presentCampaign(await d.queries.get(principal.organizationId, params.campaign_id)),
    },
    {
      method: 'patch', path: '/campaign/{campaign_id}', operationId: 'updateCampaign', summary: 'Change a draft or paused campaign', tags: ['campaigns'],
      auth: 'any', params: pathParams('campaign_id'),
      description: 'Only in draft or paused (else 409 `campaign_not_editable`). `retry_config` and `circuit_breaker` merge into the stored ones; ' +
        '`schedule_config: null` removes the schedule.',
      body: obj({ name: nullable(str({ minLength: 1, maxLength: 255 })), ...editable }, [], { additionalProperties: false }),
      response: campaignSchema, errors: [404, 409],
      handler: async ({ principal, params, body }) => {
        const campaign = await d.update.execute(principal.organizationId, params.campaign_id, {
          name: body.name, retryConfig: body.retry_config, maxConcurrency: body.max_concurrency, circuitBreaker: body.circuit_breaker,
          scheduleConfig: body.schedule_config, timeSlots: body.time_slots, timezone: body.timezone,
        });
        return presentCampaign(await d.queries.view(campaign));
      },
    },
    ...ACTIONS.map(({ action, summary, description }) => ({
      method: 'post' as const, path: `/campaign/{campaign_id}/${action}`, operationId: `${action}Campaign`, summary, tags: ['campaigns'], auth: 'any' as const,
      description: `${description} Any other move: 409 \`invalid_state_transition\`.`, params: pathParams('campaign_id'), bodyOptional: true,
      body: obj({}, [], { additionalProperties: false }), response: campaignSchema, errors: [400, 404, 409],
      handler: async ({ principal, params }: { principal: { organizationId: number }; params: { campaign_id: number } }) => {
        const campaign = await d.states.execute(principal.organizationId, params.campaign_id, action);
        return presentCampaign(await d.queries.view(campaign));
      },
    })),
    {
      method: 'get', path: '/campaign/{campaign_id}/runs', operationId: 'listCampaignRuns', summary: "The campaign's calls (runs), newest first",
      tags: ['campaigns'], auth: 'any', params: pathParams('campaign_id'), query: obj({ ...pagination }),
      response: obj({ runs: arr(runSchema), total_count: int({ minimum: 0 }), page: int({ minimum: 1 }), limit: int({ minimum: 1 }), total_pages: int({ minimum: 0 }) },
        ['runs', 'total_count', 'page', 'limit', 'total_pages']),
      errors: [404],
      handler: async ({ principal, params, query }) => {
        const p = await d.queries.runsOf(principal.organizationId, params.campaign_id, { page: query.page, limit: query.limit });
        return { runs: p.runs.map(presentRun), total_count: p.totalCount, page: p.page, limit: p.limit, total_pages: p.totalPages };
      },
    },
  ]);
}
