import type { WorkflowDefinition } from './workflow-definition.js';

export type WorkflowStatus = 'active' | 'archived';
export type VersionStatus = 'published' | 'superseded';

/** An agent: a named, versioned workflow owned by one organization. */
export interface Workflow {
  id: number;
  organizationId: number;
  name: string;
  status: WorkflowStatus;
  /** Fixed at creation. */
  workflowUuid: string;
  templateContextVariables: Record<string, unknown>;
  workflowConfigurations: Record<string, unknown>;
  currentDefinitionId: number;
  createdAt: Date;
  updatedAt: Date;
}

/** One version of a workflow's graph. Version numbers start at 1 and grow by one per definition change. */
export interface WorkflowDefinitionVersion {
  id: number;
  organizationId: number;
  workflowId: number;
  versionNumber: number;
  status: VersionStatus;
  definition: WorkflowDefinition;
  createdAt: Date;
}

/** A workflow with its current definition, and the derived figures the API returns. */
export interface WorkflowView {
  workflow: Workflow;
  current: WorkflowDefinitionVersion;
  totalRuns: number;
  /** Codes its calls produced and those its endCall nodes declare, unique, sorted. */
  dispositionCodes: string[];
}
