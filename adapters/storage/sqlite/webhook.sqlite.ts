import { randomUUID } from 'node:crypto';
import type { WebhookEventType } from '../../../core/ports/event-publisher.port.js';
import type { PendingFact } from '../../../core/ports/event-publisher.port.js';
import type {
  NewEventDeliveries, NewWebhookDelivery, NewWebhookEndpoint, PendingMarker, WebhookAttemptRecord, WebhookAttemptResult, WebhookEndpointPatch, WebhookRepository,
} from '../../../core/ports/webhook.repository.port.js';
import { eventDeliveries } from '../../../core/ports/webhook.repository.port.js';
import type { WebhookDelivery, WebhookDeliveryEvent, WebhookDeliveryStatus, WebhookEndpoint } from '../../../core/webhooks/webhook.js';
import { fromMs, fromMsOrNull, toMs, toMsOrNull, type SqliteDatabase } from './database.js';
import { clearPendingEvent, listPendingEvents } from './pending-events.sqlite.js';

export interface WebhookEndpointRow {
  id: number; organization_id: number; url: string; events: string; description: string | null; secret: string; secrets_key_id: string;
  created_at: number; updated_at: number;
}

export interface WebhookDeliveryRow {
  id: number; organization_id: number; endpoint_id: number; event: string; body: string; status: string; attempts: number;
  last_status_code: number | null; last_error: string | null; next_attempt_at: number | null; lease_until: number | null; lease_token: string | null;
  created_at: number; updated_at: number;
}

export const webhookEndpointFromRow = (r: WebhookEndpointRow): WebhookEndpoint => ({
  id: r.id, organizationId: r.organization_id, url: r.url, events: JSON.parse(r.events) as WebhookEventType[], description: r.description,
  secretCiphertext: r.secret, secretsKeyId: r.secrets_key_id, createdAt: fromMs(r.created_at), updatedAt: fromMs(r.updated_at),
});

export const webhookDeliveryFromRow = (r: WebhookDeliveryRow): WebhookDelivery => ({
  id: r.id, organizationId: r.organization_id, endpointId: r.endpoint_id, event: r.event as WebhookDeliveryEvent, body: r.body,
  status: r.status as WebhookDeliveryStatus, attempts: r.attempts, lastStatusCode: r.last_status_code, lastError: r.last_error,
  nextAttemptAt: fromMsOrNull(r.next_attempt_at), leaseUntil: fromMsOrNull(r.lease_until), leaseToken: r.lease_token,
  createdAt: fromMs(r.created_at), updatedAt: fromMs(r.updated_at),
});

/** Endpoint writes made through any webhook repository on a connection (see `subscribedEndpoints`). */
const endpointWrites = new WeakMap<SqliteDatabase, { n: number }>();

/** How many delivery ids a connection reserves at once (see `enqueue`). */
export const DELIVERY_ID_BLOCK = 64;
/** The delivery ids a connection has reserved and not used yet: `next` up to `end` included (empty when next > end). */
const idBlocks = new WeakMap<SqliteDatabase, { next: number; end: number }>();

/**
 * WebhookRepository on the embedded database. A claim is one UPDATE ... WHERE id IN (SELECT due ... LIMIT n)
 * RETURNING: SQLite runs it as one write, so two claims never take the same delivery. A claim also moves
 * `next_attempt_at` to the lease's end (when the delivery is due again should its sender die), so finding due
 * deliveries is one index range (status, next_attempt_at) that never walks the claimed ones.
 *
 * `subscribedEndpoints` runs for every published event: it answers from the organization's endpoints as last
 * read while they cannot have changed, i.e. while no endpoint was written on this connection (every endpoint
 * write goes through a webhook repository, which counts it per connection) and no other connection (another
 * process) committed anything (`PRAGMA data_version`); otherwise it reads them again. So it is exact, not a
 * time-based cache: an endpoint created, changed or deleted is seen by the next event, as before.
 *
 * Delivery ids come from the table's AUTOINCREMENT sequence, so an id is never used twice, not even after the
 * newest deliveries were deleted with their endpoint (receivers dedupe on it). A connection reserves them
 * `DELIVERY_ID_BLOCK` at a time (one sequence write per 64 deliveries, inside the insert's IMMEDIATE transaction)
 * and inserts each delivery with the next reserved id, below the sequence's value, so SQLite leaves the sequence
 * row alone: one WAL page fewer per stored event (docs/benchmarks.md section 8). Ids of one connection grow with
 * time; between processes they interleave by block, and a stopped process leaves the rest of its block unused.
 */
