/**
 * Moves an embedded installation (the SQLite file) to MongoDB: every record of every table, with its id, through
 * the SQLite row mappers (row → domain object) and the MongoDB document mappers (domain object → document), so
 * both stores keep one definition of each shape. `callplane migrate --from sqlite --to mongodb` runs it.
 *
 * - Stop every Callplane process using the SQLite file first: a record written during the copy may be missed.
 * - Ids are kept (`_id` = the SQLite id) and each id counter is advanced past the largest copied id
 *   (`advanceCounter`), so records created afterwards never reuse one.
 * - Telephony and AI service credentials are copied as stored (ciphertexts): the MongoDB deployment must use the
 *   same CALLPLANE_SECRET_KEY (or the same `secret.key` file) to read them.
 * - Campaign calls still in flight (attempts claimed, dialing or placed) are copied with the MongoDB adapter's
 *   claim bookkeeping: each open attempt becomes an in-flight slot of its campaign whose token is the attempt id
 *   (held by the attempt and, while active, by its contact), with the attempt's check time as the lease; the
 *   workers' reconciliation sweep then settles them as after a crash.
 * - Scheduler jobs are not copied (they are Agenda's own records, in our SQLite backend's format): the workers
 *   recreate the periodic reconciliation job when they start, and its first sweep (run at start, then every
 *   CALLPLANE_CAMPAIGN_SWEEP_MS) triggers dispatch of every running campaign, which also schedules the next due
 *   time of campaigns waiting for a retry or a schedule slot.
 * - Idempotent: documents are written with replace-by-id upserts, so a second run rewrites the same documents.
 *   A target that already holds Callplane records is refused unless `force` (then records with the same id are
 *   overwritten and records only in the target are kept, which the count check reports).
 */
import type { AnyBulkWriteOperation, Db, Document } from 'mongodb';
import type { SqliteDatabase } from '../storage/sqlite/database.js';
import { apiKeyFromRow, organizationFromRow, sessionFromRow, userFromRow } from '../storage/sqlite/identity.sqlite.js';
import { workflowDefinitionFromRow, workflowFromRow, type WorkflowDefinitionRow, type WorkflowRow } from '../storage/sqlite/workflow.sqlite.js';
import { runFromRow, type RunRow } from '../storage/sqlite/run.sqlite.js';
import { telephonyConfigurationFromRow, type TelephonyConfigurationRow } from '../storage/sqlite/telephony-configuration.sqlite.js';
import { phoneNumberFromRow, type PhoneNumberRow } from '../storage/sqlite/phone-number.sqlite.js';
import { uploadFromRow } from '../storage/sqlite/upload.sqlite.js';
import { attemptFromRow, campaignFromRow, contactFromRow, type AttemptRow, type CampaignRow, type ContactRow } from '../storage/sqlite/campaign.sqlite.js';
import { organizationSettingsFromRow, type OrganizationSettingsRow } from '../storage/sqlite/organization-settings.sqlite.js';
import { aiServiceFromRow, type AiServiceRow } from '../storage/sqlite/ai-service.sqlite.js';
import { aiServiceToDocument } from '../storage/mongo/ai-service.mongo.js';
import { webhookDeliveryFromRow, webhookEndpointFromRow, type WebhookDeliveryRow, type WebhookEndpointRow } from '../storage/sqlite/webhook.sqlite.js';
import { webhookDeliveryToDocument, webhookEndpointToDocument } from '../storage/mongo/webhook.mongo.js';
import { chatFromRow, type ChatRow } from '../storage/sqlite/chat.sqlite.js';
import { chatToDocument } from '../storage/mongo/chat.mongo.js';
import { advanceCounter, ensureMongoSchema } from '../storage/mongo/mongo-database.js';
import { Collections, mongoCollections } from '../storage/mongo/mongo-schema.js';
import { apiKeyToDocument, organizationToDocument, sessionToDocument, userToDocument } from '../storage/mongo/identity.mongo.js';
import { workflowDefinitionToDocument, workflowToDocument } from '../storage/mongo/workflow.mongo.js';
import { runToDocument } from '../storage/mongo/run.mongo.js';
import { telephonyConfigurationToDocument } from '../storage/mongo/telephony-configuration.mongo.js';
import { phoneNumberToDocument } from '../storage/mongo/phone-number.mongo.js';
import { uploadToDocument } from '../storage/mongo/upload.mongo.js';
import { campaignToDocument, contactToDocument, type AttemptDocument, type CampaignLogDocument, type InFlightSlot } from '../storage/mongo/campaign.mongo.js';
import { ORGANIZATION_SETTINGS_COLLECTION, organizationSettingsToDocument } from '../storage/mongo/organization-settings.mongo.js';

