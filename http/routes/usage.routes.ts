import { once } from 'node:events';
import type { ExportUsageCsv, GetUsageReport, UsageEntry, UsageReportPage } from '../../core/usage/usage-report.use-case.js';
import { defineRoutes, type JsonSchema } from '../routing/route.js';
import { anyObject, arr, dateTime, id, nullable, num, obj, pagination, str } from '../routing/schema-helpers.js';

export interface UsageRouteDeps {
  getUsageReport: GetUsageReport;
  exportUsageCsv: ExportUsageCsv;
}

/** An entry of the usage list (spec 2.9). */
export const presentUsageEntry = (e: UsageEntry) => ({
  id: e.id,
  workflow_id: e.workflowId,
  workflow_name: e.workflowName,
  name: e.name,
  created_at: e.createdAt.toISOString(),
  service_token_usage: e.serviceTokenUsage,
  call_duration_seconds: e.callDurationSeconds,
  recording_url: e.recordingUrl,
  transcript_url: e.transcriptUrl,
  phone_number: e.phoneNumber,
  caller_number: e.callerNumber,
  called_number: e.calledNumber,
  call_type: e.callType,
  disposition: e.disposition,
  initial_context: e.initialContext,
  gathered_context: e.gatheredContext,
  charge_usd: e.chargeUsd,
});

export const presentUsagePage = (p: UsageReportPage) => ({
  runs: p.entries.map(presentUsageEntry),
  total_service_tokens: p.totals.serviceTokens,
  total_duration_seconds: p.totals.durationSeconds,
  total_count: p.totals.count,
  page: p.page,
  limit: p.limit,
  total_pages: p.totalPages,
});

const entrySchema = obj({
  id: id(), workflow_id: id(), workflow_name: str(), name: str(), created_at: dateTime(), service_token_usage: num(),
  call_duration_seconds: num(), recording_url: nullable(str()), transcript_url: nullable(str()), phone_number: nullable(str()),
  caller_number: nullable(str()), called_number: nullable(str()), call_type: { enum: ['inbound', 'outbound'] },
  disposition: nullable(str()), initial_context: anyObject(), gathered_context: anyObject(), charge_usd: num(),
}, ['id', 'workflow_id', 'workflow_name', 'name', 'created_at', 'service_token_usage', 'call_duration_seconds', 'recording_url',
  'transcript_url', 'phone_number', 'caller_number', 'called_number', 'call_type', 'disposition', 'initial_context', 'gathered_context', 'charge_usd']);

const FILTERS_DOC = 'JSON-encoded array of `{attribute, type, value}`: `runId`/`workflowId`/`campaignId` (`number`, `{value: number}`), '
  + '`callerNumber`/`calledNumber` (`text`, `{value: string}`, substring), `dispositionCode` (`multiSelect`, `{codes: [string]}`, any of), '
  + '`duration` (`numberRange`, `{min, max}` seconds, inclusive, either may be left out), `callDirection` (`radio`, `{value: "inbound"|"outbound"}`). '
  + 'Not JSON or not an array: 422 on `["query","filters"]`. Items with an unknown attribute, a mismatching type or value shape, an empty text '
  + 'or an empty code list are ignored; the same attribute twice narrows further.';

const dateParam = (bound: string) => str({ description: `ISO 8601 date-time (a value without offset is UTC; a date alone is its midnight); ${bound} bound on created_at, inclusive. Unparseable: 422.` });

const reportQuery: Record<string, JsonSchema> = {
  start_date: dateParam('lower'),
  end_date: dateParam('upper'),
  filters: str({ description: FILTERS_DOC }),
};

export function usageRoutes(d: UsageRouteDeps) {
  return defineRoutes([
    {
      method: 'get', path: '/organizations/usage/runs', operationId: 'listUsageRuns', summary: 'Usage: the organization\'s runs with totals', tags: ['usage'], auth: 'any',
      description: 'Runs (calls) of the caller\'s organization matching the dates and filters, ordered by `created_at` desc then `id` desc. '
        + '`total_service_tokens`, `total_duration_seconds` and `total_count` cover every matching run, not just the page; `total_pages` = ceil(total_count / limit). '
        + '`phone_number` is the other party (called number of an outbound call, caller of an inbound one); `disposition` is `gathered_context.mapped_call_disposition`; '
        + '`charge_usd` is what the call was charged when it finished (duration × the organization\'s per-minute price, `PUT /organizations/settings`).',
      query: obj({ ...reportQuery, ...pagination }),
      response: obj({
        runs: arr(entrySchema), total_service_tokens: num(), total_duration_seconds: num(), total_count: { type: 'integer', minimum: 0 },
        page: { type: 'integer', minimum: 1 }, limit: { type: 'integer', minimum: 1 }, total_pages: { type: 'integer', minimum: 0 },
      }, ['runs', 'total_service_tokens', 'total_duration_seconds', 'total_count', 'page', 'limit', 'total_pages']),
      handler: async ({ principal, query }) =>
        presentUsagePage(await d.getUsageReport.execute(principal.organizationId, {
          start_date: query.start_date, end_date: query.end_date, filters: query.filters, page: query.page, limit: query.limit,
        })),
    },
    {
      method: 'get', path: '/organizations/usage/runs.csv', operationId: 'exportUsageRunsCsv', summary: 'Usage: every matching run as CSV', tags: ['usage'], auth: 'any',
      description: 'The same query as `GET /organizations/usage/runs` (dates and filters; no pagination: every matching run, newest first), streamed as '
        + '`text/csv` with a header line. Cells starting with `=`, `+`, `-`, `@`, a tab or a carriage return get a leading `\'` so spreadsheets never '
        + 'run them as formulas; contexts are JSON text.',
      query: obj(reportQuery),
      response: { contentType: 'text/csv', description: 'CSV (RFC 4180, CRLF line ends), one line per run after the header' },
      handler: async ({ principal, query, res }) => {
        const lines = d.exportUsageCsv.execute(principal.organizationId, { start_date: query.start_date, end_date: query.end_date, filters: query.filters });
        res.status(200);
        res.setHeader('Content-Type', 'text/csv; charset=utf-8');
        res.setHeader('Content-Disposition', 'attachment; filename="usage-runs.csv"');
        res.setHeader('Cache-Control', 'private, no-store');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        for await (const chunk of lines) {
          if (res.destroyed) break; // the client went away: stop reading storage
          if (!res.write(chunk)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
        }
        if (!res.destroyed) res.end();
        return undefined;
      },
    },
  ]);
}