export class SqliteWebhookRepository implements WebhookRepository {
  private readonly q;
  private readonly tx;
  private readonly writes: { n: number };
  private readonly orgEndpoints = new Map<number, { dataVersion: number; writes: number; endpoints: WebhookEndpoint[] }>();

  constructor(private readonly db: SqliteDatabase) {
    let writes = endpointWrites.get(db);
    if (!writes) endpointWrites.set(db, (writes = { n: 0 }));
    this.writes = writes;
    this.q = {
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
      insertEndpoint: db.prepare<[number, string, string, string | null, string, string, number, number], WebhookEndpointRow>(
        `INSERT INTO webhook_endpoints (organization_id, url, events, description, secret, secrets_key_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`),
      getEndpoint: db.prepare<[number, number], WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE organization_id = ? AND id = ?'),
      listEndpoints: db.prepare<[number], WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE organization_id = ? ORDER BY id'),
      findEndpoints: db.prepare<[string], WebhookEndpointRow>('SELECT * FROM webhook_endpoints WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id'),
      updateEndpoint: db.prepare<{ org: number; id: number; url: string | null; events: string | null; setDescription: number; description: string | null; secret: string | null; now: number }, WebhookEndpointRow>(
        `UPDATE webhook_endpoints SET url = COALESCE(@url, url), events = COALESCE(@events, events),
           description = CASE WHEN @setDescription = 1 THEN @description ELSE description END,
           secret = COALESCE(@secret, secret), updated_at = @now
         WHERE organization_id = @org AND id = @id RETURNING *`),
      deleteEndpoint: db.prepare<[number, number]>('DELETE FROM webhook_endpoints WHERE organization_id = ? AND id = ?'),
      // in two parts, each through its index (finished: the endpoint index; pending: the due index), see listDeliveries
      deleteDone: db.prepare<[number, number]>("DELETE FROM webhook_deliveries WHERE organization_id = ? AND endpoint_id = ? AND status <> 'pending'"),
      deletePending: db.prepare<[number, number]>("DELETE FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE organization_id = ? AND endpoint_id = ? AND status = 'pending'"),
      // one statement per delivery: the id is chosen first (from the block this connection reserved from the
      // table's AUTOINCREMENT sequence, inside the IMMEDIATE write transaction, so no other writer can take it) so
      // the body that carries it is written with the row; only a repeated (endpoint, event_key) is skipped, any
      // other conflict (an id taken, which the reservation rules out) throws
      seedSequence: db.prepare<[]>(
        "INSERT INTO sqlite_sequence (name, seq) SELECT 'webhook_deliveries', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'webhook_deliveries')"),
      // from the sequence (or the largest stored id, should the two disagree): never an id used before
      reserveIds: db.prepare<[number], number>(
        `UPDATE sqlite_sequence SET seq = MAX(seq, (SELECT COALESCE(MAX(id), 0) FROM webhook_deliveries)) + ?
         WHERE name = 'webhook_deliveries' RETURNING seq`).pluck(),
      // no RETURNING: the stored row is exactly these values (the caller builds it), which is cheaper than reading it back;
      // positional parameters: binding by name looks every one up on an object, ~2 us more per insert (once per event)
      insertDelivery: db.prepare<[id: number, org: number, endpoint: number, event: string, body: string, key: string | null, next: number, until: number | null, token: string | null, created: number, updated: number]>(
        `INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event, body, event_key, status, attempts, next_attempt_at, lease_until, lease_token, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?, ?)
         ON CONFLICT (endpoint_id, event_key) WHERE event_key IS NOT NULL DO NOTHING`),
      claim: db.prepare<{ now: number; until: number; token: string; limit: number; exclude: string }, WebhookDeliveryRow>(
        `UPDATE webhook_deliveries SET lease_until = @until, next_attempt_at = @until, lease_token = @token || '.' || id
         WHERE id IN (
           SELECT id FROM webhook_deliveries
           WHERE status = 'pending' AND next_attempt_at <= @now
             AND endpoint_id NOT IN (SELECT value FROM json_each(@exclude))
           ORDER BY next_attempt_at, id LIMIT @limit)
         RETURNING *`),
      // positional, like insertDelivery (run once per delivery)
      record: db.prepare<[status: string, attempts: number, code: number | null, error: string | null, next: number | null, now: number, id: number, token: string]>(
        `UPDATE webhook_deliveries SET status = ?, attempts = ?, last_status_code = ?, last_error = ?,
           next_attempt_at = ?, lease_until = NULL, lease_token = NULL, updated_at = ?
         WHERE id = ? AND lease_token = ?`),
      // an endpoint's log is its finished deliveries (the endpoint index, partial: an insert does not write it) and its
      // pending ones (the due index, which carries organization and endpoint; named, since without statistics the
      // planner would rather walk the table in id order): the ids of both merged newest first, then the page's rows
      // read by id (migration 13)
      page: db.prepare<{ org: number; endpoint: number; limit: number; offset: number }, WebhookDeliveryRow>(
        `SELECT d.* FROM (
           SELECT id FROM webhook_deliveries WHERE organization_id = @org AND endpoint_id = @endpoint AND status <> 'pending'
           UNION ALL
           SELECT id FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE organization_id = @org AND endpoint_id = @endpoint AND status = 'pending'
           ORDER BY id DESC LIMIT @limit OFFSET @offset
         ) AS p JOIN webhook_deliveries AS d ON d.id = p.id ORDER BY d.id DESC`),
      count: db.prepare<{ org: number; endpoint: number }, { n: number }>(
        `SELECT (SELECT COUNT(*) FROM webhook_deliveries WHERE organization_id = @org AND endpoint_id = @endpoint AND status <> 'pending')
              + (SELECT COUNT(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE organization_id = @org AND endpoint_id = @endpoint AND status = 'pending') AS n`),
      getDelivery: db.prepare<[number, number, number], WebhookDeliveryRow>('SELECT * FROM webhook_deliveries WHERE organization_id = ? AND endpoint_id = ? AND id = ?'),
      retry: db.prepare<{ now: number; org: number; endpoint: number; id: number }, WebhookDeliveryRow>(
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = @now, lease_until = NULL, lease_token = NULL, updated_at = @now
         WHERE organization_id = @org AND endpoint_id = @endpoint AND id = @id RETURNING *`),
      nextDue: db.prepare<[], { at: number | null }>("SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'"),
    };
    // built once: better-sqlite3's db.transaction() makes a new wrapper per call, ~0.02 ms each, and an outbox insert
    // and a record are one transaction each per event (docs/benchmarks.md section 8)
    this.tx = {
      enqueue: db.transaction((organizationId: number, deliveries: NewWebhookDelivery[], lease: { leaseMs: number } | undefined, token: string | null, marker: PendingMarker | undefined) =>
        this.store(organizationId, deliveries, lease, token, marker)),
      enqueueEvent: db.transaction((organizationId: number, input: NewEventDeliveries) => {
        const endpoints = this.subscribedNow(organizationId, input.event);
        if (endpoints.length === 0) {
          if (input.marker) clearPendingEvent(this.db, input.marker.kind, organizationId, input.marker.id, input.marker.key);
          return { endpoints, stored: [] as WebhookDelivery[], block: null, leased: false };
        }
        const lease = input.lease?.(endpoints.length) ?? undefined;
        const { stored, block } = this.store(organizationId, eventDeliveries(input, endpoints), lease, lease ? randomUUID() : null, input.marker);
        return { endpoints, stored, block, leased: lease !== undefined };
      }),
      record: db.transaction((records: readonly WebhookAttemptRecord[]) => records.map(({ id, leaseToken, result: r }) => this.q.record.run(
        r.status, r.attempts, r.lastStatusCode, r.lastError, toMsOrNull(r.nextAttemptAt), toMs(r.now), id, leaseToken,
      ).changes > 0)),
      deleteEndpoint: db.transaction((organizationId: number, id: number) => {
        const gone = this.q.deleteEndpoint.run(organizationId, id).changes > 0;
        if (gone) {
          this.q.deleteDone.run(organizationId, id);
          this.q.deletePending.run(organizationId, id);
        }
        return gone;
      }),
    };
  }

  /**
   * Inserts the deliveries with ids from this connection's block (inside the caller's IMMEDIATE transaction) and
   * clears the marker; returns the stored ones and the block as it stands after them (kept once committed).
   */
  private store(organizationId: number, deliveries: NewWebhookDelivery[], lease: { leaseMs: number } | undefined, token: string | null, marker: PendingMarker | undefined) {
    const db = this.db;
    // a copy: the connection's block moves on only once this transaction committed (see `enqueue`)
    const block = { ...(idBlocks.get(db) ?? { next: 1, end: 0 }) };
    const stored: WebhookDelivery[] = [];
    for (const d of deliveries) {
      if (block.next > block.end) {
        const want = Math.max(DELIVERY_ID_BLOCK, deliveries.length);
        this.q.seedSequence.run();
        block.end = this.q.reserveIds.get(want)!;
        block.next = block.end - want + 1;
      }
      const id = block.next;
      const now = toMs(d.now);
      const until = lease ? now + lease.leaseMs : null;
      const body = d.body(id);
      const next = until ?? now;
      const leaseToken = token ? `${token}.${id}` : null;
      if (this.q.insertDelivery.run(id, organizationId, d.endpointId, d.event, body, d.eventKey ?? null, next, until, leaseToken, now, now).changes === 0) continue;
      stored.push(webhookDeliveryFromRow({
        id, organization_id: organizationId, endpoint_id: d.endpointId, event: d.event, body, status: 'pending', attempts: 0,
        last_status_code: null, last_error: null, next_attempt_at: next, lease_until: until, lease_token: leaseToken, created_at: now, updated_at: now,
      }));
      block.next++;
    }
    // the event's marker goes with the same commit: one write per published event, not two
    if (marker) clearPendingEvent(this.db, marker.kind, organizationId, marker.id, marker.key);
    return { stored, block };
  }

  async createEndpoint(organizationId: number, input: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    this.writes.n++;
    const now = toMs(input.now);
    return webhookEndpointFromRow(this.q.insertEndpoint.get(
      organizationId, input.url, JSON.stringify(input.events), input.description, input.secretCiphertext, input.secretsKeyId, now, now,
    )!);
  }

  async getEndpoint(organizationId: number, id: number): Promise<WebhookEndpoint | null> {
    const r = this.q.getEndpoint.get(organizationId, id);
    return r ? webhookEndpointFromRow(r) : null;
  }

  async listEndpoints(organizationId: number): Promise<WebhookEndpoint[]> {
    return this.q.listEndpoints.all(organizationId).map(webhookEndpointFromRow);
  }

  async subscribedEndpoints(organizationId: number, event: WebhookEventType): Promise<WebhookEndpoint[]> {
    return this.subscribedNow(organizationId, event);
  }

  /** `subscribedEndpoints`, synchronous: also called inside `enqueueEvent`'s transaction. */
  private subscribedNow(organizationId: number, event: WebhookEventType): WebhookEndpoint[] {
    // read the version first: a commit by another connection after it shows as a new version next time (inside a
    // write transaction no other connection can commit meanwhile, and the read takes no lock of its own)
    const dataVersion = this.q.dataVersion.get()!;
    let kept = this.orgEndpoints.get(organizationId);
    if (!kept || kept.dataVersion !== dataVersion || kept.writes !== this.writes.n) {
      kept = { dataVersion, writes: this.writes.n, endpoints: this.q.listEndpoints.all(organizationId).map(webhookEndpointFromRow) };
      if (this.orgEndpoints.size >= 1000) this.orgEndpoints.delete(this.orgEndpoints.keys().next().value as number);
      this.orgEndpoints.set(organizationId, kept);
    }
    return kept.endpoints.filter((e) => e.events.includes(event));
  }

  async findEndpoints(ids: readonly number[]): Promise<WebhookEndpoint[]> {
    if (ids.length === 0) return [];
    return this.q.findEndpoints.all(JSON.stringify(ids)).map(webhookEndpointFromRow);
  }

  async updateEndpoint(organizationId: number, id: number, patch: WebhookEndpointPatch): Promise<WebhookEndpoint | null> {
    this.writes.n++;
    const r = this.q.updateEndpoint.get({
      org: organizationId, id, now: toMs(patch.now), url: patch.url ?? null, events: patch.events ? JSON.stringify(patch.events) : null,
      setDescription: patch.description !== undefined ? 1 : 0, description: patch.description ?? null, secret: patch.secretCiphertext ?? null,
    });
    return r ? webhookEndpointFromRow(r) : null;
  }

  async deleteEndpoint(organizationId: number, id: number): Promise<boolean> {
    this.writes.n++;
    return this.tx.deleteEndpoint(organizationId, id);
  }

  async enqueue(organizationId: number, deliveries: NewWebhookDelivery[], lease?: { leaseMs: number }, marker?: PendingMarker): Promise<WebhookDelivery[]> {
    if (deliveries.length === 0) {
      if (marker) clearPendingEvent(this.db, marker.kind, organizationId, marker.id, marker.key);
      return [];
    }
    // a transaction that threw was rolled back with any reservation it made: the connection's block stays as it was
    const { stored, block } = this.tx.enqueue.immediate(organizationId, deliveries, lease, lease ? randomUUID() : null, marker);
    idBlocks.set(this.db, block);
    return stored;
  }

  async enqueueEvent(organizationId: number, input: NewEventDeliveries): Promise<{ endpoints: WebhookEndpoint[]; deliveries: WebhookDelivery[]; leased: boolean }> {
    // one IMMEDIATE transaction: the subscribed endpoints are read under the write lock (PRAGMA data_version then
    // costs no read transaction of its own: docs/benchmarks.md section 8), the deliveries stored, the marker cleared
    const r = this.tx.enqueueEvent.immediate(organizationId, input);
    if (r.block) idBlocks.set(this.db, r.block);
    return { endpoints: r.endpoints, deliveries: r.stored, leased: r.leased };
  }

  async claimDue(now: Date, leaseMs: number, limit: number, excludeEndpointIds: readonly number[] = []): Promise<WebhookDelivery[]> {
    const at = toMs(now);
    return this.q.claim.all({ now: at, until: at + leaseMs, token: randomUUID(), limit, exclude: JSON.stringify(excludeEndpointIds) })
      .map(webhookDeliveryFromRow)
      .sort((a, b) => (a.nextAttemptAt!.getTime() - b.nextAttemptAt!.getTime()) || a.id - b.id);
  }

  async recordAttempt(id: number, leaseToken: string, r: WebhookAttemptResult): Promise<boolean> {
    return this.q.record.run(r.status, r.attempts, r.lastStatusCode, r.lastError, toMsOrNull(r.nextAttemptAt), toMs(r.now), id, leaseToken).changes > 0;
  }

  async recordAttempts(records: readonly WebhookAttemptRecord[]): Promise<boolean[]> {
    if (records.length === 0) return [];
    return this.tx.record(records);
  }

  async listDeliveries(organizationId: number, endpointId: number, page: { page: number; limit: number }) {
    const rows = this.q.page.all({ org: organizationId, endpoint: endpointId, limit: page.limit, offset: (page.page - 1) * page.limit });
    return { deliveries: rows.map(webhookDeliveryFromRow), totalCount: this.q.count.get({ org: organizationId, endpoint: endpointId })!.n };
  }

  async getDelivery(organizationId: number, endpointId: number, id: number): Promise<WebhookDelivery | null> {
    const r = this.q.getDelivery.get(organizationId, endpointId, id);
    return r ? webhookDeliveryFromRow(r) : null;
  }

  async retryDelivery(organizationId: number, endpointId: number, id: number, now: Date): Promise<WebhookDelivery | null> {
    const r = this.q.retry.get({ now: toMs(now), org: organizationId, endpoint: endpointId, id });
    return r ? webhookDeliveryFromRow(r) : null;
  }

  async nextDueAt(): Promise<Date | null> {
    return fromMsOrNull(this.q.nextDue.get()!.at);
  }

  async pendingEvents(limit: number): Promise<PendingFact[]> {
    return listPendingEvents(this.db, limit);
  }

  async clearPendingEvent(kind: PendingFact['kind'], organizationId: number, id: number, key: string): Promise<void> {
    clearPendingEvent(this.db, kind, organizationId, id, key);
  }
}
