/**
 * The only file that talks to Plivo: the Voice REST API v1 over node's `fetch` (no SDK). Callers get plain
 * objects and `ProviderApiError('plivo')`; the auth token never appears in a message.
 *
 * - Auth: HTTP Basic `auth_id:auth_token`; every resource lives under `/v1/Account/{auth_id}/` and ends in `/`;
 *   JSON bodies; errors are `{api_id, error}` (a string or an object of field messages).
 * - Transport (the SDK's `providerHttp`): 429 Too Many Requests is retried with exponential backoff honouring
 *   `Retry-After`, bounded by `maxRetries` and `maxRetryDelayMs` (a 429 means the request was not processed, so
 *   repeating a call request is safe); an unreadable 2xx answer is an error.
 * - `baseUrl` replaces https://api.plivo.com (tests point it at test/fakes/plivo).
 */
import { ProviderApiError } from '../../core/errors.js';
import { jsonOrNull, providerHttp, type ProviderHttp, type ProviderHttpRequest } from '../../plugins/sdk.js';

export interface PlivoClientOptions {
  authId: string;
  authToken: string;
  /** Replaces https://api.plivo.com. */
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

export interface PlivoCallRequest {
  /** Caller id and destination, digits with the country code (Plivo's form: no `+`). */
  from: string;
  to: string;
  answerUrl: string;
  hangupUrl: string;
  ringUrl?: string;
  /** Seconds the call may ring (ring_timeout). */
  ringTimeoutSeconds?: number;
  /** `hangup`: Plivo hangs up on a machine; with `machineDetectionUrl` the verdict is posted there. */
  machineDetection?: 'true' | 'hangup';
  machineDetectionUrl?: string;
}

/** A call's record (CDR) once it ended. */
export interface PlivoCallRecord {
  callUuid: string;
  durationSeconds?: number;
  hangupCauseName: string | null;
  hangupCauseCode: number | null;
  answered: boolean;
  callState: string | null;
}

export interface PlivoNumber {
  number: string;
  /** The linked application's id (taken from its resource URI), or null. */
  applicationId: string | null;
}

export interface PlivoApplication {
  appId: string;
  appName: string;
  answerUrl: string | null;
  answerMethod: string | null;
}

const PLIVO_API_ORIGIN = 'https://api.plivo.com';
const NOT_FOUND = Symbol('plivo-not-found');

/** Plivo writes numbers as digits with the country code: `+1 415-555-0100` → `14155550100`. */
export const plivoNumber = (e164: string): string => e164.replace(/[^0-9]/g, '');

export class PlivoClient {
  private readonly http: ProviderHttp;
  private readonly errorText: (body: unknown) => string;

  constructor(opts: PlivoClientOptions) {
    if (!opts.authId || !opts.authToken) throw new ProviderApiError('plivo', 'A Plivo Auth ID and Auth Token are required');
    const { authId, authToken, baseUrl, ...transport } = opts;
    this.errorText = (body) => errorText(body, authToken);
    const authorization = `Basic ${Buffer.from(`${authId}:${authToken}`, 'utf8').toString('base64')}`;
    this.http = providerHttp({
      ...transport,
      provider: 'plivo',
      name: 'Plivo',
      baseUrl: `${(baseUrl ?? PLIVO_API_ORIGIN).replace(/\/+$/, '')}/v1/Account/${encodeURIComponent(authId)}`,
      headers: () => ({ authorization }),
      errorDetail: (body) => errorText(body, authToken),
    });
  }

  /** The account of these credentials (GET /v1/Account/{auth_id}/). Throws ProviderApiError (HTTP 401 when refused). Read-only. */
  async getAccount(): Promise<{ authId: string; name: string }> {
    const d = obj(await this.request('fetch account', 'GET', '/'));
    return { authId: typeof d.auth_id === 'string' ? d.auth_id : '', name: typeof d.name === 'string' ? d.name : '' };
  }

