import type { Db, Filter } from 'mongodb';
import { ConflictError } from '../../../core/errors.js';
import type { NewRun, RunRepository, RunStatusUpdate } from '../../../core/ports/run.repository.port.js';
import { appendLogsOnce, planRunStatusUpdate } from '../../../core/runs/run-status.js';
import type { PendingEvent } from '../../../core/ports/event-publisher.port.js';
import { pendingEventToDocument, type PendingEventDocument } from './pending-events.mongo.js';
import { RUN_STATUS_RANK, type CostInfo, type Run, type RunLogEntry, type RunMode, type RunStatus } from '../../../core/runs/run.js';
import { dateOrNull, fromJsonText, isDuplicateKey, nextId, toJsonText } from './mongo-database.js';
import { Collections, Indexes } from './mongo-schema.js';

export interface RunDocument {
  _id: number;
  /** Customer event markers not yet turned into deliveries (pending-events.mongo.ts); absent when none. */
  pendingEvents?: PendingEventDocument[];
  organizationId: number;
  workflowId: number;
  definitionId: number;
  name: string;
  mode: RunMode;
  status: RunStatus;
  /** RUN_STATUS_RANK[status], for queries ("never backwards") and reports. */
  statusRank: number;
  disposition: string | null;
  campaignId: number | null;
  attemptId: number | null;
  telephonyConfigurationId: number | null;
  provider: string | null;
  providerCallId: string | null;
  callerNumber: string | null;
  calledNumber: string | null;
  initialContextJson: string;
  gatheredContextJson: string;
  logsJson: string;
  annotationsJson: string;
  /** Our own numbers, stored natively so reports can sum them (`costInfo.charge_usd`, ...). */
  costInfo: CostInfo;
  durationSeconds: number | null;
  transcriptKey: string | null;
  recordingKey: string | null;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  updatedAt: Date;
  /** Revision, +1 on every write: read-modify-write updates are conditional on it (optimistic concurrency). */
  rev: number;
}

export const runToDocument = (r: Run, rev: number): RunDocument => ({
  _id: r.id,
  organizationId: r.organizationId,
  workflowId: r.workflowId,
  definitionId: r.definitionId,
  name: r.name,
  mode: r.mode,
  status: r.status,
  statusRank: RUN_STATUS_RANK[r.status],
  disposition: r.disposition,
  campaignId: r.campaignId,
  attemptId: r.attemptId,
  telephonyConfigurationId: r.telephonyConfigurationId,
  provider: r.provider,
  providerCallId: r.providerCallId,
  callerNumber: r.callerNumber,
  calledNumber: r.calledNumber,
  initialContextJson: toJsonText(r.initialContext),
  gatheredContextJson: toJsonText(r.gatheredContext),
  logsJson: toJsonText(r.logs),
  annotationsJson: toJsonText(r.annotations),
  costInfo: { ...r.costInfo },
  durationSeconds: r.durationSeconds,
  transcriptKey: r.transcriptKey,
  recordingKey: r.recordingKey,
  createdAt: new Date(r.createdAt),
  startedAt: dateOrNull(r.startedAt),
  endedAt: dateOrNull(r.endedAt),
  updatedAt: new Date(r.updatedAt),
  rev,
});

export const runFromDocument = (d: RunDocument): Run => ({
  id: d._id,
  organizationId: d.organizationId,
  workflowId: d.workflowId,
  definitionId: d.definitionId,
  name: d.name,
  mode: d.mode,
  status: d.status,
  disposition: d.disposition ?? null,
  campaignId: d.campaignId ?? null,
  attemptId: d.attemptId ?? null,
  telephonyConfigurationId: d.telephonyConfigurationId ?? null,
  provider: d.provider ?? null,
  providerCallId: d.providerCallId ?? null,
  callerNumber: d.callerNumber ?? null,
  calledNumber: d.calledNumber ?? null,
  initialContext: fromJsonText<Record<string, unknown>>(d.initialContextJson, {}),
  gatheredContext: fromJsonText<Record<string, unknown>>(d.gatheredContextJson, {}),
  logs: fromJsonText<RunLogEntry[]>(d.logsJson, []),
  annotations: fromJsonText<Record<string, unknown>>(d.annotationsJson, {}),
  costInfo: {
    ...d.costInfo,
    call_duration_seconds: d.costInfo?.call_duration_seconds ?? d.durationSeconds ?? 0,
    service_token_usage: d.costInfo?.service_token_usage ?? 0,
    charge_usd: d.costInfo?.charge_usd ?? 0,
  },
  durationSeconds: d.durationSeconds ?? null,
  transcriptKey: d.transcriptKey ?? null,
  recordingKey: d.recordingKey ?? null,
  createdAt: new Date(d.createdAt),
  startedAt: dateOrNull(d.startedAt),
  endedAt: dateOrNull(d.endedAt),
  updatedAt: new Date(d.updatedAt),
});

const providerCallIdTaken = () => new ConflictError('provider_call_id_taken', 'Another run already has this provider call id');

/** How often a read-modify-write retries after losing a race before giving up (each loss means another write won). */
const MAX_ATTEMPTS = 50;

/**
 * RunRepository on MongoDB. `applyStatus` and `attachArtifacts` are read-modify-write with the same pure rule as
 * SQLite (`planRunStatusUpdate`), made atomic by optimistic concurrency on one document: the write is a
 * `findOneAndUpdate` conditional on the revision that was read (`rev`), and a lost race re-reads and re-plans.
 * So no update is ever applied to a state it was not planned on, a run never moves backwards, and of several
 * concurrent final statuses exactly one is applied.
 */
