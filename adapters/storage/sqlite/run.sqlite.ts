import { ConflictError } from '../../../core/errors.js';
import type { NewRun, RunRepository, RunStatusUpdate } from '../../../core/ports/run.repository.port.js';
import { appendLogsOnce, planRunStatusUpdate } from '../../../core/runs/run-status.js';
import { appendPendingEvent } from './pending-events.sqlite.js';
import { RUN_STATUS_RANK, type CostInfo, type Run, type RunLogEntry, type RunMode, type RunStatus } from '../../../core/runs/run.js';
import { fromMs, fromMsOrNull, isUniqueViolation, toMs, toMsOrNull, type SqliteDatabase } from './database.js';

export interface RunRow {
  id: number;
  organization_id: number;
  workflow_id: number;
  definition_id: number;
  name: string;
  mode: string;
  status: string;
  status_rank: number;
  disposition: string | null;
  campaign_id: number | null;
  attempt_id: number | null;
  telephony_configuration_id: number | null;
  provider: string | null;
  provider_call_id: string | null;
  caller_number: string | null;
  called_number: string | null;
  initial_context: string;
  gathered_context: string;
  logs: string;
  annotations: string;
  cost_info: string;
  duration_seconds: number | null;
  service_token_usage: number;
  charge_usd: number;
  transcript_key: string | null;
  recording_key: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  updated_at: number;
}

export const runFromRow = (r: RunRow): Run => {
  const cost = JSON.parse(r.cost_info) as Partial<CostInfo>;
  return {
    id: r.id,
    organizationId: r.organization_id,
    workflowId: r.workflow_id,
    definitionId: r.definition_id,
    name: r.name,
    mode: r.mode as RunMode,
    status: r.status as RunStatus,
    disposition: r.disposition,
    campaignId: r.campaign_id,
    attemptId: r.attempt_id,
    telephonyConfigurationId: r.telephony_configuration_id,
    provider: r.provider,
    providerCallId: r.provider_call_id,
    callerNumber: r.caller_number,
    calledNumber: r.called_number,
    initialContext: JSON.parse(r.initial_context) as Record<string, unknown>,
    gatheredContext: JSON.parse(r.gathered_context) as Record<string, unknown>,
    logs: JSON.parse(r.logs) as RunLogEntry[],
    annotations: JSON.parse(r.annotations) as Record<string, unknown>,
    costInfo: {
      ...cost,
      call_duration_seconds: cost.call_duration_seconds ?? r.duration_seconds ?? 0,
      service_token_usage: cost.service_token_usage ?? r.service_token_usage,
      charge_usd: cost.charge_usd ?? r.charge_usd,
    },
    durationSeconds: r.duration_seconds,
    transcriptKey: r.transcript_key,
    recordingKey: r.recording_key,
    createdAt: fromMs(r.created_at),
    startedAt: fromMsOrNull(r.started_at),
    endedAt: fromMsOrNull(r.ended_at),
    updatedAt: fromMs(r.updated_at),
  };
};

/** The mutable columns of a run, from its domain form (the inverse of `runFromRow` for those columns). */
export const runMutableColumns = (run: Run) => ({
  status: run.status,
  status_rank: RUN_STATUS_RANK[run.status],
  disposition: run.disposition,
  provider_call_id: run.providerCallId,
  gathered_context: JSON.stringify(run.gatheredContext),
  logs: JSON.stringify(run.logs),
  annotations: JSON.stringify(run.annotations),
  cost_info: JSON.stringify(run.costInfo),
  duration_seconds: run.durationSeconds,
  service_token_usage: run.costInfo.service_token_usage,
  charge_usd: run.costInfo.charge_usd,
  transcript_key: run.transcriptKey,
  recording_key: run.recordingKey,
  started_at: toMsOrNull(run.startedAt),
  ended_at: toMsOrNull(run.endedAt),
  updated_at: toMs(run.updatedAt),
});

const providerCallIdTaken = () =>
  new ConflictError('provider_call_id_taken', 'Another run already has this provider call id');

/**
 * RunRepository on SQLite. Every read-modify-write (`applyStatus`, `attachArtifacts`) runs in an IMMEDIATE
 * transaction: it takes the database's write lock before reading, so no other connection or process can commit
 * a change to the run between the read and the write, and a run is never moved backwards.
 */
export class SqliteRunRepository implements RunRepository {
  private readonly q;

  constructor(private readonly db: SqliteDatabase) {
    this.q = {
      insert: db.prepare<Record<string, unknown>, RunRow>(
        `INSERT INTO runs (organization_id, workflow_id, definition_id, name, mode, status, status_rank, campaign_id, attempt_id,
           telephony_configuration_id, provider, provider_call_id, caller_number, called_number, initial_context,
           cost_info, created_at, updated_at)
         VALUES (@organization_id, @workflow_id, @definition_id, @name, @mode, 'queued', 0, @campaign_id, @attempt_id,
           @telephony_configuration_id, @provider, @provider_call_id, @caller_number, @called_number, @initial_context,
           @cost_info, @now, @now) RETURNING *`),
      get: db.prepare<[number, number], RunRow>('SELECT * FROM runs WHERE organization_id = ? AND id = ?'),
      getAny: db.prepare<[number], RunRow>('SELECT * FROM runs WHERE id = ?'),
      byProviderCallId: db.prepare<[string, string], RunRow>(
        'SELECT * FROM runs WHERE provider = ? AND provider_call_id = ?'),
      pageByWorkflow: db.prepare<[number, number, number, number], RunRow>(
        `SELECT * FROM runs WHERE organization_id = ? AND workflow_id = ?
         ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`),
      countByWorkflow: db.prepare<[number, number], { n: number }>(
        'SELECT COUNT(*) AS n FROM runs WHERE organization_id = ? AND workflow_id = ?'),
      pageByCampaign: db.prepare<[number, number, number, number], RunRow>(
        `SELECT * FROM runs WHERE organization_id = ? AND campaign_id = ?
         ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`),
      countByCampaign: db.prepare<[number, number], { n: number }>(
        'SELECT COUNT(*) AS n FROM runs WHERE organization_id = ? AND campaign_id = ?'),
      dispositions: db.prepare<[number, number], { disposition: string }>(
        `SELECT DISTINCT disposition FROM runs
         WHERE organization_id = ? AND workflow_id = ? AND disposition IS NOT NULL ORDER BY disposition`),
      write: db.prepare<Record<string, unknown>, RunRow>(
        `UPDATE runs SET status = @status, status_rank = @status_rank, disposition = @disposition,
           provider_call_id = @provider_call_id, gathered_context = @gathered_context, logs = @logs,
           annotations = @annotations, cost_info = @cost_info, duration_seconds = @duration_seconds,
           service_token_usage = @service_token_usage, charge_usd = @charge_usd, transcript_key = @transcript_key,
           recording_key = @recording_key, started_at = @started_at, ended_at = @ended_at, updated_at = @updated_at
         WHERE organization_id = @organization_id AND id = @id RETURNING *`),
    };
  }

