import type { WorkflowDefinition } from '../workflows/workflow-definition.js';
import type { Workflow, WorkflowDefinitionVersion, WorkflowStatus } from '../workflows/workflow.js';

/** Workflows and their definition versions. Every method is scoped by organization. */
export const WorkflowRepository = Symbol.for('callplane.WorkflowRepository');
export interface WorkflowRepository {
  /** Creates the workflow with definition version 1 (`published`). Not idempotent. */
  create(organizationId: number, input: {
    name: string;
    workflowUuid: string;
    definition: WorkflowDefinition;
    templateContextVariables: Record<string, unknown>;
    workflowConfigurations: Record<string, unknown>;
    now: Date;
  }): Promise<{ workflow: Workflow; current: WorkflowDefinitionVersion }>;
  /** The workflow, or null when absent or in another organization. */
  get(organizationId: number, workflowId: number): Promise<Workflow | null>;
  /** Several workflows by id (missing ones left out). */
  getMany(organizationId: number, workflowIds: number[]): Promise<Workflow[]>;
  /** The organization's workflows, newest first, optionally by status. */
  list(organizationId: number, filter?: { status?: WorkflowStatus }): Promise<Workflow[]>;
  /**
   * Changes the sent fields. When `definition` is given, stores a new version numbered one above the
   * current, marks the previous `superseded`, points the workflow at it, all at once. Returns null when
   * absent. Not idempotent for definitions (each call makes a version).
   */
  update(organizationId: number, workflowId: number, patch: {
    name?: string;
    definition?: WorkflowDefinition;
    templateContextVariables?: Record<string, unknown>;
    workflowConfigurations?: Record<string, unknown>;
    status?: WorkflowStatus;
    now: Date;
  }): Promise<Workflow | null>;
  /** One definition version of the workflow, or null. */
  getDefinition(organizationId: number, workflowId: number, definitionId: number): Promise<WorkflowDefinitionVersion | null>;
  /** Every version, newest first. */
  listDefinitions(organizationId: number, workflowId: number): Promise<WorkflowDefinitionVersion[]>;
}