export class MongoRunRepository implements RunRepository {
  private readonly runs;

  constructor(private readonly db: Db) {
    this.runs = db.collection<RunDocument>(Collections.runs);
  }

  async create(organizationId: number, input: NewRun): Promise<Run> {
    const run: Run = {
      id: await nextId(this.db, Collections.runs),
      organizationId,
      workflowId: input.workflowId,
      definitionId: input.definitionId,
      name: input.name,
      mode: input.mode,
      status: 'queued',
      disposition: null,
      campaignId: input.campaignId ?? null,
      attemptId: input.attemptId ?? null,
      telephonyConfigurationId: input.telephonyConfigurationId ?? null,
      provider: input.provider ?? null,
      providerCallId: input.providerCallId ?? null,
      callerNumber: input.callerNumber ?? null,
      calledNumber: input.calledNumber ?? null,
      initialContext: input.initialContext ?? {},
      gatheredContext: {},
      logs: [],
      annotations: {},
      costInfo: { call_duration_seconds: 0, service_token_usage: 0, charge_usd: 0 },
      durationSeconds: null,
      transcriptKey: null,
      recordingKey: null,
      createdAt: input.now,
      startedAt: null,
      endedAt: null,
      updatedAt: input.now,
    };
    const doc = runToDocument(run, 0);
    try {
      await this.runs.insertOne(doc);
    } catch (e) {
      if (isDuplicateKey(e, Indexes.runsProviderCall)) throw providerCallIdTaken();
      throw e;
    }
    return runFromDocument(doc);
  }

  async get(organizationId: number, runId: number) {
    const d = await this.runs.findOne({ _id: runId, organizationId });
    return d ? runFromDocument(d) : null;
  }

  async listByWorkflow(organizationId: number, workflowId: number, page: { page: number; limit: number }) {
    return this.page({ organizationId, workflowId }, page);
  }

  async listByCampaign(organizationId: number, campaignId: number, page: { page: number; limit: number }) {
    return this.page({ organizationId, campaignId }, page);
  }

  private async page(filter: Filter<RunDocument>, page: { page: number; limit: number }) {
    const [docs, totalCount] = await Promise.all([
      this.runs.find(filter).sort({ createdAt: -1, _id: -1 }).skip((page.page - 1) * page.limit).limit(page.limit).toArray(),
      this.runs.countDocuments(filter),
    ]);
    return { runs: docs.map(runFromDocument), totalCount };
  }

  async countByWorkflow(organizationId: number, workflowId: number) {
    return this.runs.countDocuments({ organizationId, workflowId });
  }

  async dispositionsByWorkflow(organizationId: number, workflowId: number) {
    const values = await this.runs.distinct('disposition', { organizationId, workflowId, disposition: { $type: 'string' } });
    return (values as string[]).filter((v) => typeof v === 'string').sort();
  }

  async applyStatus(organizationId: number, runId: number, update: RunStatusUpdate) {
    try {
      // the customer event's marker goes in the same single-document update as the status (docs/webhooks.md)
      return await this.readModifyWrite(organizationId, runId, (run) => planRunStatusUpdate(run, update), update.event);
    } catch (e) {
      if (isDuplicateKey(e, Indexes.runsProviderCall)) throw providerCallIdTaken();
      throw e;
    }
  }

  async findForProviderEvent(runId: number) {
    const d = await this.runs.findOne({ _id: runId });
    return d ? runFromDocument(d) : null;
  }

  async findByProviderCallId(provider: string, providerCallId: string) {
    const d = await this.runs.findOne({ provider, providerCallId });
    return d ? runFromDocument(d) : null;
  }

  async attachArtifacts(
    organizationId: number,
    runId: number,
    patch: { transcriptKey?: string; recordingKey?: string; annotations?: Record<string, unknown>; logs?: readonly RunLogEntry[]; now: Date },
  ) {
    const { run } = await this.readModifyWrite(organizationId, runId, (r) => ({
      ...r,
      transcriptKey: patch.transcriptKey ?? r.transcriptKey,
      recordingKey: patch.recordingKey ?? r.recordingKey,
      annotations: { ...r.annotations, ...(patch.annotations ?? {}) },
      logs: appendLogsOnce(r.logs, patch.logs),
      updatedAt: patch.now,
    }));
    return run;
  }

  /**
   * Reads the run, computes its next state with `plan` (null: leave it), and writes that state only if the
   * document still has the revision that was read; otherwise starts over with the newer state.
   */
  private async readModifyWrite(
    organizationId: number, runId: number, plan: (run: Run) => Run | null, event?: PendingEvent,
  ): Promise<{ applied: boolean; run: Run | null }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const doc = await this.runs.findOne({ _id: runId, organizationId });
      if (!doc) return { applied: false, run: null };
      const run = runFromDocument(doc);
      const next = plan(run);
      if (!next) return { applied: false, run };
      const { _id, organizationId: _org, rev: _rev, ...fields } = runToDocument(next, doc.rev + 1);
      const written = await this.runs.findOneAndUpdate(
        { _id: runId, organizationId, rev: doc.rev },
        { $set: { ...fields, rev: doc.rev + 1 }, ...(event ? { $push: { pendingEvents: pendingEventToDocument(event) } } : {}) },
        { returnDocument: 'after' },
      );
      if (written) return { applied: true, run: runFromDocument(written) };
    }
    throw new Error(`run ${runId}: gave up after ${MAX_ATTEMPTS} concurrent modifications`);
  }
}