/** One copied table: rows in SQLite, documents in its MongoDB collection after the copy. */
export interface TableCount {
  table: string;
  collection: string;
  source: number;
  target: number;
}

export interface MigrationReport {
  tables: TableCount[];
  /** True when every collection holds exactly as many documents as its table has rows. */
  ok: boolean;
  /** Notes worth printing (inconsistencies repaired, what was not copied). */
  notes: string[];
}

export class TargetNotEmptyError extends Error {
  constructor(readonly collections: string[]) {
    super(`the MongoDB database already holds Callplane records (${collections.join(', ')}); run with --force to copy over them`);
  }
}

export interface MigrateOptions {
  /** Copy into a database that already holds Callplane records (same ids are overwritten). */
  force?: boolean;
  /** Documents per bulk write (default 1000). */
  batchSize?: number;
  /** Progress lines (one per table). */
  progress?: (line: string) => void;
}

type RowsOf<F> = F extends (r: infer R) => unknown ? R : never;

interface TablePlan {
  table: string;
  collection: string;
  /** The id counter to advance (null: the collection's `_id` is not from a counter). */
  sequence: string | null;
  /** Streams the table's documents. */
  documents(): Iterable<Document & { _id: number }>;
}

const OPEN_ATTEMPT = new Set(['claimed', 'dialing', 'placed']);

