/**
 * The only file that talks to Vonage, over node's `fetch` (no SDK). Callers get plain objects and
 * `ProviderApiError('vonage')`; keys, secrets and JWTs never appear in a message.
 *
 * - Voice API (https://api.nexmo.com/v1/calls): `Authorization: Bearer <RS256 JWT>` from the application's
 *   private key (vonage-jwt.ts), JSON; errors `{type, title, detail}`.
 * - Applications API (https://api.nexmo.com/v2/applications): Basic auth with api_key:api_secret.
 * - Numbers API (https://rest.nexmo.com/account/numbers, /number/update): api_key and api_secret as
 *   parameters, as Vonage documents; errors `{"error-code", "error-code-label"}`.
 * - 429 is retried with exponential backoff honouring `Retry-After`, bounded by `maxRetries`/`maxRetryDelayMs`.
 * - `apiBaseUrl` / `restBaseUrl` replace the two hosts (tests point both at test/fakes/vonage).
 */
import { ProviderApiError } from '../../core/errors.js';
import { vonageApplicationJwt } from './vonage-jwt.js';

export interface VonageClientOptions {
  applicationId: string;
  apiKey: string;
  apiSecret: string;
  privateKey: string;
  /** Replaces https://api.nexmo.com. */
  apiBaseUrl?: string;
  /** Replaces https://rest.nexmo.com. */
  restBaseUrl?: string;
  maxRetries?: number;
  retryBaseDelayMs?: number;
  maxRetryDelayMs?: number;
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  nowSeconds?: () => number;
  fetch?: typeof fetch;
}

export type NccoAction = Record<string, unknown>;

export interface VonageCreateCallRequest {
  /** E.164 digits without '+'. */
  to: string;
  from: string;
  ncco: NccoAction[];
  eventUrl: string;
  machineDetection?: 'hangup' | 'continue';
  /** Seconds to ring before `timeout` (1..120). */
  ringingTimer?: number;
}

export interface VonageCallInfo {
  uuid: string;
  status: string;
  durationSeconds?: number;
}

export interface VonageNumber {
  country: string;
  msisdn: string;
  appId: string | null;
}

export interface VonageApplicationInfo {
  id: string;
  answerUrl: string | null;
  answerMethod: string | null;
  signedCallbacks: boolean;
}

const API = 'https://api.nexmo.com';
const REST = 'https://rest.nexmo.com';
const NOT_FOUND = Symbol('vonage-not-found');

