import { InputError } from '../errors.js';
import type { WorkflowRepository } from '../ports/workflow.repository.port.js';
import type { Workflow, WorkflowDefinitionVersion } from './workflow.js';

/** The codes `EnsureWorkflowCanReceiveCalls` throws, both as `InputError`. */
export const WORKFLOW_UNAVAILABLE_CODES = ['workflow_not_found', 'workflow_archived'] as const;
export type WorkflowUnavailableCode = (typeof WORKFLOW_UNAVAILABLE_CODES)[number];

/** True when `e` is one of the two refusals of `EnsureWorkflowCanReceiveCalls`. */
export function isWorkflowUnavailable(e: unknown): e is InputError & { code: WorkflowUnavailableCode } {
  return e instanceof InputError && (WORKFLOW_UNAVAILABLE_CODES as readonly string[]).includes(e.code);
}

/**
 * The one check every path that is about to give a workflow a call goes through (campaign create and start, the
 * campaign dispatcher, inbound calls, the simulator): the workflow exists in the organization and is `active`.
 *
 * Returns the workflow and its current (published) definition: the definition a new run records as its
 * `definition_id`. Read-only, idempotent.
 *
 * Throws, always as `InputError` (which http/ maps to 400, what campaign creation answers per API.md 1):
 * - `InputError('workflow_not_found')` when absent or in another organization (never says which);
 * - `InputError('workflow_archived')` when archived.
 * Callers that must answer differently keep the code and change the class: the simulator's inbound endpoint
 * answers 409 for an archived workflow (API.md 8), so it catches with `isWorkflowUnavailable(e)` and rethrows
 * `new ConflictError(e.code, e.detail)`; the campaign dispatcher pauses the campaign with a log entry named
 * after `e.code`.
 */
export class EnsureWorkflowCanReceiveCalls {
  constructor(private readonly workflows: WorkflowRepository) {}

  async execute(organizationId: number, workflowId: number): Promise<{ workflow: Workflow; definition: WorkflowDefinitionVersion }> {
    const workflow = await this.workflows.get(organizationId, workflowId);
    if (!workflow) throw new InputError('workflow_not_found', `Workflow ${workflowId} not found`);
    if (workflow.status === 'archived') {
      throw new InputError('workflow_archived', `Workflow ${workflowId} is archived and cannot receive calls; restore it first`);
    }
    const definition = await this.workflows.getDefinition(organizationId, workflowId, workflow.currentDefinitionId);
    if (!definition) throw new InputError('workflow_not_found', `Workflow ${workflowId} not found`);
    return { workflow, definition };
  }
}