/** Every table the copy covers, in the order copied; the SQLite schema must be current (open with migrations). */
function plans(sqlite: SqliteDatabase, notes: string[]): TablePlan[] {
  const rows = <R>(sql: string, ...params: unknown[]): Iterable<R> => sqlite.prepare(sql).iterate(...params) as Iterable<R>;
  const simple = <R>(table: string, collection: string, map: (r: R) => Document & { _id: number }): TablePlan => ({
    table, collection, sequence: collection,
    *documents() {
      for (const r of rows<R>(`SELECT * FROM ${table} ORDER BY id`)) yield map(r);
    },
  });

  // workflows carry their current and last version numbers (MongoDB orders concurrent version writes on them)
  const versions = new Map<number, { current: number; last: number }>();
  for (const v of rows<{ workflow_id: number; last: number; current: number | null }>(`
      SELECT d.workflow_id, MAX(d.version_number) AS last,
        MAX(CASE WHEN d.id = w.current_definition_id THEN d.version_number END) AS current
      FROM workflow_definitions d JOIN workflows w ON w.id = d.workflow_id GROUP BY d.workflow_id`)) {
    versions.set(v.workflow_id, { last: v.last, current: v.current ?? v.last });
  }

  // campaign calls in flight: one slot per open attempt, token = attempt id
  const slots = new Map<number, InFlightSlot[]>();
  const open = new Map<number, { token: number; until: Date }>();
  for (const a of rows<AttemptRow>(`SELECT * FROM campaign_attempts WHERE status <> 'ended' ORDER BY id`)) {
    const slot = { token: a.id, until: new Date(a.check_at) };
    open.set(a.id, slot);
    slots.set(a.campaign_id, [...(slots.get(a.campaign_id) ?? []), slot]);
  }
  for (const c of rows<{ id: number; in_flight: number }>('SELECT id, in_flight FROM campaigns WHERE in_flight > 0')) {
    const n = slots.get(c.id)?.length ?? 0;
    if (n !== c.in_flight) notes.push(`campaign ${c.id}: in_flight was ${c.in_flight} but ${n} attempt(s) are open; copied with ${n} slot(s)`);
  }

  return [
    simple<RowsOf<typeof organizationFromRow>>('organizations', Collections.organizations, (r) => organizationToDocument(organizationFromRow(r))),
    simple<RowsOf<typeof userFromRow>>('users', Collections.users, (r) => userToDocument(userFromRow(r))),
    simple<RowsOf<typeof sessionFromRow>>('sessions', Collections.sessions, (r) => sessionToDocument(sessionFromRow(r))),
    simple<RowsOf<typeof apiKeyFromRow>>('api_keys', Collections.apiKeys, (r) => apiKeyToDocument(apiKeyFromRow(r))),
    simple<WorkflowRow>('workflows', Collections.workflows, (r) => workflowToDocument(workflowFromRow(r), versions.get(r.id) ?? { current: 0, last: 0 })),
    simple<WorkflowDefinitionRow>('workflow_definitions', Collections.workflowDefinitions, (r) => workflowDefinitionToDocument(workflowDefinitionFromRow(r))),
    simple<RunRow>('runs', Collections.runs, (r) => runToDocument(runFromRow(r), 0)),
    simple<TelephonyConfigurationRow>('telephony_configurations', Collections.telephonyConfigurations, (r) => telephonyConfigurationToDocument(telephonyConfigurationFromRow(r))),
    simple<PhoneNumberRow>('phone_numbers', Collections.phoneNumbers, (r) => phoneNumberToDocument(phoneNumberFromRow(r))),
    simple<AiServiceRow>('ai_services', Collections.aiServices, (r) => aiServiceToDocument(aiServiceFromRow(r))),
    simple<ChatRow>('chats', Collections.chats, (r) => chatToDocument(chatFromRow(r))),
    simple<WebhookEndpointRow>('webhook_endpoints', Collections.webhookEndpoints, (r) => webhookEndpointToDocument(webhookEndpointFromRow(r))),
    // a delivery claimed by the old process is copied unclaimed: the new one sends it (at least once)
    simple<WebhookDeliveryRow>('webhook_deliveries', Collections.webhookDeliveries, (r) =>
      webhookDeliveryToDocument({ ...webhookDeliveryFromRow(r), leaseUntil: null, leaseToken: null })),
    simple<RowsOf<typeof uploadFromRow>>('uploads', Collections.uploads, (r) => uploadToDocument(uploadFromRow(r))),
    simple<CampaignRow>('campaigns', Collections.campaigns, (r) => campaignToDocument(campaignFromRow(r), slots.get(r.id) ?? [])),
    simple<ContactRow>('campaign_contacts', Collections.campaignContacts, (r) => {
      const claim = r.status === 'active' && r.current_attempt_id !== null ? open.get(r.current_attempt_id) : undefined;
      return contactToDocument(contactFromRow(r), claim ? { slotToken: claim.token, leaseUntil: claim.until } : { slotToken: null, leaseUntil: null });
    }),
    simple<AttemptRow>('campaign_attempts', Collections.campaignAttempts, (r): AttemptDocument => {
      const a = attemptFromRow(r);
      return {
        _id: a.id, organizationId: a.organizationId, campaignId: a.campaignId, contactId: a.contactId, attemptNumber: a.attemptNumber,
        status: a.status, runId: a.runId, providerCallId: a.providerCallId, outcome: a.outcome, claimedAt: a.claimedAt, checkAt: a.checkAt,
        placedAt: a.placedAt, endedAt: a.endedAt, slotToken: OPEN_ATTEMPT.has(r.status) ? a.id : null, releasedToken: null, retryAt: null,
      };
    }),
    simple<{ id: number; organization_id: number; campaign_id: number; ts: number; level: string; event: string; message: string; details: string }>(
      'campaign_logs', Collections.campaignLogs, (r): CampaignLogDocument => ({
        _id: r.id, organizationId: r.organization_id, campaignId: r.campaign_id, ts: new Date(r.ts), level: r.level as CampaignLogDocument['level'],
        event: r.event, message: r.message, detailsJson: r.details,
      })),
    {
      table: 'organization_settings', collection: ORGANIZATION_SETTINGS_COLLECTION, sequence: null,
      *documents() {
        for (const r of rows<OrganizationSettingsRow>('SELECT * FROM organization_settings ORDER BY organization_id')) {
          const s = organizationSettingsFromRow(r);
          yield organizationSettingsToDocument({ ...s, updatedAt: s.updatedAt ?? new Date(r.updated_at) });
        }
      },
    },
  ];
}

