/**
 * The REST transport a provider's `<id>.client.ts` can build on when the vendor has no SDK (or one it would
 * rather not use): node's `fetch` plus what every telephony API needs around it. Exported from the provider
 * SDK (plugins/sdk.ts). The client keeps the vendor specifics: auth headers, paths, the shape of error
 * bodies, and keeping its secrets out of messages.
 *
 * - 429 Too Many Requests is retried with exponential backoff (`retryBaseDelayMs * 2^attempt`) or the
 *   server's `Retry-After`, each wait capped at `maxRetryDelayMs`, at most `maxRetries` times; the last 429 is
 *   an error like any other. (A 429 means the request was not processed, so repeating it is safe.)
 * - An unreachable API is `ProviderApiError(provider, "<Name> <what> failed: API unreachable (<cause>)", true)`.
 * - Any other non-2xx status is `ProviderApiError(provider, "<Name> <what> failed (HTTP <status><detail>)")`,
 *   retryable for 429 and 5xx, where `<detail>` comes from the client's `errorDetail` (already redacted),
 *   unless the request lists the status in `notFoundStatuses`.
 * - A 2xx body is parsed as JSON (empty → null); an unreadable one is
 *   `ProviderApiError(provider, "<Name> <what> returned an unreadable answer (HTTP <status>)", true)`, or null
 *   with `unreadableBody: 'null'`.
 */
import { ProviderApiError } from '../core/errors.js';

export interface RetryPolicy {
  /** First backoff delay when the server sends no Retry-After (ms). Default 500. */
  retryBaseDelayMs?: number;
  /** Upper bound of any wait between retries, Retry-After included (ms). Default 10 000. */
  maxRetryDelayMs?: number;
}

export interface ProviderHttpOptions extends RetryPolicy {
  /** The provider id carried by every `ProviderApiError`. */
  provider: string;
  /** The vendor's name at the start of messages ("Plivo make call failed ..."). */
  name: string;
  /** Prefix of every request path (no trailing slash needed). */
  baseUrl: string;
  /** Headers of every request (auth), read once per request, not per retry. */
  headers?: () => Record<string, string>;
  /** `: <message>` or similar from an error answer's body (parsed JSON, null when empty or unreadable); '' for none. Must redact secrets. */
  errorDetail?: (body: unknown) => string;
  /** What an unreadable 2xx body is: an error (default) or null. */
  unreadableBody?: 'error' | 'null';
  /** Retries of one request after a 429. Default 3. */
  maxRetries?: number;
  /** Timeout of each attempt (ms). Default 15 000. */
  timeoutMs?: number;
  /** Injectable wait (tests). */
  sleep?: (ms: number) => Promise<void>;
  /** Injectable fetch (tests). */
  fetch?: typeof fetch;
}

export interface ProviderHttpRequest {
  /** What the request does, for messages ("make call"). */
  what: string;
  /** Appended as `?<query>`. */
  query?: Record<string, string> | URLSearchParams;
  /** Sent as application/x-www-form-urlencoded. */
  form?: Record<string, string> | URLSearchParams;
  /** Sent as application/json. */
  json?: unknown;
  /** Headers of this request (on top of the client's). */
  headers?: Record<string, string>;
  /** Statuses that mean "the resource does not exist": answered as `{status, body: null, text, notFound: true}`. */
  notFoundStatuses?: readonly number[];
}

export interface ProviderHttpResponse {
  status: number;
  /** Parsed JSON; null when empty (and for a not-found status). */
  body: unknown;
  /** The body as received. */
  text: string;
  /** True when `status` is one of the request's `notFoundStatuses`. */
  notFound: boolean;
}

export interface ProviderHttp {
  request(method: string, path: string, req: ProviderHttpRequest): Promise<ProviderHttpResponse>;
}

/** Retry-After as delay-seconds or an HTTP date → ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: unknown): number | undefined {
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value).trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** The wait before retry number `attempt + 1` (attempt counts from 0): Retry-After or the backoff, capped. */
export function retryDelayMs(attempt: number, retryAfter: unknown, policy: RetryPolicy = {}): number {
  const backoff = (policy.retryBaseDelayMs ?? 500) * 2 ** attempt;
  return Math.min(policy.maxRetryDelayMs ?? 10_000, parseRetryAfter(retryAfter) ?? backoff);
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (!text) return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * A body's text as JSON, null when it is empty or not JSON: for reading the words of an answer that came back as
 * a value (a status in `notFoundStatuses`, whose `body` is null) when they are wanted after all.
 */
export function jsonOrNull(text: string): unknown {
  const parsed = parseJson(text);
  return parsed.ok ? parsed.value : null;
}

/** A REST transport for one API host (see the file comment). */
export function providerHttp(opts: ProviderHttpOptions): ProviderHttp {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const fetchImpl = opts.fetch ?? fetch;
  const sleep = opts.sleep ?? defaultSleep;
  const maxRetries = Math.max(0, opts.maxRetries ?? 3);

  async function request(method: string, path: string, req: ProviderHttpRequest): Promise<ProviderHttpResponse> {
    const headers: Record<string, string> = { accept: 'application/json', ...opts.headers?.(), ...req.headers };
    let body: string | undefined;
    if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    } else if (req.form !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(req.form).toString();
    }
    const url = base + path + (req.query !== undefined ? `?${new URLSearchParams(req.query)}` : '');
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetchImpl(url, {
          method,
          headers,
          ...(body !== undefined ? { body } : {}),
          signal: AbortSignal.timeout(opts.timeoutMs ?? 15_000),
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: unknown } })?.cause?.code ?? (err as { name?: unknown })?.name;
        throw new ProviderApiError(opts.provider, `${opts.name} ${req.what} failed: API unreachable (${typeof cause === 'string' ? cause : 'network error'})`, true);
      }
      if (res.status === 429 && attempt < maxRetries) {
        await res.body?.cancel().catch(() => undefined);
        await sleep(retryDelayMs(attempt, res.headers.get('retry-after'), opts));
        continue;
      }
      const text = await res.text().catch(() => '');
      const parsed = parseJson(text);
      if (res.ok) {
        if (parsed.ok) return { status: res.status, body: parsed.value, text, notFound: false };
        if (opts.unreadableBody === 'null') return { status: res.status, body: null, text, notFound: false };
        throw new ProviderApiError(opts.provider, `${opts.name} ${req.what} returned an unreadable answer (HTTP ${res.status})`, true);
      }
      if (req.notFoundStatuses?.includes(res.status)) return { status: res.status, body: null, text, notFound: true };
      const detail = opts.errorDetail?.(parsed.ok ? parsed.value : null) ?? '';
      throw new ProviderApiError(opts.provider, `${opts.name} ${req.what} failed (HTTP ${res.status}${detail})`, res.status === 429 || res.status >= 500);
    }
  }

  return { request };
}
