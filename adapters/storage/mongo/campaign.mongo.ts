import type { Db, Document } from 'mongodb';
import type { PendingEvent } from '../../../core/ports/event-publisher.port.js';
import { pendingEventToDocument, type PendingEventDocument } from './pending-events.mongo.js';
import type {
  AttemptStatus, BreakerWindow, Campaign, CampaignContact, CampaignLogEntry, CampaignState, CircuitBreakerConfig, ContactAttempt,
  ContactStatus, LogLevel, RetryConfig, SourceType,
} from '../../../core/campaigns/campaign.js';
import type { ScheduleConfig } from '../../../core/campaigns/schedule.js';
import type {
  AttemptToCheck, CampaignPatch, CampaignRepository, ClaimResult, NewCampaign, OutcomeRecord, RecordedOutcome, TransitionRequest,
} from '../../../core/ports/campaign.repository.port.js';
import type { CallOutcome } from '../../../core/ports/telephony-provider.port.js';
import { dateOrNull, fromJsonText, nextId, reserveIds, toJsonText } from './mongo-database.js';
import { Collections } from './mongo-schema.js';

/** One in-flight slot: `token` is unique per claim; `until` is the claim's first lease expiry (for the repair sweep). */
export interface InFlightSlot { token: number; until: Date }

export interface CampaignDocument {
  _id: number; organizationId: number; name: string; workflowId: number; telephonyConfigurationId: number | null; state: CampaignState;
  sourceType: SourceType; sourceId: string; totalRows: number; processedRows: number; failedRows: number; executedCount: number;
  totalQueuedCount: number;
  /** Customer event markers not yet turned into deliveries (pending-events.mongo.ts); absent when none. */
  pendingEvents?: PendingEventDocument[];
  /** The slots in use: `inFlight` is their number; taken and freed atomically with `$push`/`$pull` by token. */
  inFlightSlots: InFlightSlot[];
  retryConfig: RetryConfig; maxConcurrency: number; scheduleConfig: ScheduleConfig | null; circuitBreaker: CircuitBreakerConfig;
  parentCampaignId: number | null; redialedCampaignId: number | null; breakerResetAt: Date | null;
  createdAt: Date; startedAt: Date | null; completedAt: Date | null; updatedAt: Date;
}
export interface ContactDocument {
  _id: number; organizationId: number; campaignId: number; row: number; phoneNumber: string; contextJson: string; status: ContactStatus;
  attemptsMade: number; nextAttemptAt: Date; currentAttemptId: number | null; lastOutcome: CallOutcome | null; finalOutcome: CallOutcome | null;
  updatedAt: Date;
  /** The slot token of the claim holding this contact (while `active`). */
  slotToken: number | null;
  /** The claim's lease expiry (repair sweep: an active contact whose attempt was never written). */
  leaseUntil: Date | null;
}
export interface AttemptDocument {
  _id: number; organizationId: number; campaignId: number; contactId: number; attemptNumber: number; status: AttemptStatus;
  runId: number | null; providerCallId: string | null; outcome: CallOutcome | null; claimedAt: Date; checkAt: Date;
  placedAt: Date | null; endedAt: Date | null;
  /** The slot token of the live claim; null once released or never set. */
  slotToken: number | null;
  /** The token a release took away (lets an interrupted release finish). */
  releasedToken: number | null;
  /** The retry time recorded with the outcome (lets an interrupted recordOutcome finish). */
  retryAt: Date | null;
}
export interface CampaignLogDocument {
  _id: number; organizationId: number; campaignId: number; ts: Date; level: LogLevel; event: string; message: string; detailsJson: string;
}

