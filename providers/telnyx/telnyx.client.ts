/**
 * The only file that talks to Telnyx: the Call Control / numbers REST API v2 over node's `fetch` (no SDK).
 * Callers get plain objects and `ProviderApiError('telnyx')`; the API key never appears in a message.
 *
 * - Auth: `Authorization: Bearer <api_key>`; JSON bodies; responses wrap the resource in `data`; errors are
 *   `{errors: [{code, title, detail}]}`.
 * - 429 Too Many Requests is retried with exponential backoff honouring `Retry-After`, bounded by `maxRetries`
 *   and `maxRetryDelayMs` (a 429 means the request was not processed, so repeating a dial is safe).
 * - `baseUrl` replaces https://api.telnyx.com (tests point it at test/fakes/telnyx).
 */
import { ProviderApiError } from '../../core/errors.js';

export interface TelnyxClientOptions {
  apiKey: string;
  /** Replaces https://api.telnyx.com. */
  baseUrl?: string;
  /** Retries of one request after a 429. Default 3. */
  maxRetries?: number;
  /** First backoff delay without Retry-After (ms). Default 500. */
  retryBaseDelayMs?: number;
  /** Upper bound of any wait between retries (ms). Default 10 000. */
  maxRetryDelayMs?: number;
  /** Request timeout (ms). Default 15 000. */
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  fetch?: typeof fetch;
}

export interface TelnyxDialRequest {
  connectionId: string;
  to: string;
  from: string;
  webhookUrl: string;
  streamUrl?: string;
  /** `detect`: one `call.machine.detection.ended` webhook with human/machine/not_sure. */
  answeringMachineDetection?: 'detect' | 'detect_beep' | 'detect_words' | 'greeting_end' | 'premium' | 'disabled';
  /** Seconds Telnyx lets the call ring (timeout_secs). */
  timeoutSecs?: number;
  /** Echoed (base64) in every webhook of the call. */
  clientState?: string;
  commandId?: string;
}

export interface TelnyxCall {
  callControlId: string;
  callLegId: string | null;
  callSessionId: string | null;
  isAlive: boolean;
  callDurationSeconds?: number;
}

export interface TelnyxPhoneNumber {
  id: string;
  phoneNumber: string;
  connectionId: string | null;
}

export interface TelnyxApplication {
  id: string;
  applicationName: string;
  webhookEventUrl: string | null;
}

const TELNYX_API_ORIGIN = 'https://api.telnyx.com';
const NOT_FOUND = Symbol('telnyx-not-found');

export class TelnyxClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly opts: TelnyxClientOptions) {
    if (!opts.apiKey) throw new ProviderApiError('telnyx', 'A Telnyx API key is required');
    this.base = (opts.baseUrl ?? TELNYX_API_ORIGIN).replace(/\/+$/, '');
    this.fetchImpl = opts.fetch ?? fetch;
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Dials (POST /v2/calls). Throws ProviderApiError (retryable for 429 after retries, 5xx, network). */
  async dial(req: TelnyxDialRequest): Promise<TelnyxCall> {
    const body: Record<string, unknown> = {
      connection_id: req.connectionId,
      to: req.to,
      from: req.from,
      webhook_url: req.webhookUrl,
      webhook_url_method: 'POST',
    };
    if (req.streamUrl) {
      body.stream_url = req.streamUrl;
      body.stream_track = 'both_tracks';
    }
    if (req.answeringMachineDetection) body.answering_machine_detection = req.answeringMachineDetection;
    if (req.timeoutSecs !== undefined) body.timeout_secs = Math.round(req.timeoutSecs);
    if (req.clientState) body.client_state = req.clientState;
    if (req.commandId) body.command_id = req.commandId;
    const data = await this.request('dial', 'POST', '/v2/calls', body);
    return toCall(data);
  }

  /** Answers an incoming call, streaming its audio and sending its later webhooks to `webhookUrl`. */
  async answer(callControlId: string, req: { streamUrl: string; webhookUrl: string; clientState?: string; commandId?: string }): Promise<void> {
    const body: Record<string, unknown> = { stream_url: req.streamUrl, stream_track: 'both_tracks', webhook_url: req.webhookUrl, webhook_url_method: 'POST' };
    if (req.clientState) body.client_state = req.clientState;
    if (req.commandId) body.command_id = req.commandId;
    await this.request('answer call', 'POST', `/v2/calls/${encodeURIComponent(callControlId)}/actions/answer`, body);
  }

  /**
   * Hangs a call up. Idempotent: a call that already ended (Telnyx answers 404 or 422 "call has already
   * ended") is `'not_found'`.
   */
  async hangup(callControlId: string): Promise<'ok' | 'not_found'> {
    try {
      await this.request('hang up call', 'POST', `/v2/calls/${encodeURIComponent(callControlId)}/actions/hangup`, {}, [404, 422]);
      return 'ok';
    } catch (err) {
      if (err === NOT_FOUND) return 'not_found';
      throw err;
    }
  }

  /** A call's live state (GET /v2/calls/{id}); null when Telnyx does not know it. */
  async getCall(callControlId: string): Promise<TelnyxCall | null> {
    try {
      return toCall(await this.request('fetch call', 'GET', `/v2/calls/${encodeURIComponent(callControlId)}`, undefined, [404]));
    } catch (err) {
      if (err === NOT_FOUND) return null;
      throw err;
    }
  }

