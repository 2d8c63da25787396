import { isRunCompleted } from '../../core/runs/run.js';
import type { GetWorkflowRun, ListWorkflowRuns, RunView } from '../../core/runs/runs.use-case.js';
import type { WorkflowDefinitionVersion, WorkflowView } from '../../core/workflows/workflow.js';
import { workflowDefinitionSchema } from '../../core/workflows/workflow-definition.schema.js';
import { workflowConfigurationsSchema } from '../../core/workflows/workflow-configurations.js';
import {
  WORKFLOW_NAME_MAX_LENGTH,
  type CreateWorkflow,
  type GetWorkflow,
  type ListWorkflows,
  type ListWorkflowVersions,
  type SetWorkflowStatus,
  type UpdateWorkflow,
} from '../../core/workflows/workflows.use-case.js';
import { defineRoutes, type JsonSchema } from '../routing/route.js';
import { anyObject, arr, bool, dateTime, id, int, nonBlank, nullable, num, obj, pagination, pathParams, str } from '../routing/schema-helpers.js';

export interface WorkflowRouteDeps {
  createWorkflow: CreateWorkflow;
  updateWorkflow: UpdateWorkflow;
  setWorkflowStatus: SetWorkflowStatus;
  getWorkflow: GetWorkflow;
  listWorkflows: ListWorkflows;
  listWorkflowVersions: ListWorkflowVersions;
  getWorkflowRun: GetWorkflowRun;
  listWorkflowRuns: ListWorkflowRuns;
}

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

/** A workflow as API.md section 7 / spec 2.7 define it. */
export const presentWorkflow = (v: WorkflowView) => ({
  id: v.workflow.id,
  name: v.workflow.name,
  status: v.workflow.status,
  created_at: iso(v.workflow.createdAt),
  workflow_definition: v.current.definition,
  current_definition_id: v.current.id,
  template_context_variables: v.workflow.templateContextVariables,
  call_disposition_codes: { disposition_codes: v.dispositionCodes },
  total_runs: v.totalRuns,
  workflow_configurations: v.workflow.workflowConfigurations,
  version_number: v.current.versionNumber,
  version_status: v.current.status,
  workflow_uuid: v.workflow.workflowUuid,
});

export const presentVersion = (d: WorkflowDefinitionVersion) => ({
  id: d.id,
  workflow_id: d.workflowId,
  version_number: d.versionNumber,
  version_status: d.status,
  workflow_definition: d.definition,
  created_at: iso(d.createdAt),
});

/** A run as spec 2.8 + API.md section 7 define it. `logs` is an object (spec 2.8): `{entries: [...]}`. */
export const presentRun = (v: RunView) => ({
  id: v.run.id,
  workflow_id: v.run.workflowId,
  name: v.run.name,
  mode: v.run.mode,
  created_at: iso(v.run.createdAt),
  is_completed: isRunCompleted(v.run),
  transcript_url: v.transcriptUrl,
  recording_url: v.recordingUrl,
  cost_info: {
    call_duration_seconds: v.run.costInfo.call_duration_seconds,
    service_token_usage: v.run.costInfo.service_token_usage,
    charge_usd: v.run.costInfo.charge_usd,
  },
  definition_id: v.run.definitionId,
  initial_context: v.initialContext,
  gathered_context: v.gatheredContext,
  logs: { entries: v.run.logs },
  annotations: v.run.annotations,
  campaign_id: v.run.campaignId,
  status: v.run.status,
  disposition: v.run.disposition,
  duration_seconds: v.run.durationSeconds,
  started_at: isoOrNull(v.run.startedAt),
  ended_at: isoOrNull(v.run.endedAt),
});

const definitionSchema = workflowDefinitionSchema as unknown as JsonSchema;
const configurationsSchema = workflowConfigurationsSchema as unknown as JsonSchema;
const statusEnum = { type: 'string', enum: ['active', 'archived'] };
const name = nonBlank({ maxLength: WORKFLOW_NAME_MAX_LENGTH, description: 'a non-blank name' });