  /** Makes a call (POST /Call/). Returns Plivo's request id; the call's own id (CallUUID) arrives in its callbacks. */
  async createCall(req: PlivoCallRequest): Promise<{ requestUuid: string }> {
    const body: Record<string, unknown> = {
      from: plivoNumber(req.from),
      to: plivoNumber(req.to),
      answer_url: req.answerUrl,
      answer_method: 'POST',
      hangup_url: req.hangupUrl,
      hangup_method: 'POST',
    };
    if (req.ringUrl) {
      body.ring_url = req.ringUrl;
      body.ring_method = 'POST';
    }
    if (req.ringTimeoutSeconds !== undefined) body.ring_timeout = Math.round(req.ringTimeoutSeconds);
    if (req.machineDetection) {
      body.machine_detection = req.machineDetection;
      if (req.machineDetectionUrl) {
        body.machine_detection_url = req.machineDetectionUrl;
        body.machine_detection_method = 'POST';
      }
    }
    const data = obj(await this.request('make call', 'POST', '/Call/', { json: body }));
    const requestUuid = Array.isArray(data.request_uuid) ? data.request_uuid[0] : data.request_uuid;
    if (typeof requestUuid !== 'string' || !requestUuid) throw new ProviderApiError('plivo', 'Plivo make call returned no request_uuid', true);
    return { requestUuid };
  }

  /** Hangs up a live call (DELETE /Call/{uuid}/). Idempotent: a call Plivo no longer has is `'not_found'`. */
  async hangupCall(callUuid: string): Promise<'ok' | 'not_found'> {
    const data = await this.request('hang up call', 'DELETE', `/Call/${encodeURIComponent(callUuid)}/`, { notFoundStatuses: [404] });
    return data === NOT_FOUND ? 'not_found' : 'ok';
  }

  /**
   * Transfers a live call's A leg to new instructions (POST /Call/{uuid}/ `{legs: "aleg", aleg_url, aleg_method}`):
   * Plivo fetches XML from `alegUrl` and runs it. Plivo's 4xx refusal comes back as a value with its status and
   * words (404 when the call is not live); a network failure or a 5xx after retries throws `ProviderApiError`.
   */
  async transferCall(callUuid: string, alegUrl: string): Promise<{ ok: true } | { ok: false; status: number; detail: string }> {
    const res = await this.http.request('POST', `/Call/${encodeURIComponent(callUuid)}/`, {
      what: 'transfer call', json: { legs: 'aleg', aleg_url: alegUrl, aleg_method: 'POST' }, notFoundStatuses: [400, 403, 404, 409, 422],
    });
    if (!res.notFound) return { ok: true };
    const parsed = jsonOrNull(res.text);
    return { ok: false, status: res.status, detail: `HTTP ${res.status}${this.errorText(parsed)}` };
  }

  /** Cancels a call that is not answered yet by its request id (DELETE /Request/{uuid}/); `'not_found'` when it is gone. */
  async cancelRequest(requestUuid: string): Promise<'ok' | 'not_found'> {
    const data = await this.request('cancel call request', 'DELETE', `/Request/${encodeURIComponent(requestUuid)}/`, { notFoundStatuses: [404] });
    return data === NOT_FOUND ? 'not_found' : 'ok';
  }

  /** The record of an ended call (GET /Call/{uuid}/); null when Plivo has none (unknown, or still live). */
  async getCall(callUuid: string): Promise<PlivoCallRecord | null> {
    const data = await this.request('fetch call', 'GET', `/Call/${encodeURIComponent(callUuid)}/`, { notFoundStatuses: [404] });
    if (data === NOT_FOUND) return null;
    const d = obj(data);
    const duration = toInt(d.call_duration ?? d.duration);
    return {
      callUuid: typeof d.call_uuid === 'string' ? d.call_uuid : callUuid,
      ...(duration !== null ? { durationSeconds: duration } : {}),
      hangupCauseName: typeof d.hangup_cause_name === 'string' && d.hangup_cause_name ? d.hangup_cause_name : null,
      hangupCauseCode: toInt(d.hangup_cause_code),
      answered: typeof d.answer_time === 'string' && d.answer_time.length > 0,
      callState: typeof d.call_state === 'string' ? d.call_state : null,
    };
  }

