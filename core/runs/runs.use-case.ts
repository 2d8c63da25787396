import { NotFoundError } from '../errors.js';
import type { ObjectStore } from '../ports/object-store.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { WorkflowRepository } from '../ports/workflow.repository.port.js';
import { workflowNotFound } from '../workflows/workflows.use-case.js';
import type { Run } from './run.js';

/** How long a signed transcript/recording URL stays valid (API.md section 7). */
export const ARTIFACT_URL_TTL_SECONDS = 3600;

/** A run with what the API adds: signed artifact URLs and the contexts as the API shows them. */
export interface RunView {
  run: Run;
  /** Signed download URL of the transcript, valid ARTIFACT_URL_TTL_SECONDS; null when there is none. */
  transcriptUrl: string | null;
  recordingUrl: string | null;
  /** `initial_context` with `caller_number`/`called_number` of a phone call (the run's own numbers win). */
  initialContext: Record<string, unknown>;
  /** `gathered_context` with `mapped_call_disposition` once the disposition is known. */
  gatheredContext: Record<string, unknown>;
}

export interface RunPageView {
  runs: RunView[];
  totalCount: number;
  page: number;
  limit: number;
  totalPages: number;
}

/** `initial_context` as the API and the usage report show it: the stored context plus the call's numbers. */
export function runInitialContext(run: Pick<Run, 'initialContext' | 'callerNumber' | 'calledNumber'>): Record<string, unknown> {
  const ctx: Record<string, unknown> = { ...run.initialContext };
  if (run.callerNumber != null) ctx.caller_number = run.callerNumber;
  if (run.calledNumber != null) ctx.called_number = run.calledNumber;
  return ctx;
}

/** `gathered_context` as the API shows it: `mapped_call_disposition` is the run's disposition when known. */
export function runGatheredContext(run: Pick<Run, 'gatheredContext' | 'disposition'>): Record<string, unknown> {
  const ctx: Record<string, unknown> = { ...run.gatheredContext };
  if (run.disposition != null) ctx.mapped_call_disposition = run.disposition;
  return ctx;
}

/** Turns runs into views, signing artifact keys with the ObjectStore. */
export class RunViews {
  constructor(private readonly store: ObjectStore) {}

  async view(run: Run): Promise<RunView> {
    // a run without artifacts (most calls that never talked) has nothing to sign: no promises to wait for (every
    // call.ended builds a view, docs/benchmarks.md section 8)
    if (!run.transcriptKey && !run.recordingKey) {
      return { run, transcriptUrl: null, recordingUrl: null, initialContext: runInitialContext(run), gatheredContext: runGatheredContext(run) };
    }
    const sign = (key: string | null) =>
      key ? this.store.signedDownloadUrl(key, { expiresInSeconds: ARTIFACT_URL_TTL_SECONDS }) : Promise.resolve(null);
    const [transcriptUrl, recordingUrl] = await Promise.all([sign(run.transcriptKey), sign(run.recordingKey)]);
    return { run, transcriptUrl, recordingUrl, initialContext: runInitialContext(run), gatheredContext: runGatheredContext(run) };
  }
}

export const runNotFound = () => new NotFoundError('run_not_found', 'Run not found');

/**
 * One run of a workflow. 404 `run_not_found` unless the run exists, is in the caller's organization and belongs
 * to `workflowId` (a run id under another workflow's URL is not found, whoever owns it).
 */
export class GetWorkflowRun {
  constructor(
    private readonly runs: RunRepository,
    private readonly views: RunViews,
  ) {}

  async execute(organizationId: number, workflowId: number, runId: number): Promise<RunView> {
    const run = await this.runs.get(organizationId, runId);
    if (!run || run.workflowId !== workflowId) throw runNotFound();
    return this.views.view(run);
  }
}

/**
 * A page of a workflow's runs, newest first (created_at desc, id desc). `page` ≥ 1, `limit` ≥ 1 (the route caps
 * it at 100). `totalPages` = ceil(totalCount / limit). 404 `workflow_not_found` when the workflow is absent or
 * in another organization; a page past the end is empty.
 */
export class ListWorkflowRuns {
  constructor(
    private readonly workflows: WorkflowRepository,
    private readonly runs: RunRepository,
    private readonly views: RunViews,
  ) {}

  async execute(organizationId: number, workflowId: number, paging: { page: number; limit: number }): Promise<RunPageView> {
    const page = Math.max(1, Math.floor(paging.page));
    const limit = Math.max(1, Math.floor(paging.limit));
    if (!(await this.workflows.get(organizationId, workflowId))) throw workflowNotFound();
    const { runs, totalCount } = await this.runs.listByWorkflow(organizationId, workflowId, { page, limit });
    return {
      runs: await Promise.all(runs.map((r) => this.views.view(r))),
      totalCount,
      page,
      limit,
      totalPages: Math.ceil(totalCount / limit),
    };
  }
}