export class VonageClient {
  private readonly api: string;
  private readonly rest: string;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly opts: VonageClientOptions) {
    if (!opts.applicationId || !opts.privateKey) throw new ProviderApiError('vonage', 'A Vonage application id and private key are required');
    this.api = (opts.apiBaseUrl ?? API).replace(/\/+$/, '');
    this.rest = (opts.restBaseUrl ?? REST).replace(/\/+$/, '');
    this.fetchImpl = opts.fetch ?? fetch;
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Creates a call with an inline NCCO (POST /v1/calls). */
  async createCall(req: VonageCreateCallRequest): Promise<{ uuid: string; status: string; conversationUuid: string | null }> {
    const body: Record<string, unknown> = {
      to: [{ type: 'phone', number: req.to }],
      from: { type: 'phone', number: req.from },
      ncco: req.ncco,
      event_url: [req.eventUrl],
      event_method: 'POST',
    };
    if (req.machineDetection) body.machine_detection = req.machineDetection;
    if (req.ringingTimer !== undefined) body.ringing_timer = Math.round(req.ringingTimer);
    const data = (await this.voice('create call', 'POST', '/v1/calls', body)) as Record<string, unknown> | null;
    if (!data || typeof data.uuid !== 'string') throw new ProviderApiError('vonage', 'Vonage create call returned no call uuid', true);
    return { uuid: data.uuid, status: String(data.status ?? ''), conversationUuid: typeof data.conversation_uuid === 'string' ? data.conversation_uuid : null };
  }

  /** Hangs a call up (PUT /v1/calls/{uuid} {action: hangup}). Idempotent: an unknown call is `not_found`. */
  async hangup(uuid: string): Promise<'ok' | 'not_found'> {
    try {
      await this.voice('hang up call', 'PUT', `/v1/calls/${encodeURIComponent(uuid)}`, { action: 'hangup' }, [404]);
      return 'ok';
    } catch (err) {
      if (err === NOT_FOUND) return 'not_found';
      throw err;
    }
  }

  /** A call's status (GET /v1/calls/{uuid}); null when Vonage does not know it. */
  async getCall(uuid: string): Promise<VonageCallInfo | null> {
    try {
      const d = (await this.voice('fetch call', 'GET', `/v1/calls/${encodeURIComponent(uuid)}`, undefined, [404])) as Record<string, unknown> | null;
      if (!d || typeof d.uuid !== 'string') return null;
      const info: VonageCallInfo = { uuid: d.uuid, status: String(d.status ?? '') };
      const duration = Number(d.duration);
      if (d.duration !== undefined && d.duration !== null && d.duration !== '' && Number.isFinite(duration)) info.durationSeconds = duration;
      return info;
    } catch (err) {
      if (err === NOT_FOUND) return null;
      throw err;
    }
  }

  /** The account's number `msisdn` (digits); null when the account has none. */
  async findNumber(msisdn: string): Promise<VonageNumber | null> {
    const q = new URLSearchParams({ api_key: this.opts.apiKey, api_secret: this.opts.apiSecret, pattern: msisdn, search_pattern: '0', size: '10' });
    const d = (await this.request('list numbers', 'GET', `${this.rest}/account/numbers?${q}`, {}, undefined)) as Record<string, unknown> | null;
    const list = Array.isArray(d?.numbers) ? (d.numbers as Array<Record<string, unknown>>) : [];
    const n = list.find((x) => x.msisdn === msisdn);
    if (!n) return null;
    return { country: String(n.country ?? ''), msisdn, appId: typeof n.app_id === 'string' && n.app_id ? n.app_id : null };
  }

  /** Links the number to an application (POST /number/update with app_id). */
  async linkNumber(number: VonageNumber, appId: string): Promise<void> {
    const form = new URLSearchParams({ api_key: this.opts.apiKey, api_secret: this.opts.apiSecret, country: number.country, msisdn: number.msisdn, app_id: appId });
    const d = (await this.request('update number', 'POST', `${this.rest}/number/update`, { 'content-type': 'application/x-www-form-urlencoded' }, form.toString())) as Record<string, unknown> | null;
    const code = d?.['error-code'];
    if (code !== undefined && String(code) !== '200') {
      throw new ProviderApiError('vonage', `Vonage update number failed (error ${String(code)}: ${this.safe(String(d?.['error-code-label'] ?? ''))})`);
    }
  }

  /** The application's answer webhook (GET /v2/applications/{id}); null when unknown. */
  async getApplication(): Promise<VonageApplicationInfo | null> {
    const basic = Buffer.from(`${this.opts.apiKey}:${this.opts.apiSecret}`).toString('base64');
    try {
      const d = (await this.request('fetch application', 'GET', `${this.api}/v2/applications/${encodeURIComponent(this.opts.applicationId)}`, { authorization: `Basic ${basic}` }, undefined, [404])) as Record<string, unknown> | null;
      const voice = ((d?.capabilities as Record<string, unknown> | undefined)?.voice ?? {}) as Record<string, unknown>;
      const answer = ((voice.webhooks as Record<string, unknown> | undefined)?.answer_url ?? {}) as Record<string, unknown>;
      return {
        id: String(d?.id ?? this.opts.applicationId),
        answerUrl: typeof answer.address === 'string' && answer.address ? answer.address : null,
        answerMethod: typeof answer.http_method === 'string' ? answer.http_method : null,
        signedCallbacks: voice.signed_callbacks === true,
      };
    } catch (err) {
      if (err === NOT_FOUND) return null;
      throw err;
    }
  }

  // ---------------------------------------------------------------------------------------------------------

  private voice(what: string, method: string, path: string, body?: unknown, notFound: number[] = []): Promise<unknown> {
    let jwt: string;
    try {
      jwt = vonageApplicationJwt({ applicationId: this.opts.applicationId, privateKeyPem: this.opts.privateKey, nowSeconds: this.opts.nowSeconds?.() ?? Math.floor(Date.now() / 1000) });
    } catch {
      return Promise.reject(new ProviderApiError('vonage', 'The Vonage private key is not a readable PEM private key'));
    }
    const headers: Record<string, string> = { authorization: `Bearer ${jwt}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return this.request(what, method, this.api + path, headers, body === undefined ? undefined : JSON.stringify(body), notFound);
  }

  private async request(what: string, method: string, url: string, headers: Record<string, string>, body: string | undefined, notFound: number[] = []): Promise<unknown> {
    const maxRetries = Math.max(0, this.opts.maxRetries ?? 3);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchImpl(url, {
          method,
          headers: { accept: 'application/json', ...headers },
          ...(body !== undefined ? { body } : {}),
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 15_000),
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: unknown } })?.cause?.code ?? (err as { name?: unknown })?.name;
        throw new ProviderApiError('vonage', `Vonage ${what} failed: API unreachable (${typeof cause === 'string' ? cause : 'network error'})`, true);
      }
      if (res.status === 429 && attempt < maxRetries) {
        await res.body?.cancel().catch(() => undefined);
        const given = parseRetryAfter(res.headers.get('retry-after'));
        await this.sleep(Math.min(this.opts.maxRetryDelayMs ?? 10_000, given ?? (this.opts.retryBaseDelayMs ?? 500) * 2 ** attempt));
        continue;
      }
      const text = await res.text().catch(() => '');
      let parsed: unknown = null;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        parsed = null;
      }
      if (res.ok) return parsed;
      if (notFound.includes(res.status)) throw NOT_FOUND;
      throw new ProviderApiError('vonage', `Vonage ${what} failed (HTTP ${res.status}${this.errorText(parsed)})`, res.status === 429 || res.status >= 500);
    }
  }

  private errorText(parsed: unknown): string {
    if (!parsed || typeof parsed !== 'object') return '';
    const p = parsed as Record<string, unknown>;
    const parts = [p.title, p.detail, p['error-code-label']].filter((x): x is string => typeof x === 'string' && x.length > 0);
    const code = p['error-code'] !== undefined ? `, error ${String(p['error-code'])}` : '';
    return `${code}${parts.length ? `: ${this.safe(parts.join(': '))}` : ''}`.slice(0, 500);
  }

  /** Text with the key's secrets removed. */
  private safe(text: string): string {
    let out = text;
    for (const s of [this.opts.apiSecret, this.opts.privateKey]) if (s) out = out.split(s).join('***');
    return out;
  }
}

/** Retry-After as delay-seconds or an HTTP date → ms; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
