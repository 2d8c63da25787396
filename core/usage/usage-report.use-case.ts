import type { UsageRepository } from '../ports/usage.repository.port.js';
import type { RunViews } from '../runs/runs.use-case.js';
import type { RunMode } from '../runs/run.js';
import { csvLine } from './usage-csv.js';
import { parseUsageQuery, type UsageQueryInput } from './usage-query.js';
import { cursorOf, EMPTY_USAGE_TOTALS, reportedDurationSeconds, type UsageCursor, type UsageRecord, type UsageTotals } from './usage.js';

/** One entry of the usage list (spec 2.9), in domain form; http presents it in snake_case. */
export interface UsageEntry {
  id: number;
  workflowId: number;
  workflowName: string;
  name: string;
  createdAt: Date;
  serviceTokenUsage: number;
  callDurationSeconds: number;
  recordingUrl: string | null;
  transcriptUrl: string | null;
  /** The other party: the called number of an outbound call, the caller of an inbound one. */
  phoneNumber: string | null;
  callerNumber: string | null;
  calledNumber: string | null;
  callType: RunMode;
  /** `gathered_context.mapped_call_disposition`; null while the call has none. */
  disposition: string | null;
  initialContext: Record<string, unknown>;
  gatheredContext: Record<string, unknown>;
  /** What the run was charged when it finished: duration × the organization's per-minute price then. */
  chargeUsd: number;
}

export interface UsageReportPage {
  entries: UsageEntry[];
  totals: UsageTotals;
  page: number;
  limit: number;
  totalPages: number;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Builds the report's entries from records (signing artifact URLs through RunViews). */
export class UsageEntries {
  constructor(private readonly views: RunViews) {}

  async entry({ run, workflowName }: UsageRecord): Promise<UsageEntry> {
    const v = await this.views.view(run);
    const callerNumber = run.callerNumber ?? str(v.initialContext.caller_number);
    const calledNumber = run.calledNumber ?? str(v.initialContext.called_number);
    return {
      id: run.id,
      workflowId: run.workflowId,
      workflowName: workflowName ?? '',
      name: run.name,
      createdAt: run.createdAt,
      serviceTokenUsage: run.costInfo.service_token_usage,
      callDurationSeconds: reportedDurationSeconds(run),
      recordingUrl: v.recordingUrl,
      transcriptUrl: v.transcriptUrl,
      phoneNumber: run.mode === 'inbound' ? callerNumber : calledNumber,
      callerNumber,
      calledNumber,
      callType: run.mode,
      disposition: run.disposition ?? str(v.gatheredContext.mapped_call_disposition),
      initialContext: v.initialContext,
      gatheredContext: v.gatheredContext,
      chargeUsd: run.costInfo.charge_usd,
    };
  }
}

/**
 * `GET /organizations/usage/runs` (spec 4.9, API.md section 9): a page of the organization's runs matching the
 * dates and filters, newest first, with totals over every match. Throws ValidationError (422) for unparseable
 * dates or a `filters` that is not a JSON array; unknown or ill-typed filter items are ignored.
 */
export class GetUsageReport {
  constructor(
    private readonly usage: UsageRepository,
    private readonly entries: UsageEntries,
  ) {}

  async execute(organizationId: number, input: UsageQueryInput & { page: number; limit: number }): Promise<UsageReportPage> {
    const page = Math.max(1, Math.floor(input.page));
    const limit = Math.max(1, Math.floor(input.limit));
    const { filter, matchesNothing } = parseUsageQuery(input);
    if (matchesNothing) return { entries: [], totals: { ...EMPTY_USAGE_TOTALS }, page, limit, totalPages: 0 };
    const { records, totals } = await this.usage.page(organizationId, filter, { page, limit });
    return {
      entries: await Promise.all(records.map((r) => this.entries.entry(r))),
      totals,
      page,
      limit,
      totalPages: Math.ceil(totals.count / limit),
    };
  }
}

/** The CSV export's columns: the entry's fields (spec 2.9) in this order; contexts as JSON text. */
export const USAGE_CSV_COLUMNS = [
  'id', 'created_at', 'workflow_id', 'workflow_name', 'name', 'call_type', 'phone_number', 'caller_number', 'called_number',
  'disposition', 'call_duration_seconds', 'service_token_usage', 'charge_usd', 'recording_url', 'transcript_url',
  'initial_context', 'gathered_context',
] as const;

const csvCells = (e: UsageEntry): unknown[] => [
  e.id, e.createdAt.toISOString(), e.workflowId, e.workflowName, e.name, e.callType, e.phoneNumber, e.callerNumber, e.calledNumber,
  e.disposition, e.callDurationSeconds, e.serviceTokenUsage, e.chargeUsd, e.recordingUrl, e.transcriptUrl,
  e.initialContext, e.gatheredContext,
];

/**
 * `GET /organizations/usage/runs.csv`: every run matching the same query as CSV (header line first), produced
 * lazily in batches of `batchSize` runs read with keyset cursors, so memory stays flat whatever the size. The
 * query is validated before anything is produced (ValidationError, 422). Cells are spreadsheet-safe (`csvCell`).
 */
export class ExportUsageCsv {
  constructor(
    private readonly usage: UsageRepository,
    private readonly entries: UsageEntries,
    private readonly batchSize = 500,
  ) {}

  /** Validates now; the returned iterable reads storage only as it is consumed. */
  execute(organizationId: number, input: UsageQueryInput): AsyncIterable<string> {
    const { filter, matchesNothing } = parseUsageQuery(input);
    const { usage, entries, batchSize } = this;
    return {
      async *[Symbol.asyncIterator]() {
        yield csvLine(USAGE_CSV_COLUMNS);
        if (matchesNothing) return;
        let cursor: UsageCursor | null = null;
        for (;;) {
          const batch: UsageRecord[] = await usage.after(organizationId, filter, cursor, batchSize);
          if (batch.length === 0) return;
          let chunk = '';
          for (const record of batch) chunk += csvLine(csvCells(await entries.entry(record)));
          yield chunk;
          if (batch.length < batchSize) return;
          cursor = cursorOf(batch[batch.length - 1]!.run);
        }
      },
    };
  }
}
