import { randomUUID } from 'node:crypto';
import type { Db, Filter } from 'mongodb';
import type { WebhookEventType } from '../../../core/ports/event-publisher.port.js';
import type { PendingFact } from '../../../core/ports/event-publisher.port.js';
import type {
  NewEventDeliveries, NewWebhookDelivery, NewWebhookEndpoint, PendingMarker, WebhookAttemptRecord, WebhookAttemptResult, WebhookEndpointPatch, WebhookRepository,
} from '../../../core/ports/webhook.repository.port.js';
import { eventDeliveries } from '../../../core/ports/webhook.repository.port.js';
import type { WebhookDelivery, WebhookDeliveryEvent, WebhookDeliveryStatus, WebhookEndpoint } from '../../../core/webhooks/webhook.js';
import { isDuplicateKey, nextId, reserveIds } from './mongo-database.js';
import { Collections, Indexes } from './mongo-schema.js';
import { clearPendingEventDocument, listPendingEventDocuments } from './pending-events.mongo.js';

export interface WebhookEndpointDocument {
  _id: number;
  organizationId: number;
  url: string;
  events: string[];
  description: string | null;
  secret: string;
  secretsKeyId: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface WebhookDeliveryDocument {
  _id: number;
  organizationId: number;
  endpointId: number;
  event: string;
  body: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  leaseUntil: Date | null;
  leaseToken: string | null;
  /** The event's key (PendingEvent.key): unique per endpoint where present. */
  eventKey?: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const webhookEndpointToDocument = (e: WebhookEndpoint): WebhookEndpointDocument => ({
  _id: e.id, organizationId: e.organizationId, url: e.url, events: [...e.events], description: e.description, secret: e.secretCiphertext,
  secretsKeyId: e.secretsKeyId, createdAt: new Date(e.createdAt), updatedAt: new Date(e.updatedAt),
});

export const webhookEndpointFromDocument = (d: WebhookEndpointDocument): WebhookEndpoint => ({
  id: d._id, organizationId: d.organizationId, url: d.url, events: [...d.events] as WebhookEventType[], description: d.description ?? null,
  secretCiphertext: d.secret, secretsKeyId: d.secretsKeyId, createdAt: new Date(d.createdAt), updatedAt: new Date(d.updatedAt),
});

const dateOrNull = (d: Date | null | undefined): Date | null => (d ? new Date(d) : null);

export const webhookDeliveryToDocument = (d: WebhookDelivery): WebhookDeliveryDocument => ({
  _id: d.id, organizationId: d.organizationId, endpointId: d.endpointId, event: d.event, body: d.body, status: d.status, attempts: d.attempts,
  lastStatusCode: d.lastStatusCode, lastError: d.lastError, nextAttemptAt: dateOrNull(d.nextAttemptAt), leaseUntil: dateOrNull(d.leaseUntil),
  leaseToken: d.leaseToken, createdAt: new Date(d.createdAt), updatedAt: new Date(d.updatedAt),
});

export const webhookDeliveryFromDocument = (d: WebhookDeliveryDocument): WebhookDelivery => ({
  id: d._id, organizationId: d.organizationId, endpointId: d.endpointId, event: d.event as WebhookDeliveryEvent, body: d.body,
  status: d.status as WebhookDeliveryStatus, attempts: d.attempts, lastStatusCode: d.lastStatusCode ?? null, lastError: d.lastError ?? null,
  nextAttemptAt: dateOrNull(d.nextAttemptAt), leaseUntil: dateOrNull(d.leaseUntil), leaseToken: d.leaseToken ?? null,
  createdAt: new Date(d.createdAt), updatedAt: new Date(d.updatedAt),
});

/**
 * WebhookRepository on MongoDB. A claim takes due deliveries one `findOneAndUpdate` at a time, atomic per
 * document; it moves `nextAttemptAt` to the lease's end, so a claimed delivery is not due (to anyone) until its
 * lease expires and the due query stays one index range (status, nextAttemptAt).
 */
export class MongoWebhookRepository implements WebhookRepository {
  private readonly endpoints;
  private readonly deliveries;

  constructor(private readonly db: Db) {
    this.endpoints = db.collection<WebhookEndpointDocument>(Collections.webhookEndpoints);
    this.deliveries = db.collection<WebhookDeliveryDocument>(Collections.webhookDeliveries);
  }

  async createEndpoint(organizationId: number, input: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    const doc = webhookEndpointToDocument({
      id: await nextId(this.db, Collections.webhookEndpoints), organizationId, url: input.url, events: input.events, description: input.description,
      secretCiphertext: input.secretCiphertext, secretsKeyId: input.secretsKeyId, createdAt: input.now, updatedAt: input.now,
    });
    await this.endpoints.insertOne(doc);
    return webhookEndpointFromDocument(doc);
  }

  async getEndpoint(organizationId: number, id: number): Promise<WebhookEndpoint | null> {
    const d = await this.endpoints.findOne({ _id: id, organizationId });
    return d ? webhookEndpointFromDocument(d) : null;
  }

  async listEndpoints(organizationId: number): Promise<WebhookEndpoint[]> {
    return (await this.endpoints.find({ organizationId }).sort({ _id: 1 }).toArray()).map(webhookEndpointFromDocument);
  }

  async subscribedEndpoints(organizationId: number, event: WebhookEventType): Promise<WebhookEndpoint[]> {
    return (await this.endpoints.find({ organizationId, events: event }).sort({ _id: 1 }).toArray()).map(webhookEndpointFromDocument);
  }

  async findEndpoints(ids: readonly number[]): Promise<WebhookEndpoint[]> {
    if (ids.length === 0) return [];
    return (await this.endpoints.find({ _id: { $in: [...ids] } }).sort({ _id: 1 }).toArray()).map(webhookEndpointFromDocument);
  }

  async updateEndpoint(organizationId: number, id: number, patch: WebhookEndpointPatch): Promise<WebhookEndpoint | null> {
    const set: Partial<WebhookEndpointDocument> = { updatedAt: patch.now };
    if (patch.url !== undefined) set.url = patch.url;
    if (patch.events !== undefined) set.events = [...patch.events];
    if (patch.description !== undefined) set.description = patch.description;
    if (patch.secretCiphertext !== undefined) set.secret = patch.secretCiphertext;
    const d = await this.endpoints.findOneAndUpdate({ _id: id, organizationId }, { $set: set }, { returnDocument: 'after' });
    return d ? webhookEndpointFromDocument(d) : null;
  }

  async deleteEndpoint(organizationId: number, id: number): Promise<boolean> {
    const gone = (await this.endpoints.deleteOne({ _id: id, organizationId })).deletedCount > 0;
    if (gone) await this.deliveries.deleteMany({ organizationId, endpointId: id });
    return gone;
  }

  async enqueue(organizationId: number, deliveries: NewWebhookDelivery[], lease?: { leaseMs: number }, marker?: PendingMarker): Promise<WebhookDelivery[]> {
    const stored = await this.insertDeliveries(organizationId, deliveries, lease);
    // no multi-document transaction here: the marker goes right after its deliveries are stored (a crash in between
    // leaves it, and publishing it again stores nothing new: deliveries are unique per endpoint and event key)
    if (marker) await clearPendingEventDocument(this.db, marker.kind, organizationId, marker.id, marker.key);
    return stored;
  }

  async enqueueEvent(organizationId: number, input: NewEventDeliveries): Promise<{ endpoints: WebhookEndpoint[]; deliveries: WebhookDelivery[]; leased: boolean }> {
    // no multi-document transaction: the read, then `enqueue` (an endpoint written in between is seen by the next event)
    const endpoints = await this.subscribedEndpoints(organizationId, input.event);
    const lease = endpoints.length > 0 ? input.lease?.(endpoints.length) ?? undefined : undefined;
    const deliveries = await this.enqueue(organizationId, eventDeliveries(input, endpoints), lease, input.marker);
    return { endpoints, deliveries, leased: lease !== undefined };
  }

  private async insertDeliveries(organizationId: number, deliveries: NewWebhookDelivery[], lease?: { leaseMs: number }): Promise<WebhookDelivery[]> {
    if (deliveries.length === 0) return [];
    const first = await reserveIds(this.db, Collections.webhookDeliveries, deliveries.length);
    const token = lease ? randomUUID() : null;
    const docs = deliveries.map((d, i): WebhookDeliveryDocument => {
      const until = lease ? new Date(d.now.getTime() + lease.leaseMs) : null;
      return {
        _id: first + i, organizationId, endpointId: d.endpointId, event: d.event, body: d.body(first + i), status: 'pending', attempts: 0,
        lastStatusCode: null, lastError: null, nextAttemptAt: until ?? d.now, leaseUntil: until, leaseToken: token ? `${token}.${first + i}` : null,
        ...(d.eventKey ? { eventKey: d.eventKey } : {}), createdAt: d.now, updatedAt: d.now,
      };
    });
    if (!docs.some((d) => d.eventKey)) {
      await this.deliveries.insertMany(docs, { ordered: true });
      return docs.map(webhookDeliveryFromDocument);
    }
    // keyed: one insert each, a repeated (endpoint, event key) is left out (the reserved id stays unused)
    const stored: WebhookDelivery[] = [];
    for (const doc of docs) {
      try {
        await this.deliveries.insertOne(doc);
        stored.push(webhookDeliveryFromDocument(doc));
      } catch (e) {
        if (!isDuplicateKey(e, Indexes.webhookDeliveriesEventKey)) throw e;
      }
    }
    return stored;
  }

  async claimDue(now: Date, leaseMs: number, limit: number, excludeEndpointIds: readonly number[] = []): Promise<WebhookDelivery[]> {
    const out: WebhookDelivery[] = [];
    const until = new Date(now.getTime() + leaseMs);
    const filter: Filter<WebhookDeliveryDocument> = {
      status: 'pending', nextAttemptAt: { $lte: now },
      ...(excludeEndpointIds.length ? { endpointId: { $nin: [...excludeEndpointIds] } } : {}),
    };
    while (out.length < limit) {
      const d = await this.deliveries.findOneAndUpdate(filter, { $set: { leaseUntil: until, nextAttemptAt: until, leaseToken: randomUUID() } }, {
        sort: { nextAttemptAt: 1, _id: 1 }, returnDocument: 'after',
      });
      if (!d) break;
      out.push(webhookDeliveryFromDocument(d));
    }
    return out;
  }

  async recordAttempt(id: number, leaseToken: string, r: WebhookAttemptResult): Promise<boolean> {
    const res = await this.deliveries.updateOne({ _id: id, leaseToken }, {
      $set: {
        status: r.status, attempts: r.attempts, lastStatusCode: r.lastStatusCode, lastError: r.lastError, nextAttemptAt: r.nextAttemptAt,
        leaseUntil: null, leaseToken: null, updatedAt: r.now,
      },
    });
    return res.modifiedCount > 0;
  }

  async recordAttempts(records: readonly WebhookAttemptRecord[]): Promise<boolean[]> {
    // one conditional update each (a bulk write reports counts, not which claim was taken over); sent together
    return Promise.all(records.map((r) => this.recordAttempt(r.id, r.leaseToken, r.result)));
  }

  async listDeliveries(organizationId: number, endpointId: number, page: { page: number; limit: number }) {
    const filter = { organizationId, endpointId };
    const [docs, totalCount] = await Promise.all([
      this.deliveries.find(filter).sort({ _id: -1 }).skip((page.page - 1) * page.limit).limit(page.limit).toArray(),
      this.deliveries.countDocuments(filter),
    ]);
    return { deliveries: docs.map(webhookDeliveryFromDocument), totalCount };
  }

  async getDelivery(organizationId: number, endpointId: number, id: number): Promise<WebhookDelivery | null> {
    const d = await this.deliveries.findOne({ _id: id, organizationId, endpointId });
    return d ? webhookDeliveryFromDocument(d) : null;
  }

  async retryDelivery(organizationId: number, endpointId: number, id: number, now: Date): Promise<WebhookDelivery | null> {
    const d = await this.deliveries.findOneAndUpdate({ _id: id, organizationId, endpointId }, {
      $set: { status: 'pending', nextAttemptAt: now, leaseUntil: null, leaseToken: null, updatedAt: now },
    }, { returnDocument: 'after' });
    return d ? webhookDeliveryFromDocument(d) : null;
  }

  async nextDueAt(): Promise<Date | null> {
    const [d] = await this.deliveries.find({ status: 'pending' }).sort({ nextAttemptAt: 1 }).limit(1).toArray();
    return d?.nextAttemptAt ? new Date(d.nextAttemptAt) : null;
  }

  async pendingEvents(limit: number): Promise<PendingFact[]> {
    return listPendingEventDocuments(this.db, limit);
  }

  async clearPendingEvent(kind: PendingFact['kind'], organizationId: number, id: number, key: string): Promise<void> {
    await clearPendingEventDocument(this.db, kind, organizationId, id, key);
  }
}
