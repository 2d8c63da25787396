import type { RunStatusUpdate } from '../ports/run.repository.port.js';
import { isLateDispositionAllowed, resolveDisposition } from './disposition-precedence.js';
import { RUN_STATUS_RANK, isFinalRunStatus, type CostInfo, type Run, type RunLogEntry } from './run.js';

/**
 * The rule every RunRepository adapter applies inside its atomic step (a SQLite IMMEDIATE transaction, a MongoDB
 * conditional update): what `run` becomes after `update`, or null when the update must not be applied.
 *
 * Not applied (null):
 * - the run is final (`completed`/`failed`): a final run never changes, whatever arrives later, with two
 *   exceptions: a transfer's outcome (`transferred`/`transfer_failed`) that the disposition rule lets stand
 *   (`isLateDispositionAllowed`, core/runs/disposition-precedence.ts) and that brings new details still sets the
 *   disposition, merges `gatheredContext` and appends `log`; and the call's conversation record
 *   (`update.conversation`, see below); status, times and duration stay;
 * - a conversation record (`update.conversation`: the voice session's `gathered_context`, disposition and token
 *   usage) when the run already took one (a `conversation_recorded` log entry): a run takes it once, whatever
 *   order the carrier's final status and the session's end arrive in. On a final run it merges `gatheredContext`
 *   and `costInfo` (not the duration), sets the disposition by the one rule (`resolveDisposition`: newer than
 *   the carrier's `completed`, never over a transfer outcome) and appends its log;
 * - the update's status ranks below the run's (a late `ringing` after `in_progress`);
 * - the same status with nothing new (a duplicate or replayed callback): replaying is a no-op;
 * - the update names a provider call id other than the one the run recorded (`isAnotherCall`): it is another
 *   call's event (a signed callback replayed onto this run's URL), and a recorded id is never overwritten.
 *
 * Applied: a higher rank, or the same non-final status carrying new details (a provider call id the run did not
 * have, new gathered context, disposition, duration or cost). Then:
 * - `providerCallId` is set only when the run has none (the first one wins);
 * - `gatheredContext` and `costInfo` are merged key by key; `disposition` is the one rule's choice between the
 *   run's and the update's (`resolveDisposition`: a transfer outcome is never replaced by `completed`) and also
 *   lands in `gatheredContext.mapped_call_disposition`;
 * - `durationSeconds` and `costInfo.call_duration_seconds` stay equal (either one given sets both);
 * - `startedAt` is set on the first `in_progress`, or, when a final status with a positive duration arrives
 *   before any `in_progress` was seen, to `at` minus that duration;
 * - `endedAt` is set on the final status; `updatedAt` to `at`; `log` is appended, and a conversation record
 *   also appends its `conversation_recorded` marker (`CONVERSATION_RECORDED`).
 * Pure: never mutates `run`, never throws.
 */
export function planRunStatusUpdate(run: Run, update: RunStatusUpdate): Run | null {
  if (isAnotherCall(run, update.providerCallId)) return null;
  if (update.conversation && hasConversationRecord(run)) return null;
  if (isFinalRunStatus(run.status)) return update.conversation ? planLateConversation(run, update) : planLateDisposition(run, update);
  const from = RUN_STATUS_RANK[run.status];
  const to = RUN_STATUS_RANK[update.status];
  if (to < from) return null;

  const disposition = resolveDisposition(run.disposition, update.disposition);
  const gatheredContext = { ...run.gatheredContext, ...(update.gatheredContext ?? {}) };
  if (disposition != null) gatheredContext.mapped_call_disposition = disposition;
  const durationSeconds = update.durationSeconds ?? update.costInfo?.call_duration_seconds ?? run.durationSeconds;
  const costInfo: CostInfo = { ...run.costInfo };
  for (const [k, v] of Object.entries(update.costInfo ?? {})) {
    if (typeof v === 'number' && Number.isFinite(v)) (costInfo as unknown as Record<string, number>)[k] = v;
  }
  costInfo.call_duration_seconds = durationSeconds ?? 0;

  const final = isFinalRunStatus(update.status);
  let startedAt = run.startedAt;
  if (!startedAt && update.status === 'in_progress') startedAt = update.at;
  if (!startedAt && final && durationSeconds != null && durationSeconds > 0) {
    startedAt = new Date(update.at.getTime() - Math.round(durationSeconds * 1000));
  }

  const next: Run = {
    ...run,
    status: update.status,
    providerCallId: run.providerCallId ?? update.providerCallId ?? null,
    disposition,
    gatheredContext,
    costInfo,
    durationSeconds,
    startedAt,
    endedAt: final ? (run.endedAt ?? update.at) : run.endedAt,
    updatedAt: update.at,
    logs: logsAfter(run, update, disposition),
  };
  if (to === from && !hasNewDetails(run, next)) return null;
  return next;
}