  /** The account's number with exactly this E.164 address; null when it has none. */
  async findPhoneNumber(e164: string): Promise<TelnyxPhoneNumber | null> {
    const data = await this.request('list phone numbers', 'GET', `/v2/phone_numbers?${new URLSearchParams({ 'filter[phone_number]': e164, 'page[size]': '20' })}`);
    const list = Array.isArray(data) ? data : [];
    const match = list.map(toNumber).find((n) => n?.phoneNumber === e164);
    return match ?? null;
  }

  /** Moves a number to a connection (PATCH /v2/phone_numbers/{id}). */
  async setPhoneNumberConnection(id: string, connectionId: string): Promise<TelnyxPhoneNumber> {
    const n = toNumber(await this.request('update phone number', 'PATCH', `/v2/phone_numbers/${encodeURIComponent(id)}`, { connection_id: connectionId }));
    if (!n) throw new ProviderApiError('telnyx', 'Telnyx update phone number returned no number', true);
    return n;
  }

  /** The Call Control application (its webhook URL); null when unknown. */
  async getApplication(id: string): Promise<TelnyxApplication | null> {
    try {
      return toApplication(await this.request('fetch call control application', 'GET', `/v2/call_control_applications/${encodeURIComponent(id)}`, undefined, [404]));
    } catch (err) {
      if (err === NOT_FOUND) return null;
      throw err;
    }
  }

  /** Sets the application's webhook URL (PATCH needs the name too). */
  async setApplicationWebhook(app: TelnyxApplication, webhookEventUrl: string): Promise<TelnyxApplication> {
    const data = await this.request('update call control application', 'PATCH', `/v2/call_control_applications/${encodeURIComponent(app.id)}`, {
      application_name: app.applicationName,
      webhook_event_url: webhookEventUrl,
      webhook_api_version: '2',
    });
    return toApplication(data) ?? { ...app, webhookEventUrl };
  }

  // ---------------------------------------------------------------------------------------------------------

  private async request(what: string, method: string, path: string, body?: unknown, notFoundStatuses: number[] = []): Promise<unknown> {
    const maxRetries = Math.max(0, this.opts.maxRetries ?? 3);
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchImpl(this.base + path, {
          method,
          headers: {
            authorization: `Bearer ${this.opts.apiKey}`,
            accept: 'application/json',
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(this.opts.timeoutMs ?? 15_000),
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: unknown } })?.cause?.code ?? (err as { name?: unknown })?.name;
        throw new ProviderApiError('telnyx', `Telnyx ${what} failed: API unreachable (${typeof cause === 'string' ? cause : 'network error'})`, true);
      }
      if (res.status === 429 && attempt < maxRetries) {
        await res.body?.cancel().catch(() => undefined);
        await this.sleep(this.retryDelay(attempt, res.headers.get('retry-after')));
        continue;
      }
      const text = await res.text().catch(() => '');
      if (res.ok) {
        if (!text) return null;
        try {
          return (JSON.parse(text) as { data?: unknown }).data ?? null;
        } catch {
          throw new ProviderApiError('telnyx', `Telnyx ${what} returned an unreadable answer (HTTP ${res.status})`, true);
        }
      }
      if (notFoundStatuses.includes(res.status)) throw NOT_FOUND;
      throw new ProviderApiError('telnyx', `Telnyx ${what} failed (HTTP ${res.status}${errorText(text, this.opts.apiKey)})`, res.status === 429 || res.status >= 500);
    }
  }

  private retryDelay(attempt: number, retryAfter: string | null): number {
    const max = this.opts.maxRetryDelayMs ?? 10_000;
    const given = parseRetryAfter(retryAfter);
    return Math.min(max, given ?? (this.opts.retryBaseDelayMs ?? 500) * 2 ** attempt);
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

/** `, error <code>: <title>: <detail>` from Telnyx's error body, with the API key removed. */
function errorText(text: string, apiKey: string): string {
  try {
    const first = (JSON.parse(text) as { errors?: Array<{ code?: unknown; title?: unknown; detail?: unknown }> }).errors?.[0];
    if (!first) return '';
    const parts = [first.title, first.detail].filter((x): x is string => typeof x === 'string' && x.length > 0);
    const code = typeof first.code === 'string' || typeof first.code === 'number' ? `, error ${first.code}` : '';
    return `${code}${parts.length ? `: ${parts.join(': ')}` : ''}`.split(apiKey).join('***').slice(0, 500);
  } catch {
    return '';
  }
}

function toCall(data: unknown): TelnyxCall {
  const d = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  if (typeof d.call_control_id !== 'string' || !d.call_control_id) throw new ProviderApiError('telnyx', 'Telnyx returned a call without call_control_id', true);
  const call: TelnyxCall = {
    callControlId: d.call_control_id,
    callLegId: typeof d.call_leg_id === 'string' ? d.call_leg_id : null,
    callSessionId: typeof d.call_session_id === 'string' ? d.call_session_id : null,
    isAlive: d.is_alive === true,
  };
  if (typeof d.call_duration === 'number') call.callDurationSeconds = d.call_duration;
  return call;
}

function toNumber(data: unknown): TelnyxPhoneNumber | null {
  const d = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  if (typeof d.id !== 'string' || typeof d.phone_number !== 'string') return null;
  return { id: d.id, phoneNumber: d.phone_number, connectionId: typeof d.connection_id === 'string' && d.connection_id ? d.connection_id : null };
}

function toApplication(data: unknown): TelnyxApplication | null {
  const d = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  if (typeof d.id !== 'string') return null;
  return {
    id: d.id,
    applicationName: typeof d.application_name === 'string' ? d.application_name : '',
    webhookEventUrl: typeof d.webhook_event_url === 'string' && d.webhook_event_url ? d.webhook_event_url : null,
  };
}