  /** A live call's status (GET /Call/{uuid}/?status=live); null when it is not live. */
  async getLiveCall(callUuid: string): Promise<{ callUuid: string; callStatus: string } | null> {
    const data = await this.request('fetch live call', 'GET', `/Call/${encodeURIComponent(callUuid)}/`, { query: { status: 'live' }, notFoundStatuses: [404] });
    if (data === NOT_FOUND) return null;
    const d = obj(data);
    return { callUuid: typeof d.call_uuid === 'string' ? d.call_uuid : callUuid, callStatus: typeof d.call_status === 'string' ? d.call_status : 'in-progress' };
  }

  /** The account's number (GET /Number/{number}/); null when the account does not have it. */
  async getNumber(e164: string): Promise<PlivoNumber | null> {
    const data = await this.request('fetch number', 'GET', `/Number/${plivoNumber(e164)}/`, { notFoundStatuses: [404] });
    return data === NOT_FOUND ? null : toNumber(obj(data), e164);
  }

  /** Links a number to an application (POST /Number/{number}/ with app_id). */
  async linkNumber(e164: string, appId: string): Promise<void> {
    await this.request('update number', 'POST', `/Number/${plivoNumber(e164)}/`, { json: { app_id: appId } });
  }

  /** The application (GET /Application/{id}/); null when unknown. */
  async getApplication(appId: string): Promise<PlivoApplication | null> {
    const data = await this.request('fetch application', 'GET', `/Application/${encodeURIComponent(appId)}/`, { notFoundStatuses: [404] });
    if (data === NOT_FOUND) return null;
    const d = obj(data);
    return {
      appId: typeof d.app_id === 'string' ? d.app_id : appId,
      appName: typeof d.app_name === 'string' ? d.app_name : '',
      answerUrl: typeof d.answer_url === 'string' && d.answer_url ? d.answer_url : null,
      answerMethod: typeof d.answer_method === 'string' ? d.answer_method : null,
    };
  }

  /** Points the application's answer URL at `answerUrl` (POST, modify application). */
  async setApplicationAnswerUrl(appId: string, answerUrl: string): Promise<void> {
    await this.request('update application', 'POST', `/Application/${encodeURIComponent(appId)}/`, { json: { answer_url: answerUrl, answer_method: 'POST' } });
  }

  // ---------------------------------------------------------------------------------------------------------

  /** The answer's JSON body, or NOT_FOUND for a status in `notFoundStatuses`. */
  private async request(what: string, method: string, path: string, req: Omit<ProviderHttpRequest, 'what'> = {}): Promise<unknown> {
    const res = await this.http.request(method, path, { ...req, what });
    return res.notFound ? NOT_FOUND : res.body;
  }
}

/** `: <error>` from Plivo's error body (a string, or field → message), with the auth token removed. */
function errorText(body: unknown, authToken: string): string {
  let message = '';
  const error = body !== null && body !== undefined ? (body as { error?: unknown }).error : undefined;
  if (typeof error === 'string') message = error;
  else if (error && typeof error === 'object') {
    message = Object.entries(error as Record<string, unknown>).map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : String(v)}`).join('; ');
  }
  return message ? `: ${message}`.split(authToken).join('***').slice(0, 500) : '';
}

function obj(data: unknown): Record<string, unknown> {
  return data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {};
}

function toInt(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.round(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  return null;
}

function toNumber(d: Record<string, unknown>, e164: string): PlivoNumber {
  const app = typeof d.application === 'string' ? /\/Application\/([^/]+)\/?$/.exec(d.application)?.[1] ?? null : null;
  return { number: typeof d.number === 'string' ? d.number : plivoNumber(e164), applicationId: app };
}
