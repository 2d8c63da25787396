/**
 * The only file that talks to Telnyx: the Call Control / numbers REST API v2 over node's `fetch` (no SDK).
 * Callers get plain objects and `ProviderApiError('telnyx')`; the API key never appears in a message.
 *
 * - Auth: `Authorization: Bearer <api_key>`; JSON bodies; responses wrap the resource in `data`; errors are
 *   `{errors: [{code, title, detail}]}`.
 * - Transport (the SDK's `providerHttp`): 429 Too Many Requests is retried with exponential backoff honouring
 *   `Retry-After`, bounded by `maxRetries` and `maxRetryDelayMs` (a 429 means the request was not processed, so
 *   repeating a dial is safe); an unreadable 2xx answer is an error.
 * - `baseUrl` replaces https://api.telnyx.com (tests point it at test/fakes/telnyx).
 */
import { ProviderApiError } from '../../core/errors.js';
import { jsonOrNull, providerHttp, type ProviderHttp, type ProviderHttpRequest } from '../../plugins/sdk.js';

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

/**
 * The media stream we ask for on dial and answer: both tracks to us, and our audio back to the caller as RTP
 * payloads in PCMU (without `stream_bidirectional_mode` Telnyx drops what we send; providers/telnyx/telnyx-media.ts).
 */
const TWO_WAY_STREAM = { stream_track: 'both_tracks', stream_bidirectional_mode: 'rtp', stream_bidirectional_codec: 'PCMU' } as const;

const TELNYX_API_ORIGIN = 'https://api.telnyx.com';
/** Client errors a transfer command answers with: the carrier's refusal, returned as a value. */
const TRANSFER_REFUSALS = [400, 403, 404, 409, 410, 422] as const;
const NOT_FOUND = Symbol('telnyx-not-found');

export class TelnyxClient {
  private readonly http: ProviderHttp;
  private readonly errorText: (body: unknown) => string;

  constructor(opts: TelnyxClientOptions) {
    if (!opts.apiKey) throw new ProviderApiError('telnyx', 'A Telnyx API key is required');
    const { apiKey, baseUrl, ...transport } = opts;
    this.errorText = (body) => errorText(body, apiKey);
    this.http = providerHttp({
      ...transport,
      provider: 'telnyx',
      name: 'Telnyx',
      baseUrl: baseUrl ?? TELNYX_API_ORIGIN,
      headers: () => ({ authorization: `Bearer ${apiKey}` }),
      errorDetail: (body) => errorText(body, apiKey),
    });
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
    if (req.streamUrl) Object.assign(body, { stream_url: req.streamUrl, ...TWO_WAY_STREAM });
    if (req.answeringMachineDetection) body.answering_machine_detection = req.answeringMachineDetection;
    if (req.timeoutSecs !== undefined) body.timeout_secs = Math.round(req.timeoutSecs);
    if (req.clientState) body.client_state = req.clientState;
    if (req.commandId) body.command_id = req.commandId;
    const data = await this.request('dial', 'POST', '/v2/calls', { json: body });
    return toCall(data);
  }

  /** Answers an incoming call, streaming its audio and sending its later webhooks to `webhookUrl`. */
  async answer(callControlId: string, req: { streamUrl: string; webhookUrl: string; clientState?: string; commandId?: string }): Promise<void> {
    const body: Record<string, unknown> = { stream_url: req.streamUrl, ...TWO_WAY_STREAM, webhook_url: req.webhookUrl, webhook_url_method: 'POST' };
    if (req.clientState) body.client_state = req.clientState;
    if (req.commandId) body.command_id = req.commandId;
    await this.request('answer call', 'POST', `/v2/calls/${encodeURIComponent(callControlId)}/actions/answer`, { json: body });
  }

  /**
   * Hangs a call up. Idempotent: a call that already ended (Telnyx answers 404 or 422 "call has already
   * ended") is `'not_found'`.
   */
  async hangup(callControlId: string): Promise<'ok' | 'not_found'> {
    const data = await this.request('hang up call', 'POST', `/v2/calls/${encodeURIComponent(callControlId)}/actions/hangup`, { json: {}, notFoundStatuses: [404, 422] });
    return data === NOT_FOUND ? 'not_found' : 'ok';
  }