  async create(organizationId: number, input: NewRun): Promise<Run> {
    const cost: CostInfo = { call_duration_seconds: 0, service_token_usage: 0, charge_usd: 0 };
    try {
      return runFromRow(this.q.insert.get({
        organization_id: organizationId,
        workflow_id: input.workflowId,
        definition_id: input.definitionId,
        name: input.name,
        mode: input.mode,
        campaign_id: input.campaignId ?? null,
        attempt_id: input.attemptId ?? null,
        telephony_configuration_id: input.telephonyConfigurationId ?? null,
        provider: input.provider ?? null,
        provider_call_id: input.providerCallId ?? null,
        caller_number: input.callerNumber ?? null,
        called_number: input.calledNumber ?? null,
        initial_context: JSON.stringify(input.initialContext ?? {}),
        cost_info: JSON.stringify(cost),
        now: toMs(input.now),
      })!);
    } catch (e) {
      if (isUniqueViolation(e)) throw providerCallIdTaken();
      throw e;
    }
  }

  async get(organizationId: number, runId: number) {
    const r = this.q.get.get(organizationId, runId);
    return r ? runFromRow(r) : null;
  }

  async listByWorkflow(organizationId: number, workflowId: number, page: { page: number; limit: number }) {
    const read = this.db.transaction(() => ({
      runs: this.q.pageByWorkflow.all(organizationId, workflowId, page.limit, (page.page - 1) * page.limit).map(runFromRow),
      totalCount: this.q.countByWorkflow.get(organizationId, workflowId)!.n,
    }));
    return read.deferred();
  }

  async listByCampaign(organizationId: number, campaignId: number, page: { page: number; limit: number }) {
    const read = this.db.transaction(() => ({
      runs: this.q.pageByCampaign.all(organizationId, campaignId, page.limit, (page.page - 1) * page.limit).map(runFromRow),
      totalCount: this.q.countByCampaign.get(organizationId, campaignId)!.n,
    }));
    return read.deferred();
  }

  async countByWorkflow(organizationId: number, workflowId: number) {
    return this.q.countByWorkflow.get(organizationId, workflowId)!.n;
  }

  async dispositionsByWorkflow(organizationId: number, workflowId: number) {
    return this.q.dispositions.all(organizationId, workflowId).map((r) => r.disposition);
  }

  async applyStatus(organizationId: number, runId: number, update: RunStatusUpdate) {
    const tx = this.db.transaction((): { applied: boolean; run: Run | null } => {
      const row = this.q.get.get(organizationId, runId);
      if (!row) return { applied: false, run: null };
      const run = runFromRow(row);
      const next = planRunStatusUpdate(run, update);
      if (!next) return { applied: false, run };
      const written = this.writeRun(next);
      // the customer event's marker, in the fact's own transaction (docs/webhooks.md "Guarantees")
      if (update.event) appendPendingEvent(this.db, 'run', runId, update.event);
      return { applied: true, run: written };
    });
    try {
      return tx.immediate();
    } catch (e) {
      if (isUniqueViolation(e)) throw providerCallIdTaken();
      throw e;
    }
  }

  async findForProviderEvent(runId: number) {
    const r = this.q.getAny.get(runId);
    return r ? runFromRow(r) : null;
  }

  async findByProviderCallId(provider: string, providerCallId: string) {
    const r = this.q.byProviderCallId.get(provider, providerCallId);
    return r ? runFromRow(r) : null;
  }

  async attachArtifacts(
    organizationId: number,
    runId: number,
    patch: { transcriptKey?: string; recordingKey?: string; annotations?: Record<string, unknown>; logs?: readonly RunLogEntry[]; now: Date },
  ) {
    const tx = this.db.transaction((): Run | null => {
      const row = this.q.get.get(organizationId, runId);
      if (!row) return null;
      const run = runFromRow(row);
      return this.writeRun({
        ...run,
        transcriptKey: patch.transcriptKey ?? run.transcriptKey,
        recordingKey: patch.recordingKey ?? run.recordingKey,
        annotations: { ...run.annotations, ...(patch.annotations ?? {}) },
        logs: appendLogsOnce(run.logs, patch.logs),
        updatedAt: patch.now,
      });
    });
    return tx.immediate();
  }

  private writeRun(run: Run): Run {
    return runFromRow(this.q.write.get({ ...runMutableColumns(run), organization_id: run.organizationId, id: run.id })!);
  }
}