export const campaignToDocument = (c: Campaign, inFlightSlots: InFlightSlot[] = []): CampaignDocument => ({
  _id: c.id, organizationId: c.organizationId, name: c.name, workflowId: c.workflowId, telephonyConfigurationId: c.telephonyConfigurationId,
  state: c.state, sourceType: c.sourceType, sourceId: c.sourceId, totalRows: c.totalRows, processedRows: c.processedRows, failedRows: c.failedRows,
  executedCount: c.executedCount, totalQueuedCount: c.totalQueuedCount, inFlightSlots: inFlightSlots.map((s) => ({ ...s })),
  retryConfig: { ...c.retryConfig }, maxConcurrency: c.maxConcurrency,
  scheduleConfig: c.scheduleConfig ? structuredClone(c.scheduleConfig) : null, circuitBreaker: { ...c.circuitBreaker },
  parentCampaignId: c.parentCampaignId, redialedCampaignId: c.redialedCampaignId, breakerResetAt: dateOrNull(c.breakerResetAt),
  createdAt: new Date(c.createdAt), startedAt: dateOrNull(c.startedAt), completedAt: dateOrNull(c.completedAt), updatedAt: new Date(c.updatedAt),
});
export const campaignFromDocument = (d: CampaignDocument): Campaign => ({
  id: d._id, organizationId: d.organizationId, name: d.name, workflowId: d.workflowId, telephonyConfigurationId: d.telephonyConfigurationId ?? null,
  state: d.state, sourceType: d.sourceType, sourceId: d.sourceId, totalRows: d.totalRows, processedRows: d.processedRows, failedRows: d.failedRows,
  executedCount: d.executedCount, totalQueuedCount: d.totalQueuedCount, inFlight: (d.inFlightSlots ?? []).length,
  retryConfig: { ...d.retryConfig }, maxConcurrency: d.maxConcurrency, scheduleConfig: d.scheduleConfig ? structuredClone(d.scheduleConfig) : null,
  circuitBreaker: { ...d.circuitBreaker }, parentCampaignId: d.parentCampaignId ?? null, redialedCampaignId: d.redialedCampaignId ?? null,
  breakerResetAt: dateOrNull(d.breakerResetAt), createdAt: new Date(d.createdAt), startedAt: dateOrNull(d.startedAt),
  completedAt: dateOrNull(d.completedAt), updatedAt: new Date(d.updatedAt),
});
export const contactToDocument = (c: CampaignContact, claim: { slotToken: number | null; leaseUntil: Date | null } = { slotToken: null, leaseUntil: null }): ContactDocument => ({
  _id: c.id, organizationId: c.organizationId, campaignId: c.campaignId, row: c.row, phoneNumber: c.phoneNumber, contextJson: toJsonText(c.context),
  status: c.status, attemptsMade: c.attemptsMade, nextAttemptAt: new Date(c.nextAttemptAt), currentAttemptId: c.currentAttemptId,
  lastOutcome: c.lastOutcome, finalOutcome: c.finalOutcome, updatedAt: new Date(c.updatedAt), slotToken: claim.slotToken, leaseUntil: dateOrNull(claim.leaseUntil),
});
export const contactFromDocument = (d: ContactDocument): CampaignContact => ({
  id: d._id, organizationId: d.organizationId, campaignId: d.campaignId, row: d.row, phoneNumber: d.phoneNumber,
  context: fromJsonText<Record<string, string>>(d.contextJson, {}), status: d.status, attemptsMade: d.attemptsMade,
  nextAttemptAt: new Date(d.nextAttemptAt), currentAttemptId: d.currentAttemptId ?? null, lastOutcome: d.lastOutcome ?? null,
  finalOutcome: d.finalOutcome ?? null, updatedAt: new Date(d.updatedAt),
});
export const attemptFromDocument = (d: AttemptDocument): ContactAttempt => ({
  id: d._id, organizationId: d.organizationId, campaignId: d.campaignId, contactId: d.contactId, attemptNumber: d.attemptNumber,
  status: d.status, runId: d.runId ?? null, providerCallId: d.providerCallId ?? null, outcome: d.outcome ?? null,
  claimedAt: new Date(d.claimedAt), checkAt: new Date(d.checkAt), placedAt: dateOrNull(d.placedAt), endedAt: dateOrNull(d.endedAt),
});
export const campaignLogToDocument = (id: number, organizationId: number, campaignId: number, e: CampaignLogEntry): CampaignLogDocument => ({
  _id: id, organizationId, campaignId, ts: new Date(e.ts), level: e.level, event: e.event, message: e.message, detailsJson: toJsonText(e.details ?? {}),
});
export const campaignLogFromDocument = (d: CampaignLogDocument): CampaignLogEntry => ({
  ts: new Date(d.ts), level: d.level, event: d.event, message: d.message, details: fromJsonText<Record<string, unknown>>(d.detailsJson, {}),
});