/** The log event that marks a run as holding its call's conversation record (`RunStatusUpdate.conversation`). */
export const CONVERSATION_RECORDED = 'conversation_recorded';

/** True when the run already took its conversation record (see `planRunStatusUpdate`). */
export const hasConversationRecord = (run: Pick<Run, 'logs'>): boolean => run.logs.some((l) => l.event === CONVERSATION_RECORDED);

/** The run's log after `update`: its `log`, and for a conversation record the `conversation_recorded` marker. */
function logsAfter(run: Run, update: RunStatusUpdate, disposition: string | null): RunLogEntry[] {
  const added: RunLogEntry[] = update.log ? [update.log] : [];
  if (update.conversation) {
    added.push({
      ts: update.at.toISOString(),
      event: CONVERSATION_RECORDED,
      message: `the conversation's record was stored${isFinalRunStatus(run.status) ? ' after the call\'s final status' : ''}`,
      details: { disposition, late: isFinalRunStatus(run.status) },
    });
  }
  return added.length ? [...run.logs, ...added] : run.logs;
}

/**
 * A final run's conversation record (the carrier's final status arrived before the voice session stored it):
 * context, disposition (the one rule) and token usage land; status, times, duration and charge stay.
 */
function planLateConversation(run: Run, update: RunStatusUpdate): Run {
  const disposition = resolveDisposition(run.disposition, update.disposition);
  const gatheredContext = { ...run.gatheredContext, ...(update.gatheredContext ?? {}) };
  if (disposition != null) gatheredContext.mapped_call_disposition = disposition;
  const costInfo: CostInfo = { ...run.costInfo };
  for (const [k, v] of Object.entries(update.costInfo ?? {})) {
    if (k === 'call_duration_seconds' || k === 'charge_usd') continue;
    if (typeof v === 'number' && Number.isFinite(v)) (costInfo as unknown as Record<string, number>)[k] = v;
  }
  return { ...run, disposition, gatheredContext, costInfo, updatedAt: update.at, logs: logsAfter(run, update, disposition) };
}

/** A final run's only possible change: a transfer outcome learned after the call ended (see above). */
function planLateDisposition(run: Run, update: RunStatusUpdate): Run | null {
  if (!isLateDispositionAllowed(run.disposition, update.disposition)) return null;
  const disposition = resolveDisposition(run.disposition, update.disposition);
  const gatheredContext = { ...run.gatheredContext, ...(update.gatheredContext ?? {}) };
  if (disposition != null) gatheredContext.mapped_call_disposition = disposition;
  const next: Run = {
    ...run,
    disposition,
    gatheredContext,
    updatedAt: update.at,
    logs: update.log ? [...run.logs, update.log] : run.logs,
  };
  return hasNewDetails(run, next) ? next : null;
}

/**
 * True when `providerCallId` names a call other than the one `run` recorded, and none of `callIds` (other ids
 * of the same call, see `NormalizedCallEvent.callIds`) is the recorded one either. A run with no recorded id,
 * or an event that names none, is not another call's (the first id an event carries is recorded). Pure.
 */
export function isAnotherCall(run: Pick<Run, 'providerCallId'>, providerCallId: string | null | undefined, callIds: readonly string[] = []): boolean {
  return !!providerCallId && !!run.providerCallId && run.providerCallId !== providerCallId && !callIds.includes(run.providerCallId);
}

function hasNewDetails(before: Run, after: Run): boolean {
  const pick = (r: Run) =>
    canonicalJson({
      providerCallId: r.providerCallId, disposition: r.disposition, gatheredContext: r.gatheredContext,
      costInfo: r.costInfo, durationSeconds: r.durationSeconds,
    });
  return pick(before) !== pick(after);
}

/** JSON with object keys sorted, so two values compare equal whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, (v as Record<string, unknown>)[k]]))
      : v);
}

/**
 * `logs` with `entries` appended in order, each unless an equal entry is already there or earlier in `entries` (so
 * replays do not repeat one). Every entry is serialized once: a call's ending appends its dozens of entries in one
 * write, and comparing each against every stored one by re-serializing both made that write quadratic.
 */
export function appendLogsOnce(logs: RunLogEntry[], entries: readonly RunLogEntry[] | undefined): RunLogEntry[] {
  if (!entries?.length) return logs;
  const seen = new Set(logs.map((l) => canonicalJson(l)));
  const added: RunLogEntry[] = [];
  for (const entry of entries) {
    const key = canonicalJson(entry);
    if (seen.has(key)) continue;
    seen.add(key);
    added.push(entry);
  }
  return added.length ? [...logs, ...added] : logs;
}
