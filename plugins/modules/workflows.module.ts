import type { Container } from 'inversify';
import { AiServiceReferences } from '../../core/ai-services/ai-services.use-case.js';
import { Clock } from '../../core/ports/clock.port.js';
import { TokenService } from '../../core/ports/crypto.port.js';
import { ObjectStore } from '../../core/ports/object-store.port.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { GetWorkflowRun, ListWorkflowRuns, RunViews } from '../../core/runs/runs.use-case.js';
import { EnsureWorkflowCanReceiveCalls } from '../../core/workflows/ensure-workflow-can-receive-calls.use-case.js';
import {
  CreateWorkflow,
  GetWorkflow,
  ListWorkflows,
  ListWorkflowVersions,
  SetWorkflowStatus,
  UpdateWorkflow,
  WorkflowViews,
} from '../../core/workflows/workflows.use-case.js';
import { LocalObjectStore } from '../../adapters/files/local/local-object-store.js';
import { filesRoutes } from '../../http/routes/files.routes.js';
import { workflowRoutes } from '../../http/routes/workflows.routes.js';
import { HttpRoutesToken } from '../tokens.js';

/**
 * Workflows (agents), their versions and runs: use cases and routes (repositories come from the storage module),
 * plus the embedded object store's signed download route when the store is the local one.
 */
export function workflowsModule(c: Container): void {
  // storage without workflow/run adapters yet (mongodb until they land) serves the rest of the API without these
  if (!c.isBound(WorkflowRepository) || !c.isBound(RunRepository)) return;
  c.bind(WorkflowViews).toResolvedValue((w: WorkflowRepository, r: RunRepository) => new WorkflowViews(w, r), [WorkflowRepository, RunRepository]).inSingletonScope();
  c.bind(RunViews).toResolvedValue((s: ObjectStore) => new RunViews(s), [ObjectStore]).inSingletonScope();
  c.bind(CreateWorkflow).toResolvedValue(
    (w: WorkflowRepository, v: WorkflowViews, t: TokenService, clock: Clock, ai: AiServiceReferences) => new CreateWorkflow(w, v, t, clock, ai),
    [WorkflowRepository, WorkflowViews, TokenService, Clock, AiServiceReferences],
  ).inSingletonScope();
  c.bind(UpdateWorkflow).toResolvedValue(
    (w: WorkflowRepository, v: WorkflowViews, clock: Clock, ai: AiServiceReferences) => new UpdateWorkflow(w, v, clock, ai),
    [WorkflowRepository, WorkflowViews, Clock, AiServiceReferences],
  ).inSingletonScope();
  c.bind(SetWorkflowStatus).toResolvedValue(
    (w: WorkflowRepository, v: WorkflowViews, clock: Clock) => new SetWorkflowStatus(w, v, clock), [WorkflowRepository, WorkflowViews, Clock],
  ).inSingletonScope();
  c.bind(GetWorkflow).toResolvedValue((w: WorkflowRepository, v: WorkflowViews) => new GetWorkflow(w, v), [WorkflowRepository, WorkflowViews]).inSingletonScope();
  c.bind(ListWorkflows).toResolvedValue((w: WorkflowRepository, v: WorkflowViews) => new ListWorkflows(w, v), [WorkflowRepository, WorkflowViews]).inSingletonScope();
  c.bind(ListWorkflowVersions).toResolvedValue((w: WorkflowRepository) => new ListWorkflowVersions(w), [WorkflowRepository]).inSingletonScope();
  c.bind(EnsureWorkflowCanReceiveCalls).toResolvedValue((w: WorkflowRepository) => new EnsureWorkflowCanReceiveCalls(w), [WorkflowRepository]).inSingletonScope();
  c.bind(GetWorkflowRun).toResolvedValue((r: RunRepository, v: RunViews) => new GetWorkflowRun(r, v), [RunRepository, RunViews]).inSingletonScope();
  c.bind(ListWorkflowRuns).toResolvedValue(
    (w: WorkflowRepository, r: RunRepository, v: RunViews) => new ListWorkflowRuns(w, r, v), [WorkflowRepository, RunRepository, RunViews],
  ).inSingletonScope();

  c.bind(HttpRoutesToken).toResolvedValue(
    (
      createWorkflow: CreateWorkflow, updateWorkflow: UpdateWorkflow, setWorkflowStatus: SetWorkflowStatus, getWorkflow: GetWorkflow,
      listWorkflows: ListWorkflows, listWorkflowVersions: ListWorkflowVersions, getWorkflowRun: GetWorkflowRun, listWorkflowRuns: ListWorkflowRuns,
    ) => workflowRoutes({ createWorkflow, updateWorkflow, setWorkflowStatus, getWorkflow, listWorkflows, listWorkflowVersions, getWorkflowRun, listWorkflowRuns }),
    [CreateWorkflow, UpdateWorkflow, SetWorkflowStatus, GetWorkflow, ListWorkflows, ListWorkflowVersions, GetWorkflowRun, ListWorkflowRuns],
  );
  // an S3-compatible store hands out real presigned URLs; only the embedded store serves its own
  c.bind(HttpRoutesToken).toResolvedValue(
    (store: ObjectStore) => (store instanceof LocalObjectStore ? filesRoutes(store) : []),
    [ObjectStore],
  );
}
