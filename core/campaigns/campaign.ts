import type { CallOutcome } from '../ports/telephony-provider.port.js';
import type { ScheduleConfig } from './schedule.js';

/** API.md section 6. */
export type CampaignState = 'draft' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled';
export const CAMPAIGN_STATES: readonly CampaignState[] = ['draft', 'running', 'paused', 'completed', 'failed', 'cancelled'];
/** States in which a campaign still holds on to its telephony configuration (it may place calls again). */
export const ACTIVE_CAMPAIGN_STATES: readonly CampaignState[] = ['draft', 'running', 'paused'];
export type SourceType = 'csv' | 'google-sheet';

export interface RetryConfig {
  enabled: boolean;
  max_retries: number;
  retry_delay_seconds: number;
  retry_on_busy: boolean;
  retry_on_no_answer: boolean;
  retry_on_voicemail: boolean;
}

export interface CircuitBreakerConfig {
  enabled: boolean;
  /** (0, 1]: failures / calls at or above which the breaker trips. */
  failure_threshold: number;
  window_seconds: number;
  min_calls_in_window: number;
}

export const DEFAULT_RETRY_CONFIG: Readonly<RetryConfig> = Object.freeze({
  enabled: true, max_retries: 2, retry_delay_seconds: 300, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: false,
});
export const DEFAULT_CIRCUIT_BREAKER: Readonly<CircuitBreakerConfig> = Object.freeze({
  enabled: false, failure_threshold: 0.5, window_seconds: 120, min_calls_in_window: 5,
});
export const DEFAULT_MAX_CONCURRENCY = 5;

export type LogLevel = 'info' | 'warning' | 'error';
export interface CampaignLogEntry {
  ts: Date;
  level: LogLevel;
  event: string;
  message: string;
  details: Record<string, unknown>;
}

export interface Campaign {
  id: number;
  organizationId: number;
  name: string;
  workflowId: number;
  telephonyConfigurationId: number | null;
  state: CampaignState;
  sourceType: SourceType;
  sourceId: string;
  /** Contacts queued at creation. */
  totalRows: number;
  /** Contacts with a final outcome. */
  processedRows: number;
  /** Contacts whose final outcome is not a connected call. */
  failedRows: number;
  /** Calls handed to the provider (placeCall invoked), retries included. */
  executedCount: number;
  /** Attempts queued: one per contact at creation, plus one per retry scheduled. */
  totalQueuedCount: number;
  /** Attempts claimed and not yet ended (the slots in use, at most maxConcurrency). */
  inFlight: number;
  retryConfig: RetryConfig;
  maxConcurrency: number;
  /** Null: calls may be placed at any time. */
  scheduleConfig: ScheduleConfig | null;
  circuitBreaker: CircuitBreakerConfig;
  parentCampaignId: number | null;
  redialedCampaignId: number | null;
  /** Attempts that ended before this instant are not counted by the circuit breaker (set on resume). */
  breakerResetAt: Date | null;
  createdAt: Date;
  startedAt: Date | null;
  /** When the campaign reached completed, failed or cancelled. */
  completedAt: Date | null;
  updatedAt: Date;
}

/** `pending`: waits for `nextAttemptAt`; `active`: an attempt is claimed or its call is in flight; `done`: final outcome; `dropped`: cancelled first. */
export type ContactStatus = 'pending' | 'active' | 'done' | 'dropped';

export interface CampaignContact {
  id: number;
  organizationId: number;
  campaignId: number;
  /** Row number in the source (header = 1). */
  row: number;
  phoneNumber: string;
  context: Record<string, string>;
  status: ContactStatus;
  /** Attempts created so far (1-based number of the latest). */
  attemptsMade: number;
  nextAttemptAt: Date;
  /** The attempt in progress (or claimed then released), null when none. */
  currentAttemptId: number | null;
  lastOutcome: CallOutcome | null;
  finalOutcome: CallOutcome | null;
  updatedAt: Date;
}

/**
 * One dial of one contact. `claimed`: reserved, the provider not yet called (safe to hand back to the queue);
 * `dialing`: its run exists and the provider is being (or may have been) called; `placed`: the provider
 * accepted it; `ended`: it has an outcome. The attempt id is the provider's idempotency key.
 */
export type AttemptStatus = 'claimed' | 'dialing' | 'placed' | 'ended';

export interface ContactAttempt {
  id: number;
  organizationId: number;
  campaignId: number;
  contactId: number;
  /** 1-based. */
  attemptNumber: number;
  status: AttemptStatus;
  runId: number | null;
  providerCallId: string | null;
  outcome: CallOutcome | null;
  claimedAt: Date;
  /** When the reconciliation sweep should look at this attempt if it has not ended (lease expiry, then check time). */
  checkAt: Date;
  placedAt: Date | null;
  endedAt: Date | null;
}

/** The transitions of API.md section 6 driven by the API. */
export type CampaignAction = 'start' | 'pause' | 'resume' | 'cancel';
export const TRANSITIONS: Record<CampaignAction, { from: readonly CampaignState[]; to: CampaignState }> = {
  start: { from: ['draft', 'paused'], to: 'running' },
  resume: { from: ['paused'], to: 'running' },
  pause: { from: ['running'], to: 'paused' },
  cancel: { from: ['draft', 'running', 'paused'], to: 'cancelled' },
};
export const EDITABLE_STATES: readonly CampaignState[] = ['draft', 'paused'];

/** True when `outcome` is a connected call. */
export const isConnected = (outcome: CallOutcome): boolean => outcome === 'completed';

/**
 * Whether a contact whose attempt number `attemptNumber` ended with `outcome` is dialed again, per
 * `retry_config`. Failed and canceled calls are not retried; busy / no answer / voicemail per their flag, at
 * most `max_retries` times after the first attempt. Pure.
 */
export function shouldRetry(config: RetryConfig, outcome: CallOutcome, attemptNumber: number): boolean {
  if (!config.enabled) return false;
  if (attemptNumber - 1 >= config.max_retries) return false;
  switch (outcome) {
    case 'busy':
      return config.retry_on_busy;
    case 'no_answer':
      return config.retry_on_no_answer;
    case 'voicemail':
      return config.retry_on_voicemail;
    default:
      return false;
  }
}

/** Failures for the breaker: calls that could not be placed or ended failed. */
export const isBreakerFailure = (outcome: CallOutcome): boolean => outcome === 'failed';

export interface BreakerWindow {
  calls: number;
  failures: number;
}

/** True when the breaker trips (API.md section 6). Pure. */
export function breakerTrips(config: CircuitBreakerConfig, window: BreakerWindow): boolean {
  if (!config.enabled) return false;
  if (window.calls < config.min_calls_in_window || window.calls === 0) return false;
  return window.failures / window.calls >= config.failure_threshold;
}
