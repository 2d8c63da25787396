import type { PendingEvent } from './event-publisher.port.js';
import type { CostInfo, Run, RunLogEntry, RunMode, RunStatus } from '../runs/run.js';

export interface NewRun {
  workflowId: number;
  definitionId: number;
  name: string;
  mode: RunMode;
  campaignId?: number | null;
  attemptId?: number | null;
  telephonyConfigurationId?: number | null;
  provider?: string | null;
  providerCallId?: string | null;
  callerNumber?: string | null;
  calledNumber?: string | null;
  initialContext: Record<string, unknown>;
  now: Date;
}

/** A status report to apply to a run (from a provider callback, ARI event, the simulator or a reconciler). */
export interface RunStatusUpdate {
  status: RunStatus;
  /** Set on final statuses: `gathered_context.mapped_call_disposition` as well. */
  disposition?: string | null;
  durationSeconds?: number | null;
  providerCallId?: string | null;
  gatheredContext?: Record<string, unknown>;
  costInfo?: Partial<CostInfo>;
  log?: RunLogEntry;
  at: Date;
  /**
   * This update is the call's conversation record (the voice session's `gatheredContext`, `disposition` and
   * `costInfo.service_token_usage`, RunVoiceSink): a run takes it once, even after its final status
   * (`planRunStatusUpdate`), so the record lands whatever order the carrier's final status and the session's end arrive in.
   */
  conversation?: boolean;
  /**
   * The customer event this update decides (`call.started`, `call.ended`): stored on the run as a pending marker
   * in the same atomic step, only when the update is applied (docs/webhooks.md "Guarantees").
   */
  event?: PendingEvent;
}

export interface RunPage {
  runs: Run[];
  totalCount: number;
}

/** Runs (calls). Every method is scoped by organization. */
export const RunRepository = Symbol.for('callplane.RunRepository');
export interface RunRepository {
  /**
   * Creates a `queued` run with zero cost and null duration. Not idempotent. Throws
   * `ConflictError('provider_call_id_taken')` when `providerCallId` is already used by another run of `provider`.
   */
  create(organizationId: number, input: NewRun): Promise<Run>;
  /** The run, or null when absent or in another organization. */
  get(organizationId: number, runId: number): Promise<Run | null>;
  /** Runs of a workflow, newest first (created_at desc, id desc), with the total. */
  listByWorkflow(organizationId: number, workflowId: number, page: { page: number; limit: number }): Promise<RunPage>;
  /** Runs of a campaign, newest first, with the total. */
  listByCampaign(organizationId: number, campaignId: number, page: { page: number; limit: number }): Promise<RunPage>;
  /** Number of runs of the workflow. */
  countByWorkflow(organizationId: number, workflowId: number): Promise<number>;
  /** Distinct non-null dispositions the workflow's runs produced. */
  dispositionsByWorkflow(organizationId: number, workflowId: number): Promise<string[]>;
  /**
   * Applies `update` atomically only if it moves the run forward (RUN_STATUS_RANK strictly higher, or the
   * same non-final status with new details such as providerCallId). A final run never changes status.
   * Returns `{applied: false}` with the stored run when the update is stale or a duplicate; null run when
   * absent. Idempotent: replaying an update is a no-op. `startedAt` is set on the first `in_progress`,
   * `endedAt` on the final status; `gatheredContext` is merged, `costInfo` merged, `log` appended.
   * The exact rule is `planRunStatusUpdate` (core/runs/run-status.ts), shared by every adapter: a providerCallId is
   * only set when the run has none; a `log` alone is not a new detail. Throws
   * `ConflictError('provider_call_id_taken')` when the providerCallId belongs to another run of the same provider.
   */
  applyStatus(organizationId: number, runId: number, update: RunStatusUpdate): Promise<{ applied: boolean; run: Run | null }>;
  /**
   * The run with this id in any organization, or null. Not tenant-scoped on purpose: it is how a provider
   * webhook (`/telephony/<provider>/status/<run_id>`, no API credentials) finds the run, its organization
   * and its telephony configuration, whose credentials then verify the webhook's signature. Never use it
   * for a user-facing read.
   */
  findForProviderEvent(runId: number): Promise<Run | null>;
  /** The run placed through `provider` with that provider call id (webhooks that only carry the provider's id), or null. Not tenant-scoped: it is how a provider event finds its tenant. */
  findByProviderCallId(provider: string, providerCallId: string): Promise<Run | null>;
  /**
   * Stores artifact keys (ObjectStore keys), merges `annotations` key by key, appends the `logs` entries in order,
   * each unless an equal entry is already there (or earlier in the same list), all in one write. Returns null
   * when absent. Idempotent per value.
   */
  attachArtifacts(organizationId: number, runId: number, patch: { transcriptKey?: string; recordingKey?: string; annotations?: Record<string, unknown>; logs?: readonly RunLogEntry[]; now: Date }): Promise<Run | null>;
}
