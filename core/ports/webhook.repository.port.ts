import type { PendingEvent, PendingFact, WebhookEventType } from './event-publisher.port.js';
import type { WebhookDelivery, WebhookDeliveryEvent, WebhookDeliveryStatus, WebhookEndpoint } from '../webhooks/webhook.js';

export interface NewWebhookEndpoint {
  url: string;
  events: WebhookEventType[];
  description: string | null;
  secretCiphertext: string;
  secretsKeyId: string;
  now: Date;
}

export interface WebhookEndpointPatch {
  url?: string;
  events?: WebhookEventType[];
  description?: string | null;
  secretCiphertext?: string;
  now: Date;
}

export interface NewWebhookDelivery {
  endpointId: number;
  event: WebhookDeliveryEvent;
  /** Builds the body once the store has chosen the delivery's id (the body carries it). */
  body: (deliveryId: number) => string;
  now: Date;
  /** The event's key (PendingEvent.key): at most one delivery per (endpoint, key) is ever stored. */
  eventKey?: string | null;
}

/** One event's deliveries, one per endpoint subscribed to it when they are stored (`enqueueEvent`). */
export interface NewEventDeliveries {
  event: WebhookEventType;
  /** Builds a delivery's body once the store has chosen its id (the same for every endpoint but the id). */
  body: (deliveryId: number) => string;
  now: Date;
  /** The event's key (PendingEvent.key): at most one delivery per (endpoint, key) is ever stored. */
  eventKey?: string | null;
  /**
   * Asked once, with the number of subscribed endpoints (at least 1), before anything is stored: a lease to store
   * the deliveries already claimed by the caller (as `enqueue`'s `lease`), or null to store them unclaimed.
   */
  lease?: (count: number) => { leaseMs: number } | null;
  /** The event's marker, removed with the deliveries (as `enqueue`'s `marker`), also when no endpoint is subscribed. */
  marker?: PendingMarker;
}

/** The deliveries `enqueueEvent` stores: one per endpoint read, in their order, the same body builder for each. */
export function eventDeliveries(input: NewEventDeliveries, endpoints: readonly WebhookEndpoint[]): NewWebhookDelivery[] {
  return endpoints.map((e) => ({ endpointId: e.id, event: input.event, body: input.body, now: input.now, eventKey: input.eventKey ?? null }));
}

/** The marker an event's deliveries discharge (`enqueue`): which run or campaign, and the event's key. */
export interface PendingMarker {
  kind: PendingFact['kind'];
  id: number;
  key: PendingEvent['key'];
}

/** One attempt's result with the claim it was made under (`recordAttempts`). */
export interface WebhookAttemptRecord {
  id: number;
  leaseToken: string;
  result: WebhookAttemptResult;
}

/** The result of one attempt, recorded under the claim that made it. */
export interface WebhookAttemptResult {
  status: WebhookDeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  now: Date;
}

/**
 * Webhook endpoints and their deliveries (the outbox), in the same store as everything else. Every query of the
 * API takes the organization id; the sender's `claimDue`/`recordAttempt` work across organizations.
 */
export const WebhookRepository = Symbol.for('callplane.WebhookRepository');
export interface WebhookRepository {
  /** Inserts an endpoint; the store picks the id. Not idempotent. */
  createEndpoint(organizationId: number, input: NewWebhookEndpoint): Promise<WebhookEndpoint>;
  /** Null when absent or in another organization. */
  getEndpoint(organizationId: number, id: number): Promise<WebhookEndpoint | null>;
  /** Oldest first; empty when none. */
  listEndpoints(organizationId: number): Promise<WebhookEndpoint[]>;
  /** The endpoints subscribed to `event`; empty when none. */
  subscribedEndpoints(organizationId: number, event: WebhookEventType): Promise<WebhookEndpoint[]>;
  /** The endpoints with these ids, whatever their organization (the sender's lookup); absent ids are left out. */
  findEndpoints(ids: readonly number[]): Promise<WebhookEndpoint[]>;
  /** Changes the given fields; null when absent or in another organization. */
  updateEndpoint(organizationId: number, id: number, patch: WebhookEndpointPatch): Promise<WebhookEndpoint | null>;
  /** Deletes the endpoint and its deliveries; false when absent or in another organization. Idempotent. */
  deleteEndpoint(organizationId: number, id: number): Promise<boolean>;

