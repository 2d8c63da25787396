import type {
  AttemptStatus, BreakerWindow, Campaign, CampaignContact, CampaignLogEntry, CampaignState, ContactAttempt, ContactStatus, LogLevel,
} from '../../../core/campaigns/campaign.js';
import type { PendingEvent } from '../../../core/ports/event-publisher.port.js';
import { appendPendingEvent } from './pending-events.sqlite.js';
import type {
  AttemptToCheck, CampaignPatch, CampaignRepository, ClaimResult, NewCampaign, OutcomeRecord, RecordedOutcome, TransitionRequest,
} from '../../../core/ports/campaign.repository.port.js';
import type { CallOutcome } from '../../../core/ports/telephony-provider.port.js';
import { fromMs, fromMsOrNull, toMs, type SqliteDatabase } from './database.js';

/** Contacts per transaction when a campaign is created: about 8 ms of work each (1,000 measured up to 64 ms stalls on a busy machine). */
const CONTACT_BATCH = 500;

export interface CampaignRow {
  id: number; organization_id: number; name: string; workflow_id: number; telephony_configuration_id: number | null; state: string;
  source_type: string; source_id: string; total_rows: number; processed_rows: number; failed_rows: number; executed_count: number;
  total_queued_count: number; in_flight: number; retry_config: string; max_concurrency: number; schedule_config: string | null;
  circuit_breaker: string; parent_campaign_id: number | null; redialed_campaign_id: number | null; breaker_reset_at: number | null;
  created_at: number; started_at: number | null; completed_at: number | null; updated_at: number;
}
export interface ContactRow {
  id: number; organization_id: number; campaign_id: number; row_number: number; phone_number: string; context: string; status: string;
  attempts_made: number; next_attempt_at: number; current_attempt_id: number | null; last_outcome: string | null; final_outcome: string | null;
  updated_at: number;
}
export interface AttemptRow {
  id: number; organization_id: number; campaign_id: number; contact_id: number; attempt_number: number; status: string; run_id: number | null;
  provider_call_id: string | null; outcome: string | null; claimed_at: number; check_at: number; placed_at: number | null; ended_at: number | null;
}
interface LogRow { ts: number; level: string; event: string; message: string; details: string }

export const campaignFromRow = (r: CampaignRow): Campaign => ({
  id: r.id, organizationId: r.organization_id, name: r.name, workflowId: r.workflow_id, telephonyConfigurationId: r.telephony_configuration_id,
  state: r.state as CampaignState, sourceType: r.source_type as Campaign['sourceType'], sourceId: r.source_id,
  totalRows: r.total_rows, processedRows: r.processed_rows, failedRows: r.failed_rows, executedCount: r.executed_count,
  totalQueuedCount: r.total_queued_count, inFlight: r.in_flight, retryConfig: JSON.parse(r.retry_config), maxConcurrency: r.max_concurrency,
  scheduleConfig: r.schedule_config === null ? null : JSON.parse(r.schedule_config), circuitBreaker: JSON.parse(r.circuit_breaker),
  parentCampaignId: r.parent_campaign_id, redialedCampaignId: r.redialed_campaign_id, breakerResetAt: fromMsOrNull(r.breaker_reset_at),
  createdAt: fromMs(r.created_at), startedAt: fromMsOrNull(r.started_at), completedAt: fromMsOrNull(r.completed_at), updatedAt: fromMs(r.updated_at),
});
export const contactFromRow = (r: ContactRow): CampaignContact => ({
  id: r.id, organizationId: r.organization_id, campaignId: r.campaign_id, row: r.row_number, phoneNumber: r.phone_number,
  context: JSON.parse(r.context), status: r.status as ContactStatus, attemptsMade: r.attempts_made, nextAttemptAt: fromMs(r.next_attempt_at),
  currentAttemptId: r.current_attempt_id, lastOutcome: r.last_outcome as CallOutcome | null, finalOutcome: r.final_outcome as CallOutcome | null,
  updatedAt: fromMs(r.updated_at),
});
export const attemptFromRow = (r: AttemptRow): ContactAttempt => ({
  id: r.id, organizationId: r.organization_id, campaignId: r.campaign_id, contactId: r.contact_id, attemptNumber: r.attempt_number,
  status: r.status as AttemptStatus, runId: r.run_id, providerCallId: r.provider_call_id, outcome: r.outcome as CallOutcome | null,
  claimedAt: fromMs(r.claimed_at), checkAt: fromMs(r.check_at), placedAt: fromMsOrNull(r.placed_at), endedAt: fromMsOrNull(r.ended_at),
});
const logFromRow = (r: LogRow): CampaignLogEntry => ({
  ts: fromMs(r.ts), level: r.level as LogLevel, event: r.event, message: r.message, details: JSON.parse(r.details),
});

