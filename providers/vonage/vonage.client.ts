/**
 * The only file that talks to Vonage, over node's `fetch` (no SDK). Callers get plain objects and
 * `ProviderApiError('vonage')`; keys, secrets and JWTs never appear in a message.
 *
 * - Voice API (https://api.nexmo.com/v1/calls): `Authorization: Bearer <RS256 JWT>` from the application's
 *   private key (vonage-jwt.ts), JSON; errors `{type, title, detail}`.
 * - Applications API (https://api.nexmo.com/v2/applications): Basic auth with api_key:api_secret.
 * - Numbers API (https://rest.nexmo.com/account/numbers, /number/update): api_key and api_secret as
 *   parameters, as Vonage documents; errors `{"error-code", "error-code-label"}`.
 * - Transport (the SDK's `providerHttp`, one per host): 429 is retried with exponential backoff honouring
 *   `Retry-After`, bounded by `maxRetries`/`maxRetryDelayMs`; an unreadable answer is read as null.
 * - `apiBaseUrl` / `restBaseUrl` replace the two hosts (tests point both at test/fakes/vonage).
 */
import { ProviderApiError } from '../../core/errors.js';
import { jsonOrNull, providerHttp, type ProviderHttp, type ProviderHttpRequest } from '../../plugins/sdk.js';
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
  private readonly api: ProviderHttp;
  private readonly rest: ProviderHttp;

  constructor(private readonly opts: VonageClientOptions) {
    if (!opts.applicationId || !opts.privateKey) throw new ProviderApiError('vonage', 'A Vonage application id and private key are required');
    const { applicationId, apiKey, apiSecret, privateKey, apiBaseUrl, restBaseUrl, nowSeconds, ...transport } = opts;
    const common = { ...transport, provider: 'vonage', name: 'Vonage', unreadableBody: 'null' as const, errorDetail: (body: unknown) => this.errorText(body) };
    this.api = providerHttp({ ...common, baseUrl: apiBaseUrl ?? API });
    this.rest = providerHttp({ ...common, baseUrl: restBaseUrl ?? REST });
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
    const data = (await this.voice('create call', 'POST', '/v1/calls', { json: body })) as Record<string, unknown> | null;
    if (!data || typeof data.uuid !== 'string') throw new ProviderApiError('vonage', 'Vonage create call returned no call uuid', true);
    return { uuid: data.uuid, status: String(data.status ?? ''), conversationUuid: typeof data.conversation_uuid === 'string' ? data.conversation_uuid : null };
  }

  /** Hangs a call up (PUT /v1/calls/{uuid} {action: hangup}). Idempotent: an unknown call is `not_found`. */
  async hangup(uuid: string): Promise<'ok' | 'not_found'> {
    const data = await this.voice('hang up call', 'PUT', `/v1/calls/${encodeURIComponent(uuid)}`, { json: { action: 'hangup' }, notFoundStatuses: [404] });
    return data === NOT_FOUND ? 'not_found' : 'ok';
  }

  /** A call's status (GET /v1/calls/{uuid}); null when Vonage does not know it. */
  async getCall(uuid: string): Promise<VonageCallInfo | null> {
    const data = await this.voice('fetch call', 'GET', `/v1/calls/${encodeURIComponent(uuid)}`, { notFoundStatuses: [404] });
    if (data === NOT_FOUND) return null;
    const d = data as Record<string, unknown> | null;
    if (!d || typeof d.uuid !== 'string') return null;
    const info: VonageCallInfo = { uuid: d.uuid, status: String(d.status ?? '') };
    const duration = Number(d.duration);
    if (d.duration !== undefined && d.duration !== null && d.duration !== '' && Number.isFinite(duration)) info.durationSeconds = duration;
    return info;
  }

  /** The account's number `msisdn` (digits); null when the account has none. */
  async findNumber(msisdn: string): Promise<VonageNumber | null> {
    const q = new URLSearchParams({ api_key: this.opts.apiKey, api_secret: this.opts.apiSecret, pattern: msisdn, search_pattern: '0', size: '10' });
    const d = (await this.rest.request('GET', '/account/numbers', { what: 'list numbers', query: q })).body as Record<string, unknown> | null;
    const list = Array.isArray(d?.numbers) ? (d.numbers as Array<Record<string, unknown>>) : [];
    const n = list.find((x) => x.msisdn === msisdn);
    if (!n) return null;
    return { country: String(n.country ?? ''), msisdn, appId: typeof n.app_id === 'string' && n.app_id ? n.app_id : null };
  }

  /** Links the number to an application (POST /number/update with app_id). */
  async linkNumber(number: VonageNumber, appId: string): Promise<void> {
    const form = { api_key: this.opts.apiKey, api_secret: this.opts.apiSecret, country: number.country, msisdn: number.msisdn, app_id: appId };
    const d = (await this.rest.request('POST', '/number/update', { what: 'update number', form })).body as Record<string, unknown> | null;
    const code = d?.['error-code'];
    if (code !== undefined && String(code) !== '200') {
      throw new ProviderApiError('vonage', `Vonage update number failed (error ${String(code)}: ${this.safe(String(d?.['error-code-label'] ?? ''))})`);
    }
  }

  /** The application's answer webhook (GET /v2/applications/{id}); null when unknown. */
  async getApplication(): Promise<VonageApplicationInfo | null> {
    const basic = Buffer.from(`${this.opts.apiKey}:${this.opts.apiSecret}`).toString('base64');
    const res = await this.api.request('GET', `/v2/applications/${encodeURIComponent(this.opts.applicationId)}`, {
      what: 'fetch application',
      headers: { authorization: `Basic ${basic}` },
      notFoundStatuses: [404],
    });
    if (res.notFound) return null;
    const d = res.body as Record<string, unknown> | null;
    const voice = ((d?.capabilities as Record<string, unknown> | undefined)?.voice ?? {}) as Record<string, unknown>;
    const answer = ((voice.webhooks as Record<string, unknown> | undefined)?.answer_url ?? {}) as Record<string, unknown>;
    return {
      id: String(d?.id ?? this.opts.applicationId),
      answerUrl: typeof answer.address === 'string' && answer.address ? answer.address : null,
      answerMethod: typeof answer.http_method === 'string' ? answer.http_method : null,
      signedCallbacks: voice.signed_callbacks === true,
    };
  }

  // ---------------------------------------------------------------------------------------------------------

  /**
   * Transfers a live call leg to an inline NCCO (PUT /v1/calls/{uuid} `{action: "transfer", destination: {type:
   * "ncco", ncco}}`). Vonage's 4xx refusal comes back as a value with its status and words (404 for an unknown
   * call, 400 for one no longer in progress or an NCCO it will not run); a network failure or a 5xx after retries
   * throws `ProviderApiError`.
   */
  async transferCall(uuid: string, ncco: Array<Record<string, unknown>>): Promise<{ ok: true } | { ok: false; status: number; detail: string }> {
    const refusals = [400, 403, 404, 409, 410, 422];
    const res = await this.voiceResponse('transfer call', 'PUT', `/v1/calls/${encodeURIComponent(uuid)}`, {
      json: { action: 'transfer', destination: { type: 'ncco', ncco } }, notFoundStatuses: refusals,
    });
    if (!res.notFound) return { ok: true };
    const parsed = jsonOrNull(res.text);
    return { ok: false, status: res.status, detail: `HTTP ${res.status}${this.errorText(parsed)}` };
  }

  /** A Voice API request with a fresh application JWT: the answer's body, or NOT_FOUND for a status in `notFoundStatuses`. */
  private async voice(what: string, method: string, path: string, req: Omit<ProviderHttpRequest, 'what' | 'headers'> = {}): Promise<unknown> {
    const res = await this.voiceResponse(what, method, path, req);
    return res.notFound ? NOT_FOUND : res.body;
  }

  /** A Voice API request with a fresh application JWT, answered as it came. */
  private async voiceResponse(what: string, method: string, path: string, req: Omit<ProviderHttpRequest, 'what' | 'headers'> = {}) {
    let jwt: string;
    try {
      jwt = vonageApplicationJwt({ applicationId: this.opts.applicationId, privateKeyPem: this.opts.privateKey, nowSeconds: this.opts.nowSeconds?.() ?? Math.floor(Date.now() / 1000) });
    } catch {
      throw new ProviderApiError('vonage', 'The Vonage private key is not a readable PEM private key');
    }
    return this.api.request(method, path, { ...req, what, headers: { authorization: `Bearer ${jwt}` } });
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
