import { createHmac } from 'node:crypto';
import type { WebhookPostResult, WebhookTransport } from '../core/ports/webhook-transport.port.js';
import { checkUrlShape, NetworkPolicyError, policyFetch, type HostResolver } from './network-policy.js';

/**
 * The WebhookTransport on the one outbound network policy (plugins/network-policy.ts, docs/security.md):
 * `https` URLs, or `http` too where private networks are allowed; at save the URL as written is checked (cloud
 * metadata never); each send resolves the host, checks every address, pins the connection to it, and refuses
 * a redirect (an attempt that failed, never followed). Connections are kept alive per origin.
 */
export class PolicyWebhookTransport implements WebhookTransport {
  constructor(private readonly options: { allowPrivateNetwork: boolean; resolve?: HostResolver }) {}

  private policy() {
    return {
      allowPrivateNetwork: this.options.allowPrivateNetwork, field: 'url', label: 'Webhook endpoint',
      protocols: this.options.allowPrivateNetwork ? ['http:', 'https:'] : ['https:'],
      ...(this.options.resolve ? { resolve: this.options.resolve } : {}),
    };
  }

  checkUrl(url: string): string | null {
    const issues = checkUrlShape(url, this.policy());
    return issues.length ? issues[0]![1] : null;
  }

  hmacSha256Hex(key: string, message: string): string {
    return createHmac('sha256', key).update(message, 'utf8').digest('hex');
  }

  async post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<WebhookPostResult> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await policyFetch(url, { method: 'POST', headers, body, signal }, this.policy());
      // the body is read (bounded by the timeout) so the connection can be reused; its content is ignored
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { ok: true, statusCode: res.status };
      return { ok: false, statusCode: res.status, error: `HTTP ${res.status}` };
    } catch (e) {
      if (e instanceof NetworkPolicyError) return { ok: false, statusCode: e.redirect?.status ?? null, error: e.message };
      if (signal.aborted) return { ok: false, statusCode: null, error: `no answer within ${timeoutMs / 1000} s` };
      const err = e as NodeJS.ErrnoException;
      return { ok: false, statusCode: null, error: err?.code ? `connection failed (${err.code})` : `connection failed: ${String(err?.message ?? e).slice(0, 200)}` };
    }
  }
}
