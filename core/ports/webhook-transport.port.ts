/**
 * How webhook requests leave the process, under the one outbound network policy (SSRF): the adapter checks a URL
 * as written at save time and, right before each request, resolves the host and checks every address; it never
 * follows a redirect.
 */
export const WebhookTransport = Symbol.for('callplane.WebhookTransport');

export type WebhookPostResult =
  | { ok: true; statusCode: number }
  | { ok: false; statusCode: number | null; error: string };

export interface WebhookTransport {
  /** Null when `url` is acceptable as written, else a message safe to show the user. Never throws. */
  checkUrl(url: string): string | null;
  /** Hex HMAC-SHA256 of `message` under `key` (the signature of docs/webhooks.md). Deterministic; never throws. */
  hmacSha256Hex(key: string, message: string): string;
  /**
   * POSTs `body` (JSON) with `headers` to `url`; `ok` only for a 2xx within `timeoutMs`. A redirect, a refused
   * address, a timeout or a connection error is `ok: false` with a short message (never the body or a secret).
   * Never throws.
   */
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<WebhookPostResult>;
}