const TERMINAL = `('completed', 'failed', 'cancelled')`;

/** Rolls a transaction back without it being an error. */
class Abort {
  constructor(readonly result: ClaimResult) {}
}

export class SqliteCampaignRepository implements CampaignRepository {
  private readonly q;

  constructor(private readonly db: SqliteDatabase) {
    this.q = {
      insertCampaign: db.prepare(`INSERT INTO campaigns (organization_id, name, workflow_id, telephony_configuration_id, state, source_type, source_id,
          total_rows, total_queued_count, retry_config, max_concurrency, schedule_config, circuit_breaker, created_at, updated_at)
        VALUES (@org, @name, @workflowId, @configId, 'draft', @sourceType, @sourceId, @n, @n, @retry, @maxConcurrency, @schedule, @breaker, @now, @now)
        RETURNING *`),
      insertContact: db.prepare(`INSERT INTO campaign_contacts (organization_id, campaign_id, row_number, phone_number, context, status, next_attempt_at, updated_at)
        VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`),
      insertLog: db.prepare(`INSERT INTO campaign_logs (organization_id, campaign_id, ts, level, event, message, details)
        SELECT organization_id, id, ?, ?, ?, ?, ? FROM campaigns WHERE organization_id = ? AND id = ?`),
      campaign: db.prepare<[number, number], CampaignRow>('SELECT * FROM campaigns WHERE organization_id = ? AND id = ?'),
      list: db.prepare<[number], CampaignRow>('SELECT * FROM campaigns WHERE organization_id = ? ORDER BY created_at DESC, id DESC'),
      listByState: db.prepare<[number, string], CampaignRow>('SELECT * FROM campaigns WHERE organization_id = ? AND state = ? ORDER BY created_at DESC, id DESC'),
      // newest first straight off the (campaign_id, id) index; reversed in JS (an outer ORDER BY costs a temp b-tree)
      logs: db.prepare<[number, number, number], LogRow>(`SELECT * FROM campaign_logs WHERE organization_id = ? AND campaign_id = ?
        ORDER BY id DESC LIMIT ?`),
      countActiveByConfig: db.prepare<[number, number], { n: number }>(`SELECT COUNT(*) AS n FROM campaigns WHERE organization_id = ?
        AND telephony_configuration_id = ? AND state IN ('draft', 'running', 'paused')`),
      running: db.prepare<[], { organization_id: number; id: number }>(`SELECT organization_id, id FROM campaigns WHERE state = 'running' ORDER BY id`),
      contacts: db.prepare<[number, number], ContactRow>('SELECT * FROM campaign_contacts WHERE organization_id = ? AND campaign_id = ? ORDER BY row_number, id'),
      contactsByStatus: db.prepare<[number, number, string], ContactRow>(
        'SELECT * FROM campaign_contacts WHERE organization_id = ? AND campaign_id = ? AND status = ? ORDER BY row_number, id'),
      contact: db.prepare<[number], ContactRow>('SELECT * FROM campaign_contacts WHERE id = ?'),
      attempt: db.prepare<[number, number], AttemptRow>('SELECT * FROM campaign_attempts WHERE organization_id = ? AND id = ?'),
      attempts: db.prepare<[number, number], AttemptRow>('SELECT * FROM campaign_attempts WHERE organization_id = ? AND campaign_id = ? ORDER BY id'),
      takeSlot: db.prepare<[number, number, number], CampaignRow>(`UPDATE campaigns SET in_flight = in_flight + 1, updated_at = ?
        WHERE organization_id = ? AND id = ? AND state = 'running' AND in_flight < max_concurrency RETURNING *`),
      nextDue: db.prepare<[number, number], ContactRow>(`SELECT * FROM campaign_contacts WHERE campaign_id = ? AND status = 'pending'
        AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT 1`),
      earliestPending: db.prepare<[number], { at: number | null }>(
        `SELECT MIN(next_attempt_at) AS at FROM campaign_contacts WHERE campaign_id = ? AND status = 'pending'`),
      activateContact: db.prepare<[number, number, number, number], ContactRow>(`UPDATE campaign_contacts
        SET status = 'active', attempts_made = ?, current_attempt_id = ?, updated_at = ? WHERE id = ? RETURNING *`),
      reuseAttempt: db.prepare<[number, number, number], AttemptRow>(`UPDATE campaign_attempts SET claimed_at = ?, check_at = ?
        WHERE id = ? AND status = 'claimed' RETURNING *`),
      insertAttempt: db.prepare<[number, number, number, number, number, number], AttemptRow>(`INSERT INTO campaign_attempts
        (organization_id, campaign_id, contact_id, attempt_number, status, claimed_at, check_at) VALUES (?, ?, ?, ?, 'claimed', ?, ?) RETURNING *`),
      markDialing: db.prepare<[number, number, number], AttemptRow>(`UPDATE campaign_attempts SET status = 'dialing', check_at = ?
        WHERE organization_id = ? AND id = ? AND status = 'claimed'
          AND EXISTS (SELECT 1 FROM campaigns c WHERE c.id = campaign_attempts.campaign_id AND c.state = 'running') RETURNING *`),
      attachRun: db.prepare<[number, number, number], AttemptRow>(`UPDATE campaign_attempts SET run_id = ?
        WHERE organization_id = ? AND id = ? AND status = 'dialing' AND run_id IS NULL RETURNING *`),
      reclaimable: db.prepare<[number]>(`UPDATE campaign_attempts SET status = 'claimed' WHERE id = ?`),
      countExecuted: db.prepare<[number, number]>('UPDATE campaigns SET executed_count = executed_count + 1, updated_at = ? WHERE id = ?'),
      markPlaced: db.prepare<[string, number, number, number, number], AttemptRow>(`UPDATE campaign_attempts
        SET status = 'placed', provider_call_id = ?, placed_at = ?, check_at = ? WHERE organization_id = ? AND id = ? AND status = 'dialing' RETURNING *`),
      freeSlot: db.prepare<[number, number]>('UPDATE campaigns SET in_flight = MAX(in_flight - 1, 0), updated_at = ? WHERE id = ?'),
      requeueContact: db.prepare<[number, number, number]>(`UPDATE campaign_contacts SET status = CASE WHEN
          (SELECT state FROM campaigns WHERE id = campaign_contacts.campaign_id) IN ${TERMINAL} THEN 'dropped' ELSE 'pending' END,
          next_attempt_at = ?, updated_at = ? WHERE id = ?`),
      endAttempt: db.prepare<[string, number, number], AttemptRow>(`UPDATE campaign_attempts SET status = 'ended', outcome = ?, ended_at = ?
        WHERE id = ? AND status <> 'ended' RETURNING *`),
      contactFinal: db.prepare<[string, string, number, number]>(`UPDATE campaign_contacts SET status = 'done', last_outcome = ?, final_outcome = ?,
        current_attempt_id = NULL, updated_at = ? WHERE id = ?`),
      contactRetry: db.prepare<[string, number, number, number]>(`UPDATE campaign_contacts SET status = 'pending', last_outcome = ?, next_attempt_at = ?,
        current_attempt_id = NULL, updated_at = ? WHERE id = ?`),
      contactDropped: db.prepare<[string, number, number]>(`UPDATE campaign_contacts SET status = 'dropped', last_outcome = ?,
        current_attempt_id = NULL, updated_at = ? WHERE id = ?`),
      countFinal: db.prepare<[number, number, number]>(`UPDATE campaigns SET processed_rows = processed_rows + 1, failed_rows = failed_rows + ?,
        in_flight = MAX(in_flight - 1, 0), updated_at = ? WHERE id = ?`),
      countRetry: db.prepare<[number, number]>(`UPDATE campaigns SET total_queued_count = total_queued_count + 1,
        in_flight = MAX(in_flight - 1, 0), updated_at = ? WHERE id = ?`),
      campaignById: db.prepare<[number], CampaignRow>('SELECT * FROM campaigns WHERE id = ?'),
      postpone: db.prepare<[number, number, number]>(`UPDATE campaign_attempts SET check_at = ? WHERE organization_id = ? AND id = ? AND status <> 'ended'`),
      dueForCheck: db.prepare<[number, number], AttemptRow>(`SELECT * FROM campaign_attempts WHERE status <> 'ended' AND check_at <= ?
        ORDER BY check_at, id LIMIT ?`),
      window: db.prepare<[number, number, number], { calls: number; failures: number | null }>(`SELECT COUNT(*) AS calls,
        SUM(CASE WHEN outcome = 'failed' THEN 1 ELSE 0 END) AS failures FROM campaign_attempts
        WHERE organization_id = ? AND campaign_id = ? AND ended_at IS NOT NULL AND ended_at >= ?`),
      complete: db.prepare<[number, number, number, number], CampaignRow>(`UPDATE campaigns SET state = 'completed', completed_at = ?, updated_at = ?
        WHERE organization_id = ? AND id = ? AND state = 'running' AND in_flight = 0
          AND NOT EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = campaigns.id AND status IN ('pending', 'active')) RETURNING *`),
      dropPending: db.prepare<[number, number]>(`UPDATE campaign_contacts SET status = 'dropped', updated_at = ? WHERE campaign_id = ? AND status = 'pending'`),
    };
  }