const TERMINAL: readonly CampaignState[] = ['completed', 'failed', 'cancelled'];
const OPEN_ATTEMPT: AttemptStatus[] = ['claimed', 'dialing', 'placed'];

/**
 * CampaignRepository on MongoDB, each method a sequence of atomic single-document operations in an order that
 * keeps the invariants under any concurrency (several processes), without multi-document transactions:
 *
 * - Cap: in-flight slots are an array of per-claim tokens on the campaign. A claim first pushes a token with a
 *   conditional update (`state: running` and `$size(inFlightSlots) < maxConcurrency`, one document), so the
 *   cap can never be exceeded; slots are freed with `$pull` by token, which is idempotent (no double free).
 * - Claim: (1) take a slot; (2) take the earliest due `pending` contact with one `findOneAndUpdate` (so no
 *   contact is claimed twice), recording the token, the lease, and the attempt id it will use (the released
 *   one to reuse, or a fresh one); (3) upsert that attempt. No contact due: the slot is pulled again.
 * - markDialing / attachRun / markPlaced / postponeCheck: one conditional update of the attempt each;
 *   attachRun then increments `executedCount`.
 * - Release: a conditional update on the attempt takes its token away (`slotToken` → `releasedToken`; this is
 *   what makes release and markDialing/attachRun mutually exclusive), then the contact holding that token goes
 *   back to `pending` (or `dropped`), then the slot is pulled. A release interrupted half-way is finished by the
 *   next releaseAttempt call for that attempt.
 * - Outcome: ending the attempt is one conditional update (the attempt records outcome and retry time); the
 *   contact's move (done / pending again / dropped) is a conditional update on `currentAttemptId`, which gates
 *   the counters: only the caller that moved the contact updates the campaign (`$inc` counters + `$pull` slot in
 *   one update). A replay finishes an interrupted outcome the same way and changes nothing otherwise.
 * - Completion: checks that no contact is pending/active, then moves `running` → `completed` conditionally on
 *   `inFlightSlots` being empty. A contact can only become pending/active again from an active one (which holds a
 *   slot), so the check cannot be invalidated between the two steps.
 * - Repair (run by `attemptsDueForCheck`, the reconciliation sweep): a process dying between two steps of a claim
 *   can leave a slot with no contact, or an active contact whose attempt was never written. Slots whose lease
 *   passed and whose token no contact holds are pulled; attempts missing behind an expired contact lease are
 *   written (`claimed`), so the sweep sees them and releases them. What is not repaired: counters one short when a
 *   process dies between attachRun's two writes or between an outcome's contact and campaign writes.
 */
export class MongoCampaignRepository implements CampaignRepository {
  private readonly campaigns;
  private readonly contacts;
  private readonly attempts;
  private readonly logs;

  constructor(private readonly db: Db) {
    this.campaigns = db.collection<CampaignDocument>(Collections.campaigns);
    this.contacts = db.collection<ContactDocument>(Collections.campaignContacts);
    this.attempts = db.collection<AttemptDocument>(Collections.campaignAttempts);
    this.logs = db.collection<CampaignLogDocument>(Collections.campaignLogs);
  }

  private async insertLogs(organizationId: number, campaignId: number, entries: CampaignLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const first = await reserveIds(this.db, Collections.campaignLogs, entries.length);
    await this.logs.insertMany(entries.map((e, i) => campaignLogToDocument(first + i, organizationId, campaignId, e)));
  }