  /**
   * Transfers a live call (POST /v2/calls/{id}/actions/transfer `{to, from?, timeout_secs?, command_id?}`): Telnyx
   * dials `to` (E.164 or a SIP URI) and bridges it; if that leg fails, the original call stays up and a `call.hangup`
   * of the B leg reports why. Telnyx's 4xx refusal comes back as a value with its status and words (422 90018 when the
   * call already ended, 404 when unknown); a network failure or a 5xx after retries throws `ProviderApiError`.
   * `commandId` makes a repeat of the same command a no-op at Telnyx.
   */
  async transfer(callControlId: string, req: { to: string; from?: string; timeoutSecs?: number; commandId?: string }): Promise<{ ok: true } | { ok: false; status: number; code: string | null; detail: string }> {
    const body: Record<string, unknown> = { to: req.to };
    if (req.from) body.from = req.from;
    if (req.timeoutSecs !== undefined) body.timeout_secs = Math.round(req.timeoutSecs);
    if (req.commandId) body.command_id = req.commandId;
    const res = await this.http.request('POST', `/v2/calls/${encodeURIComponent(callControlId)}/actions/transfer`, {
      what: 'transfer call', json: body, notFoundStatuses: TRANSFER_REFUSALS,
    });
    if (!res.notFound) return { ok: true };
    const parsed = jsonOrNull(res.text);
    const code = (parsed as { errors?: Array<{ code?: unknown }> } | null)?.errors?.[0]?.code;
    return { ok: false, status: res.status, code: typeof code === 'string' || typeof code === 'number' ? String(code) : null, detail: `HTTP ${res.status}${this.errorText(parsed)}` };
  }

  /** A call's live state (GET /v2/calls/{id}); null when Telnyx does not know it. */
  async getCall(callControlId: string): Promise<TelnyxCall | null> {
    const data = await this.request('fetch call', 'GET', `/v2/calls/${encodeURIComponent(callControlId)}`, { notFoundStatuses: [404] });
    return data === NOT_FOUND ? null : toCall(data);
  }

  /** The account's number with exactly this E.164 address; null when it has none. */
  async findPhoneNumber(e164: string): Promise<TelnyxPhoneNumber | null> {
    const data = await this.request('list phone numbers', 'GET', '/v2/phone_numbers', { query: { 'filter[phone_number]': e164, 'page[size]': '20' } });
    const list = Array.isArray(data) ? data : [];
    const match = list.map(toNumber).find((n) => n?.phoneNumber === e164);
    return match ?? null;
  }

  /** Moves a number to a connection (PATCH /v2/phone_numbers/{id}). */
  async setPhoneNumberConnection(id: string, connectionId: string): Promise<TelnyxPhoneNumber> {
    const n = toNumber(await this.request('update phone number', 'PATCH', `/v2/phone_numbers/${encodeURIComponent(id)}`, { json: { connection_id: connectionId } }));
    if (!n) throw new ProviderApiError('telnyx', 'Telnyx update phone number returned no number', true);
    return n;
  }

  /** The Call Control application (its webhook URL); null when unknown. */
  async getApplication(id: string): Promise<TelnyxApplication | null> {
    const data = await this.request('fetch call control application', 'GET', `/v2/call_control_applications/${encodeURIComponent(id)}`, { notFoundStatuses: [404] });
    return data === NOT_FOUND ? null : toApplication(data);
  }

  /** Sets the application's webhook URL (PATCH needs the name too). */
  async setApplicationWebhook(app: TelnyxApplication, webhookEventUrl: string): Promise<TelnyxApplication> {
    const data = await this.request('update call control application', 'PATCH', `/v2/call_control_applications/${encodeURIComponent(app.id)}`, {
      json: { application_name: app.applicationName, webhook_event_url: webhookEventUrl, webhook_api_version: '2' },
    });
    return toApplication(data) ?? { ...app, webhookEventUrl };
  }

  // ---------------------------------------------------------------------------------------------------------

  /** The answer's `data` (null when it has none), or NOT_FOUND for a status in `notFoundStatuses`. */
  private async request(what: string, method: string, path: string, req: Omit<ProviderHttpRequest, 'what'> = {}): Promise<unknown> {
    const res = await this.http.request(method, path, { ...req, what });
    if (res.notFound) return NOT_FOUND;
    if (!res.text) return null;
    // A JSON `null` has no `data` to read: unreadable, like a body that is not JSON.
    if (res.body === null) throw new ProviderApiError('telnyx', `Telnyx ${what} returned an unreadable answer (HTTP ${res.status})`, true);
    return (res.body as { data?: unknown }).data ?? null;
  }
}

/** `, error <code>: <title>: <detail>` from Telnyx's error body, with the API key removed. */
function errorText(body: unknown, apiKey: string): string {
  if (body === null || body === undefined) return '';
  const first = (body as { errors?: Array<{ code?: unknown; title?: unknown; detail?: unknown }> }).errors?.[0];
  if (!first) return '';
  const parts = [first.title, first.detail].filter((x): x is string => typeof x === 'string' && x.length > 0);
  const code = typeof first.code === 'string' || typeof first.code === 'number' ? `, error ${first.code}` : '';
  return `${code}${parts.length ? `: ${parts.join(': ')}` : ''}`.split(apiKey).join('***').slice(0, 500);
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
