import type { PendingEvent } from './event-publisher.port.js';
import type {
  BreakerWindow, Campaign, CampaignContact, CampaignLogEntry, CampaignState, CircuitBreakerConfig, ContactAttempt, ContactStatus,
  RetryConfig, SourceType,
} from '../campaigns/campaign.js';
import type { ScheduleConfig } from '../campaigns/schedule.js';
import type { CallOutcome } from './telephony-provider.port.js';

export interface NewContact {
  row: number;
  phoneNumber: string;
  context: Record<string, string>;
}

export interface NewCampaign {
  name: string;
  workflowId: number;
  telephonyConfigurationId: number | null;
  sourceType: SourceType;
  sourceId: string;
  retryConfig: RetryConfig;
  maxConcurrency: number;
  scheduleConfig: ScheduleConfig | null;
  circuitBreaker: CircuitBreakerConfig;
  /** Queued in this order (first attempt due at `now`); `totalRows` and `totalQueuedCount` become their count. */
  contacts: NewContact[];
  /** Log entries stored with the campaign (`campaign_created`, `duplicates_skipped`). */
  logs: CampaignLogEntry[];
  now: Date;
}

export interface CampaignPatch {
  name?: string;
  retryConfig?: RetryConfig;
  maxConcurrency?: number;
  scheduleConfig?: ScheduleConfig | null;
  circuitBreaker?: CircuitBreakerConfig;
  now: Date;
}

export interface TransitionRequest {
  from: readonly CampaignState[];
  to: CampaignState;
  now: Date;
  /** Appended in the same atomic step when the transition happens. */
  log?: CampaignLogEntry;
  /** The customer event of this transition, stored as a pending marker in the same atomic step when it happens. */
  event?: PendingEvent;
}

export type ClaimResult =
  | { kind: 'claimed'; campaign: Campaign; contact: CampaignContact; attempt: ContactAttempt }
  | { kind: 'not_running' }
  | { kind: 'at_capacity' }
  /** Nothing due now; `nextDueAt` is the earliest pending contact's due time, null when none is pending. */
  | { kind: 'none_due'; nextDueAt: Date | null };

export interface OutcomeRecord {
  outcome: CallOutcome;
  now: Date;
  /** Dial the contact again at this time (a retry), or null for a final outcome. */
  retryAt: Date | null;
}

export interface RecordedOutcome {
  /** False when the attempt had already ended (a replay): nothing changed. */
  recorded: boolean;
  attempt: ContactAttempt;
  contact: CampaignContact;
  campaign: Campaign;
}

/** An attempt the reconciliation sweep looks at, with the contact's tenant. */
export interface AttemptToCheck {
  attempt: ContactAttempt;
  contact: CampaignContact;
}

/**
 * Campaigns with their contacts, attempts and logs: one aggregate. Every method is scoped by organization,
 * except the two documented engine entry points (`listRunning`, `attemptsDueForCheck`) that find work across
 * tenants for the background sweep. Implementations make each method one atomic step (a SQLite IMMEDIATE
 * transaction; on MongoDB conditional single-document updates in the order documented here).
 */
export const CampaignRepository = Symbol.for('callplane.CampaignRepository');
export interface CampaignRepository {
  /**
   * Creates a `draft` campaign with its contacts (each `pending`, due at `now`, no attempt yet) and logs, at once.
   * `totalRows` = `totalQueuedCount` = number of contacts. Not idempotent.
   */
  create(organizationId: number, input: NewCampaign): Promise<Campaign>;
  /** The campaign, or null when absent or in another organization. */
  get(organizationId: number, campaignId: number): Promise<Campaign | null>;
  /** The organization's campaigns, newest first (created_at desc, id desc), optionally of one state. */
  list(organizationId: number, filter?: { state?: CampaignState }): Promise<Campaign[]>;
  /**
   * Changes the given fields only while the campaign's state is one of `onlyIn` (checked in the same atomic step).
   * Returns `{campaign: null}` when absent; `{updated: false, campaign}` (unchanged) when the state forbids it.
   */
  update(organizationId: number, campaignId: number, patch: CampaignPatch, onlyIn: readonly CampaignState[]): Promise<{ campaign: Campaign | null; updated: boolean }>;
  /**
   * Moves the state to `to` only when it is one of `from` (atomic compare-and-set). Side effects in the same step:
   * `startedAt` set on the first move to `running`; `breakerResetAt` = now on every move to `running`;
   * `completedAt` set on a move to `completed`, `failed` or `cancelled`; on `cancelled`, every `pending`
   * contact becomes `dropped`; `log` appended. Returns `{changed: false}` with the stored campaign when the
   * state was not in `from`; `{campaign: null}` when absent. Idempotent in effect (a repeat does not change).
   */
  transition(organizationId: number, campaignId: number, request: TransitionRequest): Promise<{ campaign: Campaign | null; changed: boolean }>;
  /** Appends a log entry. No-op when the campaign is absent. */
  appendLog(organizationId: number, campaignId: number, entry: CampaignLogEntry): Promise<void>;
  /** The latest `limit` entries, oldest first (newest last). Empty when absent. */
  listLogs(organizationId: number, campaignId: number, limit: number): Promise<CampaignLogEntry[]>;
  /** How many of the organization's campaigns in draft, running or paused use the configuration. */
  countActiveUsingTelephonyConfiguration(organizationId: number, telephonyConfigurationId: number): Promise<number>;
  /** Engine entry point (all tenants): every running campaign. */
  listRunning(): Promise<Array<{ organizationId: number; campaignId: number }>>;