  /**
   * Contacts and logs are written before the campaign document, so the campaign never appears without them; a
   * failed write removes what was written.
   */
  async create(organizationId: number, input: NewCampaign): Promise<Campaign> {
    const id = await nextId(this.db, Collections.campaigns);
    const n = input.contacts.length;
    const campaign: Campaign = {
      id, organizationId, name: input.name, workflowId: input.workflowId, telephonyConfigurationId: input.telephonyConfigurationId, state: 'draft',
      sourceType: input.sourceType, sourceId: input.sourceId, totalRows: n, processedRows: 0, failedRows: 0, executedCount: 0, totalQueuedCount: n,
      inFlight: 0, retryConfig: input.retryConfig, maxConcurrency: input.maxConcurrency, scheduleConfig: input.scheduleConfig,
      circuitBreaker: input.circuitBreaker, parentCampaignId: null, redialedCampaignId: null, breakerResetAt: null,
      createdAt: input.now, startedAt: null, completedAt: null, updatedAt: input.now,
    };
    const doc = campaignToDocument(campaign);
    try {
      if (n > 0) {
        const first = await reserveIds(this.db, Collections.campaignContacts, n);
        const docs = input.contacts.map((c, i) => contactToDocument({
          id: first + i, organizationId, campaignId: id, row: c.row, phoneNumber: c.phoneNumber, context: c.context, status: 'pending',
          attemptsMade: 0, nextAttemptAt: input.now, currentAttemptId: null, lastOutcome: null, finalOutcome: null, updatedAt: input.now,
        }));
        for (let i = 0; i < docs.length; i += 1000) await this.contacts.insertMany(docs.slice(i, i + 1000));
      }
      await this.insertLogs(organizationId, id, input.logs);
      await this.campaigns.insertOne(doc);
    } catch (e) {
      await this.contacts.deleteMany({ campaignId: id });
      await this.logs.deleteMany({ campaignId: id });
      throw e;
    }
    return campaignFromDocument(doc);
  }

  async get(organizationId: number, campaignId: number) {
    const d = await this.campaigns.findOne({ _id: campaignId, organizationId });
    return d ? campaignFromDocument(d) : null;
  }

  async list(organizationId: number, filter: { state?: CampaignState } = {}) {
    const q = filter.state ? { organizationId, state: filter.state } : { organizationId };
    return (await this.campaigns.find(q).sort({ createdAt: -1, _id: -1 }).toArray()).map(campaignFromDocument);
  }