const workflowSchema = obj(
  {
    id: id(), name: str(), status: statusEnum, created_at: dateTime(), workflow_definition: definitionSchema,
    current_definition_id: id(), template_context_variables: anyObject(),
    call_disposition_codes: obj({ disposition_codes: arr(str()) }, ['disposition_codes']),
    total_runs: int({ minimum: 0 }), workflow_configurations: anyObject({ description: 'As sent (API.md 11); see the create body for its known keys' }), version_number: int({ minimum: 1 }),
    version_status: { type: 'string', enum: ['published', 'superseded'] }, workflow_uuid: str({ format: 'uuid' }),
  },
  ['id', 'name', 'status', 'created_at', 'workflow_definition', 'current_definition_id', 'template_context_variables',
    'call_disposition_codes', 'total_runs', 'workflow_configurations', 'version_number', 'version_status', 'workflow_uuid'],
);

const versionSchema = obj(
  {
    id: id({ description: 'the definition id (what runs record as definition_id)' }), workflow_id: id(), version_number: int({ minimum: 1 }),
    version_status: { type: 'string', enum: ['published', 'superseded'] }, workflow_definition: definitionSchema, created_at: dateTime(),
  },
  ['id', 'workflow_id', 'version_number', 'version_status', 'workflow_definition', 'created_at'],
);

export const runSchema = obj(
  {
    id: id(), workflow_id: id(), name: str(), mode: { type: 'string', enum: ['inbound', 'outbound'] }, created_at: dateTime(),
    is_completed: bool(), transcript_url: nullable(str({ description: 'signed download URL, valid 3600 s' })),
    recording_url: nullable(str({ description: 'signed download URL, valid 3600 s' })),
    cost_info: obj({ call_duration_seconds: num(), service_token_usage: num(), charge_usd: num() }, ['call_duration_seconds', 'service_token_usage', 'charge_usd']),
    definition_id: id(), initial_context: anyObject({ description: 'includes caller_number and called_number for phone calls' }),
    gathered_context: anyObject({ description: 'includes mapped_call_disposition once known' }),
    logs: obj({ entries: arr(anyObject({ properties: { ts: str(), event: str(), message: str(), details: anyObject() } })) }, ['entries']),
    annotations: anyObject(), campaign_id: nullable(id()),
    status: { type: 'string', enum: ['queued', 'ringing', 'in_progress', 'completed', 'failed'] },
    disposition: nullable(str()), duration_seconds: nullable(num()), started_at: nullable(dateTime()), ended_at: nullable(dateTime()),
  },
  ['id', 'workflow_id', 'name', 'mode', 'created_at', 'is_completed', 'transcript_url', 'recording_url', 'cost_info', 'definition_id',
    'initial_context', 'gathered_context', 'logs', 'annotations', 'campaign_id', 'status', 'disposition', 'duration_seconds', 'started_at', 'ended_at'],
);

const DEFINITION_RULES =
  'The definition is validated on every create and update (structure, then the graph rules of API.md 7); each violation ' +
  'is a 422 item whose `loc` points at the node or edge (`["body","workflow_definition","edges",2,"target"]`). ' +
  'workflow_configurations (API.md 11): known keys validated (422 under `["body","workflow_configurations",...]`), unknown keys kept; ' +
  'each llm/stt/tts `service_id` must be an AI service of your organization offering that kind (400 `ai_service_not_found` / `ai_service_kind_mismatch`).';

