/**
 * Event webhooks (API.md 14, docs/webhooks.md): an organization's endpoints and the deliveries stored for them.
 * A delivery is written before it is sent (an outbox) and carries its whole signed body, so every attempt
 * sends the same bytes with the same id.
 */
import type { WebhookEventType } from '../ports/event-publisher.port.js';

/** What a delivery carries: a subscribed event, or the test ping an operator sends (`POST /{id}/test`). */
export type WebhookDeliveryEvent = WebhookEventType | 'webhook.test';

export interface WebhookEndpoint {
  id: number;
  organizationId: number;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  /** The signing secret, encrypted with the SecretCipher (context: `webhookSecretContext`). */
  secretCiphertext: string;
  /** Random, chosen before the insert: part of the cipher context so a ciphertext moved to another row fails. */
  secretsKeyId: string;
  createdAt: Date;
  updatedAt: Date;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDelivery {
  id: number;
  organizationId: number;
  endpointId: number;
  event: WebhookDeliveryEvent;
  /** The JSON body sent, verbatim (`{id, type, created_at, data}`), fixed at enqueue. */
  body: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  /** When the next attempt is due (null once delivered or failed). */
  nextAttemptAt: Date | null;
  /** A claim: until when one worker holds it, and the claim's token (null when unclaimed). */
  leaseUntil: Date | null;
  leaseToken: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const webhookSecretContext = (organizationId: number, secretsKeyId: string): string =>
  `webhook_endpoint:${organizationId}:${secretsKeyId}:secret`;

/** Retries: 30 s doubling, each wait capped at 6 h; 12 attempts in all, then `failed`. */
export const WEBHOOK_MAX_ATTEMPTS = 12;
export const WEBHOOK_FIRST_RETRY_MS = 30_000;
export const WEBHOOK_MAX_RETRY_MS = 6 * 3600_000;
/** A 2xx within this bound is delivered; anything slower is an attempt that failed. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * The wait after the `attempts`-th failed attempt (1-based): 30 s, 60 s, 120 s, ... capped at 6 h; null when
 * `attempts` reached the maximum (the delivery is `failed`).
 */
export function retryDelayMs(attempts: number): number | null {
  if (attempts >= WEBHOOK_MAX_ATTEMPTS) return null;
  return Math.min(WEBHOOK_FIRST_RETRY_MS * 2 ** (attempts - 1), WEBHOOK_MAX_RETRY_MS);
}

/** `whsec_` + 32 random bytes base64url: the secret shown once. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** Bounds of the endpoint fields. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;
export const WEBHOOK_DESCRIPTION_MAX_LENGTH = 500;