/** Every collection a Callplane installation writes records to (the scheduler's jobs aside). */
export const migratedCollections = (): string[] => [...mongoCollections.map((c) => c.name).filter((n) => n !== Collections.counters), ORGANIZATION_SETTINGS_COLLECTION];

/** The collections of `db` that already hold documents, among Callplane's. */
export async function nonEmptyCollections(db: Db): Promise<string[]> {
  const out: string[] = [];
  for (const name of migratedCollections()) {
    if (await db.collection(name).countDocuments({}, { limit: 1 }) > 0) out.push(name);
  }
  return out;
}

/**
 * Copies every record of `sqlite` (an opened, migrated database) into `db` (see the file comment), advances the
 * id counters, and counts both sides. Throws `TargetNotEmptyError` when the target holds Callplane records and
 * `force` is not set (nothing written then). A failed write (for example a unique index rejecting a record that
 * clashes with one already in a forced target) throws after the tables before it were copied; running again
 * after fixing the cause is safe.
 */
export async function migrateSqliteToMongo(sqlite: SqliteDatabase, db: Db, options: MigrateOptions = {}): Promise<MigrationReport> {
  const batchSize = Math.max(1, options.batchSize ?? 1000);
  if (!options.force) {
    const taken = await nonEmptyCollections(db);
    if (taken.length > 0) throw new TargetNotEmptyError(taken);
  }
  await ensureMongoSchema(db);
  const notes: string[] = [];
  const read = sqlite.transaction(() => plans(sqlite, notes)).deferred; // the plans' lookups in one snapshot
  const tables: TableCount[] = [];
  for (const plan of read()) {
    const collection = db.collection<Document & { _id: number }>(plan.collection);
    let batch: AnyBulkWriteOperation<Document & { _id: number }>[] = [];
    let maxId = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      await collection.bulkWrite(batch, { ordered: true });
      batch = [];
    };
    for (const doc of plan.documents()) {
      maxId = Math.max(maxId, doc._id);
      batch.push({ replaceOne: { filter: { _id: doc._id }, replacement: doc, upsert: true } });
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    if (plan.sequence && maxId > 0) await advanceCounter(db, plan.sequence, maxId);
    const source = (sqlite.prepare(`SELECT COUNT(*) AS n FROM ${plan.table}`).get() as { n: number }).n;
    const target = await collection.countDocuments({});
    tables.push({ table: plan.table, collection: plan.collection, source, target });
    options.progress?.(`${plan.table}: ${source} row(s) → ${plan.collection}: ${target} document(s)`);
  }
  notes.push('scheduler jobs: not copied; workers recreate the reconciliation job at start and its sweep re-triggers every running campaign');
  return { tables, ok: tables.every((t) => t.source === t.target), notes };
}

/** The report as aligned text lines (table, rows in SQLite, documents in MongoDB, status). */
export function formatMigrationReport(report: MigrationReport): string {
  const w = Math.max(5, ...report.tables.map((t) => t.table.length));
  const lines = [`${'table'.padEnd(w)}  ${'sqlite'.padStart(8)}  ${'mongodb'.padStart(8)}`];
  for (const t of report.tables) {
    lines.push(`${t.table.padEnd(w)}  ${String(t.source).padStart(8)}  ${String(t.target).padStart(8)}  ${t.source === t.target ? 'ok' : 'MISMATCH'}`);
  }
  for (const n of report.notes) lines.push(`note: ${n}`);
  lines.push(report.ok ? 'migration complete: every count matches' : 'migration INCOMPLETE: some counts differ (see MISMATCH)');
  return lines.join('\n') + '\n';
}