  async update(organizationId: number, campaignId: number, patch: CampaignPatch, onlyIn: readonly CampaignState[]) {
    const set: Partial<CampaignDocument> = { updatedAt: patch.now };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.retryConfig !== undefined) set.retryConfig = patch.retryConfig;
    if (patch.maxConcurrency !== undefined) set.maxConcurrency = patch.maxConcurrency;
    if (patch.scheduleConfig !== undefined) set.scheduleConfig = patch.scheduleConfig;
    if (patch.circuitBreaker !== undefined) set.circuitBreaker = patch.circuitBreaker;
    const d = await this.campaigns.findOneAndUpdate(
      { _id: campaignId, organizationId, state: { $in: [...onlyIn] } }, { $set: set }, { returnDocument: 'after' });
    if (d) return { campaign: campaignFromDocument(d), updated: true };
    const current = await this.get(organizationId, campaignId);
    return { campaign: current, updated: false };
  }

  /** The state compare-and-set is one update; on `cancelled` the pending contacts are dropped after it, then the log is added. */
  async transition(organizationId: number, campaignId: number, request: TransitionRequest) {
    const toRunning = request.to === 'running';
    const terminal = TERMINAL.includes(request.to);
    const now = request.now;
    const d = await this.campaigns.findOneAndUpdate(
      { _id: campaignId, organizationId, state: { $in: [...request.from] } },
      [{
        $set: {
          state: { $literal: request.to },
          updatedAt: { $literal: now },
          startedAt: toRunning ? { $ifNull: ['$startedAt', { $literal: now }] } : '$startedAt',
          breakerResetAt: toRunning ? { $literal: now } : '$breakerResetAt',
          completedAt: terminal ? { $literal: now } : '$completedAt',
          // the customer event's marker, in the same single-document update as the state
          ...(request.event ? { pendingEvents: { $concatArrays: [{ $ifNull: ['$pendingEvents', []] }, [{ $literal: pendingEventToDocument(request.event) }]] } } : {}),
        },
      }],
      { returnDocument: 'after' },
    );
    if (!d) return { campaign: await this.get(organizationId, campaignId), changed: false };
    if (request.to === 'cancelled') {
      await this.contacts.updateMany({ campaignId, status: 'pending' }, { $set: { status: 'dropped', updatedAt: now } });
    }
    if (request.log) await this.insertLogs(organizationId, campaignId, [request.log]);
    return { campaign: campaignFromDocument(d), changed: true };
  }

  async appendLog(organizationId: number, campaignId: number, entry: CampaignLogEntry) {
    if (!(await this.campaigns.findOne({ _id: campaignId, organizationId }, { projection: { _id: 1 } }))) return;
    await this.insertLogs(organizationId, campaignId, [entry]);
  }

  async listLogs(organizationId: number, campaignId: number, limit: number) {
    const docs = await this.logs.find({ organizationId, campaignId }).sort({ _id: -1 }).limit(limit).toArray();
    return docs.reverse().map(campaignLogFromDocument);
  }

  async countActiveUsingTelephonyConfiguration(organizationId: number, telephonyConfigurationId: number) {
    return this.campaigns.countDocuments({ organizationId, telephonyConfigurationId, state: { $in: ['draft', 'running', 'paused'] } });
  }

  async listRunning() {
    const docs = await this.campaigns.find({ state: 'running' }, { projection: { _id: 1, organizationId: 1 } }).sort({ _id: 1 }).toArray();
    return docs.map((d) => ({ organizationId: d.organizationId, campaignId: d._id }));
  }

  async listContacts(organizationId: number, campaignId: number, filter: { status?: ContactStatus } = {}) {
    const q = filter.status ? { organizationId, campaignId, status: filter.status } : { organizationId, campaignId };
    return (await this.contacts.find(q).sort({ row: 1, _id: 1 }).toArray()).map(contactFromDocument);
  }

  async getAttempt(organizationId: number, attemptId: number) {
    const d = await this.attempts.findOne({ _id: attemptId, organizationId });
    return d ? attemptFromDocument(d) : null;
  }

  async listAttempts(organizationId: number, campaignId: number) {
    return (await this.attempts.find({ organizationId, campaignId }).sort({ _id: 1 }).toArray()).map(attemptFromDocument);
  }

  async claimNextContact(organizationId: number, campaignId: number, options: { now: Date; leaseMs: number }): Promise<ClaimResult> {
    const now = options.now;
    const checkAt = new Date(now.getTime() + options.leaseMs);
    const token = await nextId(this.db, Collections.campaignAttempts);
    // (1) a slot, only while running and below the cap: one conditional update
    const campaign = await this.campaigns.findOneAndUpdate(
      { _id: campaignId, organizationId, state: 'running', $expr: { $lt: [{ $size: '$inFlightSlots' }, '$maxConcurrency'] } },
      { $push: { inFlightSlots: { token, until: checkAt } }, $set: { updatedAt: now } },
      { returnDocument: 'after' },
    );
    if (!campaign) {
      const current = await this.campaigns.findOne({ _id: campaignId, organizationId }, { projection: { state: 1 } });
      return current?.state === 'running' ? { kind: 'at_capacity' } : { kind: 'not_running' };
    }
    // (2) the earliest due pending contact, taken in one update (reusing a released attempt's id, or the token)
    const contact = await this.contacts.findOneAndUpdate(
      { campaignId, status: 'pending', nextAttemptAt: { $lte: now } },
      [{
        $set: {
          status: 'active', updatedAt: { $literal: now }, slotToken: { $literal: token }, leaseUntil: { $literal: checkAt },
          attemptsMade: { $cond: [{ $eq: [{ $ifNull: ['$currentAttemptId', null] }, null] }, { $add: ['$attemptsMade', 1] }, '$attemptsMade'] },
          currentAttemptId: { $ifNull: ['$currentAttemptId', { $literal: token }] },
        },
      }],
      { sort: { nextAttemptAt: 1, _id: 1 }, returnDocument: 'after' },
    );
    if (!contact) {
      await this.campaigns.updateOne({ _id: campaignId }, { $pull: { inFlightSlots: { token } } });
      const [earliest] = await this.contacts.find({ campaignId, status: 'pending' }, { projection: { nextAttemptAt: 1 } })
        .sort({ nextAttemptAt: 1 }).limit(1).toArray();
      return { kind: 'none_due', nextDueAt: earliest ? new Date(earliest.nextAttemptAt) : null };
    }
    // (3) the attempt: reused (same id and number) or new
    const attempt = await this.attempts.findOneAndUpdate(
      { _id: contact.currentAttemptId! },
      {
        $set: { claimedAt: now, checkAt, slotToken: token, releasedToken: null },
        $setOnInsert: {
          organizationId, campaignId, contactId: contact._id, attemptNumber: contact.attemptsMade, status: 'claimed', runId: null,
          providerCallId: null, outcome: null, placedAt: null, endedAt: null, retryAt: null,
        },
      },
      { upsert: true, returnDocument: 'after' },
    );
    return {
      kind: 'claimed', campaign: campaignFromDocument({ ...campaign, inFlightSlots: campaign.inFlightSlots }),
      contact: contactFromDocument(contact), attempt: attemptFromDocument(attempt!),
    };
  }

  async markDialing(organizationId: number, attemptId: number, input: { now: Date; checkAt: Date }) {
    const a = await this.attempts.findOne({ _id: attemptId, organizationId });
    if (!a || a.status !== 'claimed' || a.slotToken == null) return null;
    const campaign = await this.campaigns.findOne({ _id: a.campaignId }, { projection: { state: 1 } });
    if (campaign?.state !== 'running') return null;
    const d = await this.attempts.findOneAndUpdate(
      { _id: attemptId, organizationId, status: 'claimed', slotToken: a.slotToken },
      { $set: { status: 'dialing', checkAt: input.checkAt } },
      { returnDocument: 'after' },
    );
    return d ? attemptFromDocument(d) : null;
  }

  async attachRun(organizationId: number, attemptId: number, input: { runId: number; now: Date }) {
    const d = await this.attempts.findOneAndUpdate(
      { _id: attemptId, organizationId, status: 'dialing', runId: null },
      { $set: { runId: input.runId } },
      { returnDocument: 'after' },
    );
    if (!d) return null;
    await this.campaigns.updateOne({ _id: d.campaignId }, { $inc: { executedCount: 1 }, $set: { updatedAt: input.now } });
    return attemptFromDocument(d);
  }

  async markPlaced(organizationId: number, attemptId: number, input: { providerCallId: string; now: Date; checkAt: Date }) {
    const d = await this.attempts.findOneAndUpdate(
      { _id: attemptId, organizationId, status: 'dialing' },
      { $set: { status: 'placed', providerCallId: input.providerCallId, placedAt: input.now, checkAt: input.checkAt } },
      { returnDocument: 'after' },
    );
    return d ? attemptFromDocument(d) : null;
  }

  async releaseAttempt(organizationId: number, attemptId: number, now: Date): Promise<boolean> {
    for (let tries = 0; tries < 5; tries++) {
      const a = await this.attempts.findOne({ _id: attemptId, organizationId });
      if (!a) return false;
      const neverCalled = a.status === 'claimed' || (a.status === 'dialing' && a.runId == null);
      if (!neverCalled) return false;
      let token: number;
      if (a.slotToken != null) {
        // the decisive step: take the token away from the attempt (markDialing/attachRun need the same state)
        const won = await this.attempts.updateOne(
          { _id: attemptId, status: a.status, runId: null, slotToken: a.slotToken },
          { $set: { status: 'claimed', slotToken: null, releasedToken: a.slotToken } },
        );
        if (won.modifiedCount === 0) continue; // it changed meanwhile: look again
        token = a.slotToken;
      } else if (a.status === 'claimed' && a.releasedToken != null) {
        token = a.releasedToken; // finish a release that was interrupted (or find it already finished)
      } else {
        return false;
      }
      const campaign = await this.campaigns.findOne({ _id: a.campaignId }, { projection: { state: 1 } });
      const closed = !campaign || TERMINAL.includes(campaign.state);
      const contact = await this.contacts.findOneAndUpdate(
        { _id: a.contactId, status: 'active', currentAttemptId: a._id, slotToken: token },
        { $set: { status: closed ? 'dropped' : 'pending', slotToken: null, leaseUntil: null, updatedAt: now } },
      );
      if (!contact) return false;
      await this.campaigns.updateOne({ _id: a.campaignId }, { $pull: { inFlightSlots: { token } }, $set: { updatedAt: now } });
      return true;
    }
    return false;
  }

  async recordOutcome(organizationId: number, attemptId: number, record: OutcomeRecord): Promise<RecordedOutcome | null> {
    const before = await this.attempts.findOneAndUpdate(
      { _id: attemptId, organizationId, status: { $in: OPEN_ATTEMPT } },
      { $set: { status: 'ended', outcome: record.outcome, endedAt: record.now, retryAt: record.retryAt } },
      { returnDocument: 'after' },
    );
    const attempt = before ?? (await this.attempts.findOne({ _id: attemptId, organizationId }));
    if (!attempt) return null;
    await this.applyOutcome(attempt);
    const [contact, campaign] = await Promise.all([
      this.contacts.findOne({ _id: attempt.contactId }),
      this.campaigns.findOne({ _id: attempt.campaignId }),
    ]);
    return { recorded: before !== null, attempt: attemptFromDocument(attempt), contact: contactFromDocument(contact!), campaign: campaignFromDocument(campaign!) };
  }

  /**
   * The effects of an ended attempt, gated by the contact's move (only one caller ever moves it off this attempt),
   * so they apply exactly once; calling it again (a replay, a resumed interrupted call) changes nothing.
   */
  private async applyOutcome(a: AttemptDocument): Promise<void> {
    if (a.status !== 'ended' || a.outcome == null) return;
    const now = a.endedAt ?? new Date();
    const campaign = await this.campaigns.findOne({ _id: a.campaignId }, { projection: { state: 1 } });
    const closed = !campaign || TERMINAL.includes(campaign.state);
    const set: Partial<ContactDocument> = { currentAttemptId: null, slotToken: null, leaseUntil: null, lastOutcome: a.outcome, updatedAt: now };
    let inc: Record<string, number>;
    if (a.retryAt && closed) {
      set.status = 'dropped';
      inc = {};
    } else if (a.retryAt) {
      set.status = 'pending';
      set.nextAttemptAt = a.retryAt;
      inc = { totalQueuedCount: 1 };
    } else {
      set.status = 'done';
      set.finalOutcome = a.outcome;
      inc = { processedRows: 1, failedRows: a.outcome === 'completed' ? 0 : 1 };
    }
    const contactBefore = await this.contacts.findOneAndUpdate(
      { _id: a.contactId, currentAttemptId: a._id, status: { $in: ['active', 'pending'] } },
      { $set: set },
      { returnDocument: 'before' },
    );
    if (!contactBefore) return;
    const token = contactBefore.slotToken ?? a.slotToken;
    const update: Document = { $set: { updatedAt: now } };
    if (Object.keys(inc).length > 0) update.$inc = inc;
    if (token != null) update.$pull = { inFlightSlots: { token } };
    await this.campaigns.updateOne({ _id: a.campaignId }, update);
  }

  async postponeCheck(organizationId: number, attemptId: number, checkAt: Date) {
    await this.attempts.updateOne({ _id: attemptId, organizationId, status: { $in: OPEN_ATTEMPT } }, { $set: { checkAt } });
  }

  async attemptsDueForCheck(now: Date, limit: number): Promise<AttemptToCheck[]> {
    await this.repair(now);
    const attempts = await this.attempts.find({ status: { $in: OPEN_ATTEMPT }, checkAt: { $lte: now } }).sort({ checkAt: 1, _id: 1 }).limit(limit).toArray();
    if (attempts.length === 0) return [];
    const contacts = new Map((await this.contacts.find({ _id: { $in: attempts.map((a) => a.contactId) } }).toArray()).map((c) => [c._id, c]));
    return attempts.filter((a) => contacts.has(a.contactId))
      .map((a) => ({ attempt: attemptFromDocument(a), contact: contactFromDocument(contacts.get(a.contactId)!) }));
  }

  /** Heals what a process dying between the steps of a claim leaves behind (see the class comment). Idempotent. */
  async repair(now: Date): Promise<{ slotsFreed: number; attemptsWritten: number }> {
    let slotsFreed = 0;
    let attemptsWritten = 0;
    const stale = await this.contacts.find({ status: 'active', leaseUntil: { $lte: now } }).toArray();
    if (stale.length > 0) {
      const ids = stale.map((c) => c.currentAttemptId).filter((id): id is number => id != null);
      const existing = new Set((await this.attempts.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map((a) => a._id));
      for (const c of stale) {
        if (c.currentAttemptId == null || existing.has(c.currentAttemptId)) continue;
        const r = await this.attempts.updateOne({ _id: c.currentAttemptId }, {
          $setOnInsert: {
            organizationId: c.organizationId, campaignId: c.campaignId, contactId: c._id, attemptNumber: c.attemptsMade, status: 'claimed',
            runId: null, providerCallId: null, outcome: null, claimedAt: c.leaseUntil!, checkAt: c.leaseUntil!, placedAt: null, endedAt: null,
            slotToken: c.slotToken, releasedToken: null, retryAt: null,
          },
        }, { upsert: true });
        attemptsWritten += r.upsertedCount;
      }
    }
    const campaigns = await this.campaigns.find({ 'inFlightSlots.until': { $lte: now } }, { projection: { _id: 1, inFlightSlots: 1 } }).toArray();
    for (const campaign of campaigns) {
      const expired = campaign.inFlightSlots.filter((s) => new Date(s.until).getTime() <= now.getTime()).map((s) => s.token);
      const held = new Set((await this.contacts.find({ campaignId: campaign._id, slotToken: { $in: expired } }, { projection: { slotToken: 1 } })
        .toArray()).map((c) => c.slotToken));
      const orphans = expired.filter((t) => !held.has(t));
      if (orphans.length === 0) continue;
      const r = await this.campaigns.updateOne({ _id: campaign._id }, { $pull: { inFlightSlots: { token: { $in: orphans } } } });
      if (r.modifiedCount > 0) slotsFreed += orphans.length;
    }
    return { slotsFreed, attemptsWritten };
  }

  async breakerWindow(organizationId: number, campaignId: number, since: Date): Promise<BreakerWindow> {
    const scope = { organizationId, campaignId, endedAt: { $gte: since } };
    const [calls, failures] = await Promise.all([
      this.attempts.countDocuments(scope),
      this.attempts.countDocuments({ ...scope, outcome: 'failed' }),
    ]);
    return { calls, failures };
  }

  async completeIfDone(organizationId: number, campaignId: number, now: Date, log: CampaignLogEntry, event?: PendingEvent) {
    const open = await this.contacts.findOne({ organizationId, campaignId, status: { $in: ['pending', 'active'] } }, { projection: { _id: 1 } });
    if (open) return null;
    const d = await this.campaigns.findOneAndUpdate(
      { _id: campaignId, organizationId, state: 'running', inFlightSlots: { $size: 0 } },
      { $set: { state: 'completed', completedAt: now, updatedAt: now }, ...(event ? { $push: { pendingEvents: pendingEventToDocument(event) } } : {}) },
      { returnDocument: 'after' },
    );
    if (!d) return null;
    await this.insertLogs(organizationId, campaignId, [log]);
    return campaignFromDocument(d);
  }
}