  /** The campaign's contacts in row order, optionally of one status (diagnostics, tests). */
  listContacts(organizationId: number, campaignId: number, filter?: { status?: ContactStatus }): Promise<CampaignContact[]>;
  /** The attempt, or null. */
  getAttempt(organizationId: number, attemptId: number): Promise<ContactAttempt | null>;
  /** The campaign's attempts in id order (diagnostics, tests). */
  listAttempts(organizationId: number, campaignId: number): Promise<ContactAttempt[]>;

  /**
   * Claims the next due contact, atomically, only while the campaign is `running` and `inFlight <
   * maxConcurrency`: increments `inFlight` under that condition, takes the `pending` contact with the earliest
   * `nextAttemptAt <= now` (then lowest id), makes it `active`, and returns its attempt in `claimed` status with
   * `checkAt = now + leaseMs`. The attempt is a new one (number = attemptsMade + 1) unless the contact holds a
   * `claimed` attempt that was released back to the queue, which is reused (same id, same number: the provider
   * was never called for it). When no contact is due, the increment is undone (`none_due`). Several processes
   * may call this at once: the cap is never exceeded and no contact is claimed twice.
   */
  claimNextContact(organizationId: number, campaignId: number, options: { now: Date; leaseMs: number }): Promise<ClaimResult>;
  /**
   * `claimed` → `dialing` only while the campaign is `running`. Returns the attempt, or null when it is not
   * `claimed` or the campaign is no longer running (the caller then releases it). Call before creating the run.
   */
  markDialing(organizationId: number, attemptId: number, input: { now: Date; checkAt: Date }): Promise<ContactAttempt | null>;
  /**
   * Records the run of a `dialing` attempt that has none and counts the call (`executedCount + 1`). Call right
   * before the provider is called: from here on the attempt is never redialed, only reconciled. Null when the
   * attempt is not `dialing` or already has a run.
   */
  attachRun(organizationId: number, attemptId: number, input: { runId: number; now: Date }): Promise<ContactAttempt | null>;
  /** `dialing` → `placed` with the provider's call id. Null when the attempt is not `dialing` (e.g. it already ended). */
  markPlaced(organizationId: number, attemptId: number, input: { providerCallId: string; now: Date; checkAt: Date }): Promise<ContactAttempt | null>;
  /**
   * Hands back an attempt whose provider was never called (`claimed`, or `dialing` without a run): frees its slot (`inFlight - 1`), makes the contact `pending` again (or
   * `dropped` when the campaign is cancelled, failed or completed), keeps the attempt for reuse by the next claim.
   * The attempt becomes `claimed` again. Returns false (nothing changed) for any other attempt.
   */
  releaseAttempt(organizationId: number, attemptId: number, now: Date): Promise<boolean>;
  /**
   * Ends a not-yet-ended attempt with `outcome`, atomically with everything it moves: the slot is freed
   * (`inFlight - 1`); with `retryAt` the contact is `pending` again due then and `totalQueuedCount + 1` (but
   * `dropped` when the campaign is cancelled, failed or completed); without, the contact is `done` with
   * `finalOutcome`, `processedRows + 1`, and `failedRows + 1` unless the outcome is a connected call.
   * Idempotent: an already ended attempt changes nothing (`recorded: false`). Null when the attempt is absent.
   */
  recordOutcome(organizationId: number, attemptId: number, record: OutcomeRecord): Promise<RecordedOutcome | null>;
  /** Moves an open attempt's next check time. No-op when absent or ended. */
  postponeCheck(organizationId: number, attemptId: number, checkAt: Date): Promise<void>;
  /** Engine entry point (all tenants): not-ended attempts whose `checkAt <= now`, oldest first, at most `limit`. */
  attemptsDueForCheck(now: Date, limit: number): Promise<AttemptToCheck[]>;
  /** Attempts of the campaign that ended at or after `since` (calls) and how many of them failed. */
  breakerWindow(organizationId: number, campaignId: number, since: Date): Promise<BreakerWindow>;
  /**
   * `running` → `completed` when no contact is `pending` or `active` and nothing is in flight (atomic check);
   * appends `log` and stores `event` as a pending marker in the same step. Returns the completed campaign, or null
   * when it did not complete.
   */
  completeIfDone(organizationId: number, campaignId: number, now: Date, log: CampaignLogEntry, event?: PendingEvent): Promise<Campaign | null>;
}
