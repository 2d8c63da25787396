import type { AiServiceReferences } from '../ai-services/ai-services.use-case.js';
import { NotFoundError, ValidationError, type ValidationIssue } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import type { TokenService } from '../ports/crypto.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { WorkflowRepository } from '../ports/workflow.repository.port.js';
import { canonicalJson } from '../runs/run-status.js';
import { assertValidWorkflowDefinition, declaredDispositionCodes } from './validate-workflow-definition.js';
import { validateWorkflowConfigurations } from './workflow-configurations.js';
import type { WorkflowDefinition } from './workflow-definition.js';
import type { Workflow, WorkflowDefinitionVersion, WorkflowStatus, WorkflowView } from './workflow.js';

export const WORKFLOW_STATUSES: readonly WorkflowStatus[] = ['active', 'archived'];
export const WORKFLOW_NAME_MAX_LENGTH = 255;

export const workflowNotFound = () => new NotFoundError('workflow_not_found', 'Workflow not found');

/**
 * Whether two definitions are the same graph: deep equality of their JSON, object key order ignored, array order
 * (nodes, edges, extraction variables) significant. A moved node (`position`) is a change.
 */
export function sameWorkflowDefinition(a: WorkflowDefinition, b: WorkflowDefinition): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The domain checks on the plain fields (the HTTP schema checks the same; embedders get them too). */
function checkFields(input: { name?: unknown; templateContextVariables?: unknown; workflowConfigurations?: unknown }): void {
  const issues: ValidationIssue[] = [];
  if (input.name !== undefined) {
    if (typeof input.name !== 'string' || !/\S/u.test(input.name)) {
      issues.push({ loc: ['body', 'name'], msg: 'name must be a non-blank string', type: 'string_pattern_mismatch' });
    } else if (input.name.length > WORKFLOW_NAME_MAX_LENGTH) {
      issues.push({ loc: ['body', 'name'], msg: `name must have at most ${WORKFLOW_NAME_MAX_LENGTH} characters`, type: 'string_too_long' });
    }
  }
  if (input.templateContextVariables !== undefined && !isPlainObject(input.templateContextVariables)) {
    issues.push({ loc: ['body', 'template_context_variables'], msg: 'template_context_variables must be an object', type: 'dict_type' });
  }
  if (input.workflowConfigurations !== undefined) issues.push(...validateWorkflowConfigurations(input.workflowConfigurations));
  if (issues.length > 0) throw new ValidationError(issues);
}

/** Builds the API view of a workflow: its current definition, run count and disposition codes. */
export class WorkflowViews {
  constructor(
    private readonly workflows: WorkflowRepository,
    private readonly runs: RunRepository,
  ) {}

  async view(workflow: Workflow, current?: WorkflowDefinitionVersion): Promise<WorkflowView> {
    const [definition, totalRuns, produced] = await Promise.all([
      current && current.id === workflow.currentDefinitionId
        ? current
        : this.workflows.getDefinition(workflow.organizationId, workflow.id, workflow.currentDefinitionId),
      this.runs.countByWorkflow(workflow.organizationId, workflow.id),
      this.runs.dispositionsByWorkflow(workflow.organizationId, workflow.id),
    ]);
    // a workflow and its current definition are written in one transaction; a miss means a broken store
    if (!definition) throw new Error(`workflow ${workflow.id} has no current definition ${workflow.currentDefinitionId}`);
    const codes = [...new Set([...produced, ...declaredDispositionCodes(definition.definition)])].sort();
    return { workflow, current: definition, totalRuns, dispositionCodes: codes };
  }
}

export interface CreateWorkflowInput {
  name: string;
  /** Untrusted: validated here (structure and graph rules, 422 with `loc` under body.workflow_definition). */
  workflowDefinition: unknown;
  templateContextVariables?: Record<string, unknown>;
  workflowConfigurations?: Record<string, unknown>;
}

/**
 * Creates an active workflow with definition version 1 and a new `workflow_uuid`. `workflow_configurations` is
 * checked (API.md 11): 422 on its known keys, 400 `ai_service_not_found` / `ai_service_kind_mismatch` on a
 * `service_id`. Not idempotent.
 */
export class CreateWorkflow {
  constructor(
    private readonly workflows: WorkflowRepository,
    private readonly views: WorkflowViews,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
    private readonly aiServices: AiServiceReferences,
  ) {}

  async execute(organizationId: number, input: CreateWorkflowInput): Promise<WorkflowView> {
    checkFields(input);
    const definition = input.workflowDefinition;
    assertValidWorkflowDefinition(definition);
    if (input.workflowConfigurations) await this.aiServices.assertUsable(organizationId, input.workflowConfigurations);
    const { workflow, current } = await this.workflows.create(organizationId, {
      name: input.name,
      workflowUuid: this.tokens.uuid(),
      definition,
      templateContextVariables: input.templateContextVariables ?? {},
      workflowConfigurations: input.workflowConfigurations ?? {},
      now: this.clock.now(),
    });
    return this.views.view(workflow, current);
  }
}

