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
  | { type: 'call.started' | 'call.ended' | 'call.analyzed'; organizationId: number; run: Run }
  | {
    type: 'campaign.started' | 'campaign.paused' | 'campaign.completed' | 'campaign.failed';
    organizationId: number;
    campaign: Campaign;
    previousState: string;
    reason?: string;
  }
  | {
    type: 'phone_number.sync_failed';
    organizationId: number;
    phoneNumber: { id: number; address: string; telephonyConfigurationId: number };
    operation: 'bind' | 'detach';
    message: string;
  };

/**
 * Outbound events to the organization's systems (customer webhooks). Bound by the webhooks module; callers take
 * it optionally, so a core without webhooks publishes nothing.
 */
export const EventPublisher = Symbol.for('callplane.EventPublisher');
export interface EventPublisher {
  /**
   * Stores one delivery per endpoint of the organization subscribed to `event.type` (nothing when none is), then
   * returns; sending happens later, away from the caller. Never throws: a storage failure is logged and the event
   * is lost for webhooks only (the fact itself is already stored by the caller). Not idempotent: publish each fact
   * once, from the place that decides it.
   */
  publish(event: OutboundEvent): Promise<void>;
}
