import type { Campaign } from '../campaigns/campaign.js';
import type { Run } from '../runs/run.js';

/** The events an organization can subscribe a webhook endpoint to (API.md 14; docs/webhooks.md). */
export const WEBHOOK_EVENT_TYPES = [
  'call.started', 'call.ended', 'call.analyzed',
  'campaign.started', 'campaign.paused', 'campaign.completed', 'campaign.failed',
  'phone_number.sync_failed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * A fact core decided, as it is published: the use case that decides the fact publishes it, once.
 * - `call.started`: a run's status became `in_progress` (the call connected).
 * - `call.ended`: a run's final status was applied (disposition, duration, links).
 * - `call.analyzed`: a conversation's extraction landed on a run (`gathered_context`).
 * - `campaign.*`: a campaign's state moved (`reason` says why for a pause or a failure).
 * - `phone_number.sync_failed`: the provider refused or failed to bind/detach a number's inbound webhook.
 */
export type OutboundEvent =
  | { type: 'call.started' | 'call.ended' | 'call.analyzed'; organizationId: number; run: Run; pending?: PendingEvent }
  | {
    type: 'campaign.started' | 'campaign.paused' | 'campaign.completed' | 'campaign.failed';
    organizationId: number;
    campaign: Campaign;
    previousState: string;
    reason?: string;
    pending?: PendingEvent;
  }
  | {
    type: 'phone_number.sync_failed';
    organizationId: number;
    phoneNumber: { id: number; address: string; telephonyConfigurationId: number };
    operation: 'bind' | 'detach';
    message: string;
    pending?: undefined;
  };

/**
 * An event recorded on its fact in the fact's own atomic write (an outbox marker on the run or campaign: the
 * same SQLite transaction, the same MongoDB single-document update), so a crash right after the fact cannot lose
 * it: the webhook sweep finds markers left behind and publishes them. `key` names the event once for all
 * (`run:<id>:call.ended`, `campaign:<id>:campaign.paused:<ms>`): deliveries are unique per (endpoint, key), so
 * publishing a marked event twice stores it once per endpoint.
 */
export interface PendingEvent {
  key: string;
  type: WebhookEventType;
  /** When the fact happened: the body's `created_at`. */
  at: Date;
  /** Campaign events: the state before and why (kept here: the campaign's later state cannot tell). */
  previousState?: string;
  reason?: string;
}

/** The run's marker key of a call event: one per run and event type. */
export const runEventKey = (runId: number, type: 'call.started' | 'call.ended' | 'call.analyzed'): string => `run:${runId}:${type}`;
/** The campaign's marker key of a state event: one per transition (a campaign pauses and resumes many times). */
export const campaignEventKey = (campaignId: number, type: string, at: Date): string => `campaign:${campaignId}:${type}:${at.getTime()}`;

/** A marker still on its fact (what a crash left behind), for the webhook sweep. */
export interface PendingFact {
  kind: 'run' | 'campaign';
  organizationId: number;
  /** The run's or campaign's id. */
  id: number;
  event: PendingEvent;
}

/**
 * Outbound events to the organization's systems (customer webhooks). Bound by the webhooks module; callers take
 * it optionally, so a core without webhooks publishes nothing.
 */
export const EventPublisher = Symbol.for('callplane.EventPublisher');
export interface EventPublisher {
  /**
   * Stores one delivery per endpoint of the organization subscribed to `event.type` (nothing when none is), then
   * returns; sending happens later, away from the caller. Never throws: a storage failure is logged and the event
   * stays pending for webhooks only (the fact itself is already stored by the caller). With `pending` (the
   * marker the fact's write stored) it is idempotent: deliveries are unique per (endpoint, key) and the marker is
   * cleared once they are stored; without it, not idempotent: publish each fact once, from the place that decides it.
   */
  publish(event: OutboundEvent): Promise<void>;
}