export interface UpdateWorkflowInput {
  name?: string;
  workflowDefinition?: unknown;
  templateContextVariables?: Record<string, unknown>;
  workflowConfigurations?: Record<string, unknown>;
}

/**
 * Changes only the fields given (`undefined` = not sent). A `workflowDefinition` is validated on every update,
 * even when unchanged, so a stored workflow is always runnable. A definition that differs from the current one
 * (see `sameWorkflowDefinition`) becomes the next version and the earlier one `superseded`; an identical one
 * creates no version (re-saving an editor's state does not inflate version numbers). Archived workflows can be
 * edited. A sent `workflow_configurations` replaces the stored one whole and is checked as on create (422, then
 * 400 `ai_service_not_found` / `ai_service_kind_mismatch`). 404 `workflow_not_found` when absent or in another
 * organization.
 */
export class UpdateWorkflow {
  constructor(
    private readonly workflows: WorkflowRepository,
    private readonly views: WorkflowViews,
    private readonly clock: Clock,
    private readonly aiServices: AiServiceReferences,
  ) {}

  async execute(organizationId: number, workflowId: number, input: UpdateWorkflowInput): Promise<WorkflowView> {
    checkFields(input);
    let definition: WorkflowDefinition | undefined;
    if (input.workflowDefinition !== undefined) {
      const candidate = input.workflowDefinition;
      assertValidWorkflowDefinition(candidate);
      definition = candidate;
    }
    const existing = await this.workflows.get(organizationId, workflowId);
    if (!existing) throw workflowNotFound();
    if (input.workflowConfigurations) await this.aiServices.assertUsable(organizationId, input.workflowConfigurations);
    if (definition) {
      const current = await this.workflows.getDefinition(organizationId, workflowId, existing.currentDefinitionId);
      if (current && sameWorkflowDefinition(current.definition, definition)) definition = undefined;
    }
    const patch = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(definition !== undefined ? { definition } : {}),
      ...(input.templateContextVariables !== undefined ? { templateContextVariables: input.templateContextVariables } : {}),
      ...(input.workflowConfigurations !== undefined ? { workflowConfigurations: input.workflowConfigurations } : {}),
    };
    if (Object.keys(patch).length === 0) return this.views.view(existing);
    const updated = await this.workflows.update(organizationId, workflowId, { ...patch, now: this.clock.now() });
    if (!updated) throw workflowNotFound();
    return this.views.view(updated);
  }
}

/**
 * Archives (`archived`: history and definition kept, no calls) or restores (`active`) a workflow. Setting the
 * status it already has changes nothing (idempotent). 422 on `body.status` for another value; 404
 * `workflow_not_found` when absent or in another organization.
 */
export class SetWorkflowStatus {
  constructor(
    private readonly workflows: WorkflowRepository,
    private readonly views: WorkflowViews,
    private readonly clock: Clock,
  ) {}

  async execute(organizationId: number, workflowId: number, status: WorkflowStatus): Promise<WorkflowView> {
    if (!WORKFLOW_STATUSES.includes(status)) {
      throw new ValidationError([{ loc: ['body', 'status'], msg: "status must be 'active' or 'archived'", type: 'enum' }]);
    }
    const existing = await this.workflows.get(organizationId, workflowId);
    if (!existing) throw workflowNotFound();
    if (existing.status === status) return this.views.view(existing);
    const updated = await this.workflows.update(organizationId, workflowId, { status, now: this.clock.now() });
    if (!updated) throw workflowNotFound();
    return this.views.view(updated);
  }
}

/** One workflow; 404 `workflow_not_found` when absent or in another organization. */
export class GetWorkflow {
  constructor(
    private readonly workflows: WorkflowRepository,
    private readonly views: WorkflowViews,
  ) {}

  async execute(organizationId: number, workflowId: number): Promise<WorkflowView> {
    const workflow = await this.workflows.get(organizationId, workflowId);
    if (!workflow) throw workflowNotFound();
    return this.views.view(workflow);
  }
}

/** The organization's workflows, newest first, optionally only those with `status`. Empty when none. */
export class ListWorkflows {
  constructor(
    private readonly workflows: WorkflowRepository,
    private readonly views: WorkflowViews,
  ) {}

  async execute(organizationId: number, filter: { status?: WorkflowStatus } = {}): Promise<WorkflowView[]> {
    const list = await this.workflows.list(organizationId, filter.status ? { status: filter.status } : {});
    return Promise.all(list.map((w) => this.views.view(w)));
  }
}

/** Every definition version of a workflow, newest first; 404 `workflow_not_found` when absent or foreign. */
export class ListWorkflowVersions {
  constructor(private readonly workflows: WorkflowRepository) {}

  async execute(organizationId: number, workflowId: number): Promise<{ workflow: Workflow; versions: WorkflowDefinitionVersion[] }> {
    const workflow = await this.workflows.get(organizationId, workflowId);
    if (!workflow) throw workflowNotFound();
    return { workflow, versions: await this.workflows.listDefinitions(organizationId, workflowId) };
  }
}
