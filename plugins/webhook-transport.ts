import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { WebhookPostResult, WebhookTransport } from '../core/ports/webhook-transport.port.js';
import { checkUrlShape, NetworkPolicyError, PinnedPoster, PinnedPostTimeoutError, type HostResolver, type NetworkPolicyOptions } from './network-policy.js';

/**
 * The WebhookTransport on the one outbound network policy (plugins/network-policy.ts, docs/security.md):
 * `https` URLs, or `http` too where private networks are allowed; at save the URL as written is checked (cloud
 * metadata never); a send goes through `PinnedPoster`: the host resolved and every address checked (a check is
 * reused for at most `checkCacheMs`, 1 s, and only ever to connect to the addresses it checked), the connection
 * pinned to them and kept alive per receiver and address set, a redirect refused (an attempt that failed, never
 * followed). undici's client without WHATWG Request/Response: a delivery needs the status only (docs/benchmarks.md
 * section 8).
 */
export class PolicyWebhookTransport implements WebhookTransport {
  private readonly policy: NetworkPolicyOptions;
  private readonly poster: PinnedPoster;
  /** HMAC keys by secret (a secret is imported once, not per signature); bounded. */
  private readonly keys = new Map<string, KeyObject>();

  constructor(options: { allowPrivateNetwork: boolean; resolve?: HostResolver; checkCacheMs?: number; now?: () => number }) {
    this.policy = {
      allowPrivateNetwork: options.allowPrivateNetwork, field: 'url', label: 'Webhook endpoint',
      protocols: options.allowPrivateNetwork ? ['http:', 'https:'] : ['https:'],
      ...(options.resolve ? { resolve: options.resolve } : {}),
    };
    this.poster = new PinnedPoster(this.policy, {
      ...(options.checkCacheMs !== undefined ? { checkCacheMs: options.checkCacheMs } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
  }

  checkUrl(url: string): string | null {
    const issues = checkUrlShape(url, this.policy);
    return issues.length ? issues[0]![1] : null;
  }

  hmacSha256Hex(key: string, message: string): string {
    let k = this.keys.get(key);
    if (!k) {
      if (this.keys.size >= 1000) this.keys.delete(this.keys.keys().next().value as string);
      k = createSecretKey(Buffer.from(key, 'utf8'));
      this.keys.set(key, k);
    }
    return createHmac('sha256', k).update(message, 'utf8').digest('hex');
  }

  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<WebhookPostResult> {
    // one promise per send, not an async wrapper around another (docs/benchmarks.md section 8)
    return this.poster.post(url, { headers, body, timeoutMs }).then(
      ({ status }): WebhookPostResult => (status >= 200 && status < 300 ? { ok: true, statusCode: status } : { ok: false, statusCode: status, error: `HTTP ${status}` }),
      (e: unknown): WebhookPostResult => {
        if (e instanceof NetworkPolicyError) return { ok: false, statusCode: e.redirect?.status ?? null, error: e.message };
        if (e instanceof PinnedPostTimeoutError) return { ok: false, statusCode: null, error: `no answer within ${timeoutMs / 1000} s` };
        const err = e as NodeJS.ErrnoException;
        return { ok: false, statusCode: null, error: err?.code ? `connection failed (${err.code})` : `connection failed: ${String(err?.message ?? e).slice(0, 200)}` };
      },
    );
  }

  /** Closes kept connections (process stop). */
  close(): void {
    this.poster.close();
  }
}