  private log(organizationId: number, campaignId: number, e: CampaignLogEntry): void {
    this.q.insertLog.run(toMs(e.ts), e.level, e.event, e.message, JSON.stringify(e.details ?? {}), organizationId, campaignId);
  }

  /**
   * Contacts go in by transactions of CONTACT_BATCH rows with a turn of the event loop between them, so a 100,000-row
   * list never holds the loop (or the write lock) for long: other requests keep being served while it is stored.
   * The campaign row and the first batch commit together; when a later batch fails, the campaign, its contacts and
   * logs are deleted again before the error is rethrown. (A process killed mid-way leaves a draft whose contact
   * count is below total_rows; it was never returned to anyone.)
   */
  async create(organizationId: number, input: NewCampaign): Promise<Campaign> {
    const now = toMs(input.now);
    const insertContacts = (campaignId: number, from: number) => {
      const end = Math.min(from + CONTACT_BATCH, input.contacts.length);
      for (let i = from; i < end; i++) {
        const c = input.contacts[i];
        this.q.insertContact.run(organizationId, campaignId, c.row, c.phoneNumber, JSON.stringify(c.context), now, now);
      }
    };
    const row = this.db.transaction(() => {
      const inserted = this.q.insertCampaign.get({
        org: organizationId, name: input.name, workflowId: input.workflowId, configId: input.telephonyConfigurationId,
        sourceType: input.sourceType, sourceId: input.sourceId, n: input.contacts.length, retry: JSON.stringify(input.retryConfig),
        maxConcurrency: input.maxConcurrency, schedule: input.scheduleConfig ? JSON.stringify(input.scheduleConfig) : null,
        breaker: JSON.stringify(input.circuitBreaker), now,
      }) as CampaignRow;
      insertContacts(inserted.id, 0);
      for (const l of input.logs) this.log(organizationId, inserted.id, l);
      return inserted;
    }).immediate();
    try {
      for (let from = CONTACT_BATCH; from < input.contacts.length; from += CONTACT_BATCH) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        this.db.transaction(() => insertContacts(row.id, from)).immediate();
      }
    } catch (error) {
      this.db.transaction(() => {
        this.db.prepare('DELETE FROM campaign_contacts WHERE campaign_id = ?').run(row.id);
        this.db.prepare('DELETE FROM campaign_logs WHERE campaign_id = ?').run(row.id);
        this.db.prepare('DELETE FROM campaigns WHERE id = ?').run(row.id);
      }).immediate();
      throw error;
    }
    return campaignFromRow(row);
  }

  async get(organizationId: number, campaignId: number) {
    const r = this.q.campaign.get(organizationId, campaignId);
    return r ? campaignFromRow(r) : null;
  }

  async list(organizationId: number, filter: { state?: CampaignState } = {}) {
    const rows = filter.state ? this.q.listByState.all(organizationId, filter.state) : this.q.list.all(organizationId);
    return rows.map(campaignFromRow);
  }

  async update(organizationId: number, campaignId: number, patch: CampaignPatch, onlyIn: readonly CampaignState[]) {
    return this.db.transaction(() => {
      const row = this.q.campaign.get(organizationId, campaignId);
      if (!row) return { campaign: null, updated: false };
      if (!onlyIn.includes(row.state as CampaignState)) return { campaign: campaignFromRow(row), updated: false };
      const sets: string[] = ['updated_at = @now'];
      const values: Record<string, unknown> = { now: toMs(patch.now), org: organizationId, id: campaignId };
      if (patch.name !== undefined) (sets.push('name = @name'), (values.name = patch.name));
      if (patch.retryConfig !== undefined) (sets.push('retry_config = @retry'), (values.retry = JSON.stringify(patch.retryConfig)));
      if (patch.maxConcurrency !== undefined) (sets.push('max_concurrency = @mc'), (values.mc = patch.maxConcurrency));
      if (patch.scheduleConfig !== undefined) {
        sets.push('schedule_config = @schedule');
        values.schedule = patch.scheduleConfig === null ? null : JSON.stringify(patch.scheduleConfig);
      }
      if (patch.circuitBreaker !== undefined) (sets.push('circuit_breaker = @breaker'), (values.breaker = JSON.stringify(patch.circuitBreaker)));
      const updated = this.db.prepare<Record<string, unknown>, CampaignRow>(
        `UPDATE campaigns SET ${sets.join(', ')} WHERE organization_id = @org AND id = @id RETURNING *`).get(values)!;
      return { campaign: campaignFromRow(updated), updated: true };
    }).immediate();
  }

  async transition(organizationId: number, campaignId: number, request: TransitionRequest) {
    return this.db.transaction(() => {
      const row = this.q.campaign.get(organizationId, campaignId);
      if (!row) return { campaign: null, changed: false };
      if (!request.from.includes(row.state as CampaignState)) return { campaign: campaignFromRow(row), changed: false };
      const now = toMs(request.now);
      const toRunning = request.to === 'running';
      const terminal = ['completed', 'failed', 'cancelled'].includes(request.to);
      const updated = this.db.prepare<unknown[], CampaignRow>(`UPDATE campaigns SET state = ?, updated_at = ?,
          started_at = CASE WHEN ? AND started_at IS NULL THEN ? ELSE started_at END,
          breaker_reset_at = CASE WHEN ? THEN ? ELSE breaker_reset_at END,
          completed_at = CASE WHEN ? THEN ? ELSE completed_at END
        WHERE id = ? RETURNING *`).get(request.to, now, toRunning ? 1 : 0, now, toRunning ? 1 : 0, now, terminal ? 1 : 0, now, campaignId)!;
      if (request.to === 'cancelled') this.q.dropPending.run(now, campaignId);
      if (request.log) this.log(organizationId, campaignId, request.log);
      if (request.event) appendPendingEvent(this.db, 'campaign', campaignId, request.event);
      return { campaign: campaignFromRow(updated), changed: true };
    }).immediate();
  }

  async appendLog(organizationId: number, campaignId: number, entry: CampaignLogEntry) {
    this.log(organizationId, campaignId, entry);
  }

  async listLogs(organizationId: number, campaignId: number, limit: number) {
    return this.q.logs.all(organizationId, campaignId, limit).reverse().map(logFromRow);
  }

  async countActiveUsingTelephonyConfiguration(organizationId: number, telephonyConfigurationId: number) {
    return this.q.countActiveByConfig.get(organizationId, telephonyConfigurationId)!.n;
  }

  async listRunning() {
    return this.q.running.all().map((r) => ({ organizationId: r.organization_id, campaignId: r.id }));
  }

  async listContacts(organizationId: number, campaignId: number, filter: { status?: ContactStatus } = {}) {
    const rows = filter.status
      ? this.q.contactsByStatus.all(organizationId, campaignId, filter.status)
      : this.q.contacts.all(organizationId, campaignId);
    return rows.map(contactFromRow);
  }

  async getAttempt(organizationId: number, attemptId: number) {
    const r = this.q.attempt.get(organizationId, attemptId);
    return r ? attemptFromRow(r) : null;
  }

  async listAttempts(organizationId: number, campaignId: number) {
    return this.q.attempts.all(organizationId, campaignId).map(attemptFromRow);
  }

  async claimNextContact(organizationId: number, campaignId: number, options: { now: Date; leaseMs: number }): Promise<ClaimResult> {
    const now = toMs(options.now);
    const checkAt = now + options.leaseMs;
    try {
      return this.db.transaction((): ClaimResult => {
        const campaign = this.q.takeSlot.get(now, organizationId, campaignId);
        if (!campaign) {
          const current = this.q.campaign.get(organizationId, campaignId);
          return current && current.state === 'running' ? { kind: 'at_capacity' } : { kind: 'not_running' };
        }
        const due = this.q.nextDue.get(campaignId, now);
        if (!due) throw new Abort({ kind: 'none_due', nextDueAt: fromMsOrNull(this.q.earliestPending.get(campaignId)!.at) });
        let attempt: AttemptRow | undefined;
        if (due.current_attempt_id !== null) attempt = this.q.reuseAttempt.get(now, checkAt, due.current_attempt_id);
        if (!attempt) attempt = this.q.insertAttempt.get(organizationId, campaignId, due.id, due.attempts_made + 1, now, checkAt)!;
        const contact = this.q.activateContact.get(attempt.attempt_number, attempt.id, now, due.id)!;
        return { kind: 'claimed', campaign: campaignFromRow(campaign), contact: contactFromRow(contact), attempt: attemptFromRow(attempt) };
      }).immediate();
    } catch (e) {
      if (e instanceof Abort) return e.result;
      throw e;
    }
  }

  async markDialing(organizationId: number, attemptId: number, input: { now: Date; checkAt: Date }) {
    const r = this.q.markDialing.get(toMs(input.checkAt), organizationId, attemptId);
    return r ? attemptFromRow(r) : null;
  }

  async attachRun(organizationId: number, attemptId: number, input: { runId: number; now: Date }) {
    return this.db.transaction(() => {
      const r = this.q.attachRun.get(input.runId, organizationId, attemptId);
      if (!r) return null;
      this.q.countExecuted.run(toMs(input.now), r.campaign_id);
      return attemptFromRow(r);
    }).immediate();
  }

  async markPlaced(organizationId: number, attemptId: number, input: { providerCallId: string; now: Date; checkAt: Date }) {
    const r = this.q.markPlaced.get(input.providerCallId, toMs(input.now), toMs(input.checkAt), organizationId, attemptId);
    return r ? attemptFromRow(r) : null;
  }

  async releaseAttempt(organizationId: number, attemptId: number, now: Date) {
    return this.db.transaction(() => {
      const a = this.q.attempt.get(organizationId, attemptId);
      if (!a || !(a.status === 'claimed' || (a.status === 'dialing' && a.run_id === null))) return false;
      const contact = this.q.contact.get(a.contact_id)!;
      if (contact.status !== 'active' || contact.current_attempt_id !== a.id) return false;
      if (a.status !== 'claimed') this.q.reclaimable.run(a.id);
      this.q.requeueContact.run(contact.next_attempt_at, toMs(now), contact.id);
      this.q.freeSlot.run(toMs(now), a.campaign_id);
      return true;
    }).immediate();
  }

  async recordOutcome(organizationId: number, attemptId: number, record: OutcomeRecord): Promise<RecordedOutcome | null> {
    const now = toMs(record.now);
    return this.db.transaction((): RecordedOutcome | null => {
      const existing = this.q.attempt.get(organizationId, attemptId);
      if (!existing) return null;
      const ended = this.q.endAttempt.get(record.outcome, now, attemptId);
      if (!ended) {
        return {
          recorded: false, attempt: attemptFromRow(existing), contact: contactFromRow(this.q.contact.get(existing.contact_id)!),
          campaign: campaignFromRow(this.q.campaignById.get(existing.campaign_id)!),
        };
      }
      const campaign = this.q.campaignById.get(ended.campaign_id)!;
      const closed = ['completed', 'failed', 'cancelled'].includes(campaign.state);
      if (record.retryAt && closed) {
        this.q.contactDropped.run(record.outcome, now, ended.contact_id);
        this.q.freeSlot.run(now, ended.campaign_id);
      } else if (record.retryAt) {
        this.q.contactRetry.run(record.outcome, toMs(record.retryAt), now, ended.contact_id);
        this.q.countRetry.run(now, ended.campaign_id);
      } else {
        this.q.contactFinal.run(record.outcome, record.outcome, now, ended.contact_id);
        this.q.countFinal.run(record.outcome === 'completed' ? 0 : 1, now, ended.campaign_id);
      }
      return {
        recorded: true, attempt: attemptFromRow(ended), contact: contactFromRow(this.q.contact.get(ended.contact_id)!),
        campaign: campaignFromRow(this.q.campaignById.get(ended.campaign_id)!),
      };
    }).immediate();
  }

  async postponeCheck(organizationId: number, attemptId: number, checkAt: Date) {
    this.q.postpone.run(toMs(checkAt), organizationId, attemptId);
  }

  async attemptsDueForCheck(now: Date, limit: number): Promise<AttemptToCheck[]> {
    return this.q.dueForCheck.all(toMs(now), limit).map((a) => ({ attempt: attemptFromRow(a), contact: contactFromRow(this.q.contact.get(a.contact_id)!) }));
  }

  async breakerWindow(organizationId: number, campaignId: number, since: Date): Promise<BreakerWindow> {
    const r = this.q.window.get(organizationId, campaignId, toMs(since))!;
    return { calls: r.calls, failures: r.failures ?? 0 };
  }

  async completeIfDone(organizationId: number, campaignId: number, now: Date, log: CampaignLogEntry, event?: PendingEvent) {
    return this.db.transaction(() => {
      const r = this.q.complete.get(toMs(now), toMs(now), organizationId, campaignId);
      if (!r) return null;
      this.log(organizationId, campaignId, log);
      if (event) appendPendingEvent(this.db, 'campaign', campaignId, event);
      return campaignFromRow(r);
    }).immediate();
  }
}