  /**
   * Stores the deliveries (`pending`, due at `now`, 0 attempts), all or none. Returns the stored ones in input
   * order. A delivery whose (endpoint, `eventKey`) is already stored is left out (not stored, not returned): with
   * keys, enqueueing is idempotent; without, each call is new deliveries.
   * With `lease`, they are stored already claimed by the caller (`leaseUntil = nextAttemptAt = now + leaseMs`, a
   * fresh `leaseToken` each), so the caller sends them without a claim; a crash before it records leaves a lease
   * that expires like any claim's.
   * With `marker` (the event's marker on its run or campaign, `PendingEvent.key`), the marker is removed once the
   * deliveries are stored, even when every one of them was stored before (`clearPendingEvent`): on SQLite in the
   * same transaction, so one write stores the event and clears its marker; on MongoDB right after the inserts. A
   * failed enqueue leaves the marker.
   */
  enqueue(organizationId: number, deliveries: NewWebhookDelivery[], lease?: { leaseMs: number }, marker?: PendingMarker): Promise<WebhookDelivery[]>;
  /**
   * `subscribedEndpoints` and `enqueue` in one: reads the endpoints of the organization subscribed to `event` and
   * stores one delivery per endpoint, in the same write where the store can (SQLite: one transaction, the endpoints
   * read under its write lock; MongoDB: the read, then the inserts). Returns the endpoints read (input order of the
   * deliveries), the stored deliveries (as `enqueue`: a repeated key is left out) and whether they were leased.
   * With no endpoint subscribed nothing is stored (`lease` is not asked) and the marker is still removed. A failed
   * call stores nothing and leaves the marker. Idempotent with a key, like `enqueue`.
   */
  enqueueEvent(organizationId: number, input: NewEventDeliveries): Promise<{ endpoints: WebhookEndpoint[]; deliveries: WebhookDelivery[]; leased: boolean }>;
  /**
   * Claims up to `limit` pending deliveries due at `now` (`nextAttemptAt <= now`), oldest due first, skipping
   * `excludeEndpointIds`: each gets `leaseUntil = nextAttemptAt = now + leaseMs` (not due again until the lease
   * expires) and a fresh `leaseToken`. Atomic per delivery: two concurrent claims never return the same delivery
   * while its lease runs. Empty when none is due.
   */
  claimDue(now: Date, leaseMs: number, limit: number, excludeEndpointIds?: readonly number[]): Promise<WebhookDelivery[]>;
  /**
   * Records an attempt's result and clears the lease, only while the claim `leaseToken` still holds it (a
   * worker whose lease expired and was taken over records nothing). Returns whether it was recorded.
   */
  recordAttempt(id: number, leaseToken: string, result: WebhookAttemptResult): Promise<boolean>;
  /**
   * `recordAttempt` for many in one atomic write (the sender's results of one event-loop turn). Returns, in input
   * order, whether each was recorded.
   */
  recordAttempts(records: readonly WebhookAttemptRecord[]): Promise<boolean[]>;
  /** A page of an endpoint's deliveries, newest first, with the total; empty past the end. */
  listDeliveries(organizationId: number, endpointId: number, page: { page: number; limit: number }): Promise<{ deliveries: WebhookDelivery[]; totalCount: number }>;
  /** Null when absent, of another endpoint, or in another organization. */
  getDelivery(organizationId: number, endpointId: number, id: number): Promise<WebhookDelivery | null>;
  /**
   * Makes a delivery due again at `now` (`pending`, lease cleared; its attempts count on). Null when absent, of
   * another endpoint, or in another organization. Idempotent.
   */
  retryDelivery(organizationId: number, endpointId: number, id: number, now: Date): Promise<WebhookDelivery | null>;
  /** The earliest `nextAttemptAt` of pending deliveries, or null when none is pending. */
  nextDueAt(): Promise<Date | null>;

  /**
   * The event markers still stored on runs and campaigns (`RunStatusUpdate.event`, `TransitionRequest.event`):
   * events whose deliveries may not be stored yet (a crash between the fact and its deliveries). Across
   * organizations, oldest `at` first, at most `limit`. Empty when none.
   */
  pendingEvents(limit: number): Promise<PendingFact[]>;
  /** Removes the marker `key` from the run or campaign once its deliveries are stored. No-op when absent. Idempotent. */
  clearPendingEvent(kind: PendingFact['kind'], organizationId: number, id: number, key: PendingEvent['key']): Promise<void>;
}
