import type { Run, RunMode } from '../runs/run.js';

/**
 * What the usage report filters on, store-neutral (no SQL or Mongo syntax): every present member narrows the
 * result (AND). Built from the API's `start_date`/`end_date`/`filters` by `parseUsageQuery`.
 */
export interface UsageFilter {
  /** Inclusive lower bound on the run's `createdAt`. */
  createdFrom?: Date;
  /** Inclusive upper bound on the run's `createdAt`. */
  createdTo?: Date;
  runId?: number;
  workflowId?: number;
  campaignId?: number;
  /** Each string is a (case-sensitive) substring of the run's caller number; a run without one never matches. */
  callerNumberContains?: string[];
  /** Each string is a (case-sensitive) substring of the run's called number; a run without one never matches. */
  calledNumberContains?: string[];
  /** The run's disposition is one of these (never empty when present); a run without a disposition never matches. */
  dispositions?: string[];
  /** Inclusive bounds on the reported call duration in seconds (a run without a duration counts as 0). */
  durationMin?: number;
  durationMax?: number;
  /** `inbound` or `outbound` (the `callDirection` filter). */
  mode?: RunMode;
}

/** Sums over every run matching a filter (not just one page). Durations without a value count as 0. */
export interface UsageTotals {
  count: number;
  serviceTokens: number;
  durationSeconds: number;
}

export const EMPTY_USAGE_TOTALS: UsageTotals = Object.freeze({ count: 0, serviceTokens: 0, durationSeconds: 0 });

/** One run of the report with what the report shows beside it. */
export interface UsageRecord {
  run: Run;
  /** Name of the run's workflow; null if it cannot be found. */
  workflowName: string | null;
}

/** A position in the report's order (createdAt desc, id desc): the last record already seen. */
export interface UsageCursor {
  createdAt: Date;
  id: number;
}

export const cursorOf = (run: Pick<Run, 'createdAt' | 'id'>): UsageCursor => ({ createdAt: run.createdAt, id: run.id });

/** The report's order: newest first, then the higher id first. Negative when `a` comes first. */
export function compareUsageOrder(a: Pick<Run, 'createdAt' | 'id'>, b: Pick<Run, 'createdAt' | 'id'>): number {
  return b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id;
}

/** The duration the report shows and filters on: the run's duration, 0 while it has none. */
export const reportedDurationSeconds = (run: Pick<Run, 'durationSeconds'>): number => run.durationSeconds ?? 0;

/**
 * Whether `run` matches `filter`: the reference semantics every UsageRepository adapter implements (and the
 * contract suite checks them against this function).
 */
export function matchesUsageFilter(run: Run, filter: UsageFilter): boolean {
  const t = run.createdAt.getTime();
  if (filter.createdFrom && t < filter.createdFrom.getTime()) return false;
  if (filter.createdTo && t > filter.createdTo.getTime()) return false;
  if (filter.runId !== undefined && run.id !== filter.runId) return false;
  if (filter.workflowId !== undefined && run.workflowId !== filter.workflowId) return false;
  if (filter.campaignId !== undefined && run.campaignId !== filter.campaignId) return false;
  if (filter.mode !== undefined && run.mode !== filter.mode) return false;
  const contains = (value: string | null, parts: string[] | undefined) => !parts || (value != null && parts.every((p) => value.includes(p)));
  if (!contains(run.callerNumber, filter.callerNumberContains)) return false;
  if (!contains(run.calledNumber, filter.calledNumberContains)) return false;
  if (filter.dispositions && (run.disposition == null || !filter.dispositions.includes(run.disposition))) return false;
  const d = reportedDurationSeconds(run);
  if (filter.durationMin !== undefined && d < filter.durationMin) return false;
  if (filter.durationMax !== undefined && d > filter.durationMax) return false;
  return true;
}

/**
 * The charge of a call: its duration in minutes times the organization's per-minute price, billed by the second
 * and rounded to a millionth of a dollar (so 0.1 + 0.2 never shows as 0.30000000000000004). 0 for a missing,
 * negative or non-finite input.
 */
export function chargeFor(durationSeconds: number | null | undefined, pricePerMinuteUsd: number): number {
  if (durationSeconds == null || !Number.isFinite(durationSeconds) || durationSeconds <= 0) return 0;
  if (!Number.isFinite(pricePerMinuteUsd) || pricePerMinuteUsd <= 0) return 0;
  return Math.round((durationSeconds / 60) * pricePerMinuteUsd * 1e6) / 1e6;
}