export function workflowRoutes(d: WorkflowRouteDeps) {
  return defineRoutes([
    {
      method: 'post', path: '/workflow/create/definition', operationId: 'createWorkflow', summary: 'Create a workflow (agent)', tags: ['workflows'], auth: 'any',
      description: `Creates an active workflow with definition version 1 and a new workflow_uuid. ${DEFINITION_RULES}`,
      body: obj(
        { name, workflow_definition: definitionSchema, template_context_variables: anyObject(), workflow_configurations: configurationsSchema },
        ['name', 'workflow_definition'], { additionalProperties: false },
      ),
      response: workflowSchema, errors: [400],
      handler: async ({ principal, body }) =>
        presentWorkflow(await d.createWorkflow.execute(principal.organizationId, {
          name: body.name, workflowDefinition: body.workflow_definition,
          templateContextVariables: body.template_context_variables, workflowConfigurations: body.workflow_configurations,
        })),
    },
    {
      method: 'put', path: '/workflow/{workflow_id}', operationId: 'updateWorkflow', summary: 'Change a workflow (only the fields sent)', tags: ['workflows'], auth: 'any',
      description:
        'Only the fields sent change. A workflow_definition different from the current one becomes the next version (version_number + 1; ' +
        `the earlier one becomes superseded and stays readable); an identical one makes no version. ${DEFINITION_RULES}`,
      params: pathParams('workflow_id'),
      body: obj(
        { name, workflow_definition: definitionSchema, template_context_variables: anyObject(), workflow_configurations: configurationsSchema },
        [], { additionalProperties: false },
      ),
      response: workflowSchema, errors: [400, 404],
      handler: async ({ principal, params, body }) =>
        presentWorkflow(await d.updateWorkflow.execute(principal.organizationId, params.workflow_id, {
          name: body.name, workflowDefinition: body.workflow_definition,
          templateContextVariables: body.template_context_variables, workflowConfigurations: body.workflow_configurations,
        })),
    },
    {
      method: 'put', path: '/workflow/{workflow_id}/status', operationId: 'setWorkflowStatus', summary: 'Archive or restore a workflow', tags: ['workflows'], auth: 'any',
      description: 'archived: the workflow keeps its history and definition but receives no calls. active: restored. Idempotent.',
      params: pathParams('workflow_id'),
      body: obj({ status: statusEnum }, ['status'], { additionalProperties: false }),
      response: workflowSchema, errors: [404],
      handler: async ({ principal, params, body }) =>
        presentWorkflow(await d.setWorkflowStatus.execute(principal.organizationId, params.workflow_id, body.status)),
    },
    {
      method: 'get', path: '/workflow', operationId: 'listWorkflows', summary: "The organization's workflows, newest first", tags: ['workflows'], auth: 'any',
      query: obj({ status: statusEnum }),
      response: obj({ workflows: arr(workflowSchema) }, ['workflows']),
      handler: async ({ principal, query }) => ({
        workflows: (await d.listWorkflows.execute(principal.organizationId, { status: query.status })).map(presentWorkflow),
      }),
    },
    {
      method: 'get', path: '/workflow/{workflow_id}', operationId: 'getWorkflow', summary: 'One workflow', tags: ['workflows'], auth: 'any',
      params: pathParams('workflow_id'), response: workflowSchema, errors: [404],
      handler: async ({ principal, params }) => presentWorkflow(await d.getWorkflow.execute(principal.organizationId, params.workflow_id)),
    },
    {
      method: 'get', path: '/workflow/{workflow_id}/versions', operationId: 'listWorkflowVersions', summary: 'Every definition version, newest first', tags: ['workflows'], auth: 'any',
      params: pathParams('workflow_id'),
      response: obj({ workflow_id: id(), versions: arr(versionSchema) }, ['workflow_id', 'versions']), errors: [404],
      handler: async ({ principal, params }) => {
        const { workflow, versions } = await d.listWorkflowVersions.execute(principal.organizationId, params.workflow_id);
        return { workflow_id: workflow.id, versions: versions.map(presentVersion) };
      },
    },
    {
      method: 'get', path: '/workflow/{workflow_id}/runs', operationId: 'listWorkflowRuns', summary: "A workflow's runs (calls), newest first", tags: ['runs'], auth: 'any',
      description: 'Ordered by created_at desc, then id desc. total_pages = ceil(total_count / limit).',
      params: pathParams('workflow_id'), query: obj({ ...pagination }),
      response: obj(
        { runs: arr(runSchema), total_count: int({ minimum: 0 }), page: int({ minimum: 1 }), limit: int({ minimum: 1 }), total_pages: int({ minimum: 0 }) },
        ['runs', 'total_count', 'page', 'limit', 'total_pages'],
      ),
      errors: [404],
      handler: async ({ principal, params, query }) => {
        const p = await d.listWorkflowRuns.execute(principal.organizationId, params.workflow_id, { page: query.page, limit: query.limit });
        return { runs: p.runs.map(presentRun), total_count: p.totalCount, page: p.page, limit: p.limit, total_pages: p.totalPages };
      },
    },
    {
      method: 'get', path: '/workflow/{workflow_id}/runs/{run_id}', operationId: 'getWorkflowRun', summary: 'One run (call) of a workflow', tags: ['runs'], auth: 'any',
      description: '404 `run_not_found` unless the run belongs to that workflow and your organization. transcript_url / recording_url are signed, valid 3600 s.',
      params: pathParams('workflow_id', 'run_id'), response: runSchema, errors: [404],
      handler: async ({ principal, params }) =>
        presentRun(await d.getWorkflowRun.execute(principal.organizationId, params.workflow_id, params.run_id)),
    },
  ]);
}
