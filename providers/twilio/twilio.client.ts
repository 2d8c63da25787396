/**
 * The only file that talks to Twilio (twilio SDK 6). Callers get plain objects and `ProviderApiError('twilio')`;
 * no SDK type crosses this file's interface.
 *
 * Transport: a `RequestClient` subclass (the SDK's documented extension point) that
 * - sends requests for https://api.twilio.com to `baseUrl` when one is given (tests, proxies);
 * - retries Twilio's 429 Too Many Requests with exponential backoff, honouring `Retry-After`, bounded by
 *   `maxRetries` and `maxRetryDelayMs`. A 429 means the request was not processed, so repeating a create is safe.
 * Any other non-2xx becomes the SDK's RestException, mapped here to ProviderApiError with Twilio's code and
 * message (never the credentials).
 *
 * The SDK (about 6 MB of heap) is loaded on the first REST call of any Twilio account, not at start-up: a
 * service with no Twilio configuration, or one that only answers Twilio's webhooks (their signatures are checked
 * by our own code, twilio.provider.ts), never loads it (docs/deployment.md, "Memory at start-up").
 */
import { createRequire } from 'node:module';
import type twilio from 'twilio';
import type SdkRequestClient from 'twilio/lib/base/RequestClient.js';
import type * as SdkResponseModule from 'twilio/lib/http/response.js';
import { ProviderApiError } from '../../core/errors.js';
import { retryDelayMs } from '../../plugins/sdk.js';

export interface TwilioClientOptions {
  accountSid: string;
  authToken: string;
  /** Replaces https://api.twilio.com (e.g. a local fake). */
  baseUrl?: string;
  /** Retries of one request after a 429. Default 3. */
  maxRetries?: number;
  /** First backoff delay when Twilio sends no Retry-After (ms). Default 500. */
  retryBaseDelayMs?: number;
  /** Upper bound of any wait between retries, Retry-After included (ms). Default 10 000. */
  maxRetryDelayMs?: number;
  /** Request timeout (ms). Default 15 000. */
  timeoutMs?: number;
  /** Injectable wait (tests). */
  sleep?: (ms: number) => Promise<void>;
}

export type TwilioCallEvent = 'initiated' | 'ringing' | 'answered' | 'completed';

export interface TwilioCreateCallRequest {
  to: string;
  from: string;
  /** Answer URL: Twilio fetches TwiML from it when the call connects. */
  url: string;
  /** HTTP method for `url`. Default POST. */
  method?: 'GET' | 'POST';
  statusCallback: string;
  statusCallbackEvents: TwilioCallEvent[];
  statusCallbackMethod?: 'GET' | 'POST';
  /** Answering machine detection: `Enable` (AnsweredBy as soon as known) or `DetectMessageEnd`. */
  machineDetection?: 'Enable' | 'DetectMessageEnd';
  machineDetectionTimeoutSeconds?: number;
  /** Asynchronous AMD: the call proceeds and the verdict is POSTed to `asyncAmdStatusCallback`. */
  asyncAmd?: boolean;
  asyncAmdStatusCallback?: string;
  /** Seconds to let the phone ring before giving up (Twilio: 5-600, default 60). */
  timeoutSeconds?: number;
}

export interface TwilioAccountInfo {
  sid: string;
  friendlyName: string;
  /** active, suspended or closed */
  status: string;
}

export interface TwilioCallInfo {
  sid: string;
  /** queued, ringing, in-progress, completed, busy, failed, no-answer, canceled */
  status: string;
  answeredBy?: string;
  durationSeconds?: number;
}

export interface TwilioIncomingNumber {
  sid: string;
  phoneNumber: string;
  /** null when no voice URL is set. */
  voiceUrl: string | null;
  voiceMethod: string;
}

const TWILIO_API_ORIGIN = 'https://api.twilio.com';


interface RetryPolicy {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  sleep: (ms: number) => Promise<void>;
}

type TwilioSdk = typeof twilio;

interface LoadedSdk {
  twilio: TwilioSdk;
  RequestClient: ReturnType<typeof defineRequestClient>;
}

let loaded: LoadedSdk | undefined;

/**
 * The twilio package and our transport class on it, loaded once per process on first use (synchronously: the
 * SDK is CommonJS). A missing or broken package is a `ProviderApiError('twilio')` naming it.
 */
function loadSdk(): LoadedSdk {
  if (loaded) return loaded;
  let sdk: TwilioSdk;
  try {
    sdk = createRequire(import.meta.url)('twilio') as TwilioSdk;
  } catch (err) {
    throw new ProviderApiError('twilio', `the twilio package could not be loaded: ${err instanceof Error ? err.message : String(err)}`, false);
  }
  loaded = { twilio: sdk, RequestClient: defineRequestClient(sdk) };
  return loaded;
}

function defineRequestClient(sdk: TwilioSdk) {
  /** Rewrites the API origin and retries 429s (see the file comment). */
  return class CallplaneRequestClient extends sdk.RequestClient {
    constructor(
      private readonly baseUrl: string | undefined,
      private readonly retry: RetryPolicy,
      timeoutMs: number,
    ) {
      super({ timeout: timeoutMs, keepAlive: false });
    }

    override async request<TData>(opts: SdkRequestClient.RequestOptions<TData>): Promise<SdkResponseModule.default<TData>> {
      const uri = this.baseUrl && opts.uri.startsWith(TWILIO_API_ORIGIN) ? this.baseUrl + opts.uri.slice(TWILIO_API_ORIGIN.length) : opts.uri;
      for (let attempt = 0; ; attempt++) {
        // The SDK's request() mutates `headers`; give each try its own copy.
        const res = await super.request<TData>({ ...opts, uri, headers: { ...(opts.headers ?? {}) } });
        if (res.statusCode !== 429 || attempt >= this.retry.maxRetries) return res;
        await this.retry.sleep(this.delay(attempt, res.headers as Record<string, unknown> | undefined));
      }
    }

    /** Retry-After or the backoff, capped (the SDK's `retryDelayMs`, as the fetch-based clients wait). */
    private delay(attempt: number, headers: Record<string, unknown> | undefined): number {
      return retryDelayMs(attempt, headers?.['retry-after'] ?? headers?.['Retry-After'], { retryBaseDelayMs: this.retry.baseDelayMs, maxRetryDelayMs: this.retry.maxDelayMs });
    }
  };
}

export class TwilioClient {
  private client?: ReturnType<TwilioSdk>;
  private readonly authToken: string;
  private readonly accountSid: string;

  constructor(private readonly opts: TwilioClientOptions) {
    if (!opts.accountSid || !opts.authToken) throw new ProviderApiError('twilio', 'Twilio account SID and auth token are required');
    this.authToken = opts.authToken;
    this.accountSid = opts.accountSid;
    // Twilio's own rule (the SDK applies it when built, on first use here): refused up front, before any request.
    if (!opts.accountSid.startsWith('AC')) throw new ProviderApiError('twilio', 'Invalid Twilio credentials: accountSid must start with AC');
  }

  /** The SDK client of this account, built (and the SDK loaded) on the first REST call. */
  private get sdk(): ReturnType<TwilioSdk> {
    if (this.client) return this.client;
    const { twilio: sdk, RequestClient } = loadSdk();
    const opts = this.opts;
    const transport = new RequestClient(
      opts.baseUrl?.replace(/\/+$/, ''),
      {
        maxRetries: Math.max(0, opts.maxRetries ?? 3),
        baseDelayMs: opts.retryBaseDelayMs ?? 500,
        maxDelayMs: opts.maxRetryDelayMs ?? 10_000,
        sleep: opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      },
      opts.timeoutMs ?? 15_000,
    );
    try {
      this.client = sdk(opts.accountSid, opts.authToken, { httpClient: transport, accountSid: opts.accountSid });
    } catch (err) {
      throw new ProviderApiError('twilio', `Invalid Twilio credentials: ${this.safe(err)}`);
    }
    return this.client;
  }

  /** Places a call. Throws ProviderApiError (retryable for 429 after retries, 5xx and network failures). */
  async createCall(req: TwilioCreateCallRequest): Promise<{ sid: string; status: string }> {
    const params: Parameters<typeof this.sdk.calls.create>[0] = {
      to: req.to,
      from: req.from,
      url: req.url,
      method: req.method ?? 'POST',
      statusCallback: req.statusCallback,
      statusCallbackEvent: [...req.statusCallbackEvents],
      statusCallbackMethod: req.statusCallbackMethod ?? 'POST',
    };
    if (req.machineDetection) params.machineDetection = req.machineDetection;
    if (req.machineDetectionTimeoutSeconds !== undefined) params.machineDetectionTimeout = req.machineDetectionTimeoutSeconds;
    if (req.asyncAmd) {
      params.asyncAmd = 'true';
      if (req.asyncAmdStatusCallback) {
        params.asyncAmdStatusCallback = req.asyncAmdStatusCallback;
        params.asyncAmdStatusCallbackMethod = 'POST';
      }
    }
    if (req.timeoutSeconds !== undefined) params.timeout = Math.round(req.timeoutSeconds);
    const call = await this.run('create call', () => this.sdk.calls.create(params));
    return { sid: call.sid, status: call.status };
  }

  /**
   * Ends a call whatever its state (Status=completed). Idempotent: a finished call keeps its final status;
   * an unknown SID answers `not_found`.
   */
  async hangupCall(sid: string): Promise<{ status: string } | 'not_found'> {
    try {
      const call = await this.run('hang up call', () => this.sdk.calls(sid).update({ status: 'completed' }), true);
      return { status: call.status };
    } catch (err) {
      if (err === NOT_FOUND) return 'not_found';
      throw err;
    }
  }

  /**
   * Replaces a live call's instructions with `twiml` (POST /2010-04-01/Accounts/{sid}/Calls/{CallSid}.json
   * `Twiml=...`): how a transfer dials the target. Twilio's refusal comes back as a value with its HTTP status,
   * error code and message (21220 when the call is no longer in progress, 20404 for an unknown SID); only a network
   * failure or a 5xx after retries throws `ProviderApiError`. Not idempotent (each accepted update restarts the TwiML).
   */
  async updateCallTwiml(sid: string, twiml: string): Promise<{ ok: true; status: string } | { ok: false; httpStatus: number; code: number | null; message: string }> {
    const api = this.sdk;
    try {
      const call = await api.calls(sid).update({ twiml });
      return { ok: true, status: call.status };
    } catch (err) {
      const e = err as { status?: unknown; code?: unknown; message?: unknown };
      if ((err instanceof loadSdk().twilio.RestException || (typeof e.status === 'number' && 'moreInfo' in (err as object))) && Number(e.status) < 500) {
        return { ok: false, httpStatus: Number(e.status), code: typeof e.code === 'number' ? e.code : null, message: this.safe(e.message) };
      }
      return this.run('update call', () => Promise.reject(err));
    }
  }

  /** Current status of a call, for reconciliation; null when Twilio does not know the SID. */
  async getCallStatus(sid: string): Promise<TwilioCallInfo | null> {
    try {
      const call = await this.run('fetch call', () => this.sdk.calls(sid).fetch(), true);
      const info: TwilioCallInfo = { sid: call.sid, status: call.status };
      if (call.answeredBy) info.answeredBy = call.answeredBy;
      if (call.duration !== null && call.duration !== undefined && call.duration !== '') info.durationSeconds = Number(call.duration);
      return info;
    } catch (err) {
      if (err === NOT_FOUND) return null;
      throw err;
    }
  }

  /**
   * The account these credentials open (GET /2010-04-01/Accounts/{sid}.json): proves the auth token belongs to
   * the account SID. Throws ProviderApiError (HTTP 401 when Twilio refuses them). Read-only.
   */
  async fetchAccount(): Promise<TwilioAccountInfo> {
    const a = await this.run('fetch account', () => this.sdk.api.v2010.accounts(this.accountSid).fetch());
    return { sid: a.sid, friendlyName: a.friendlyName ?? '', status: String(a.status ?? '') };
  }

  /** The account's IncomingPhoneNumber with exactly this E.164 number; null when the account has none. */
  async findIncomingNumber(e164: string): Promise<TwilioIncomingNumber | null> {
    const list = await this.run('list incoming numbers', () => this.sdk.incomingPhoneNumbers.list({ phoneNumber: e164, limit: 50 }));
    const match = list.find((n) => n.phoneNumber === e164);
    return match ? toNumber(match) : null;
  }

  /** Sets (or, with null, clears) the number's voice webhook. Idempotent. Throws ProviderApiError (404 when the SID is unknown). */
  async setIncomingNumberVoiceUrl(sid: string, url: string | null, method: 'GET' | 'POST' = 'POST'): Promise<TwilioIncomingNumber> {
    const updated = await this.run('update incoming number', () =>
      this.sdk.incomingPhoneNumbers(sid).update({ voiceUrl: url ?? '', voiceMethod: method }),
    );
    return toNumber(updated);
  }

  // ---------------------------------------------------------------------------------------------------------

  private async run<T>(what: string, fn: () => Promise<T>, notFoundIsValue = false): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      // the SDK could not be loaded or built (see `sdk`): its own message
      if (err instanceof ProviderApiError) throw err;
      const e = err as { status?: unknown; code?: unknown; message?: unknown; moreInfo?: unknown };
      if (err instanceof loadSdk().twilio.RestException || (typeof e.status === 'number' && 'moreInfo' in (err as object))) {
        const status = Number(e.status);
        if (status === 404 && notFoundIsValue) throw NOT_FOUND;
        const code = typeof e.code === 'number' ? ` ${e.code}` : '';
        const retryable = status === 429 || status >= 500;
        throw new ProviderApiError(
          'twilio',
          `Twilio ${what} failed (HTTP ${status}${code ? `, error${code}` : ''}): ${this.safe(e.message)}`,
          retryable,
        );
      }
      const netCode = (err as { code?: unknown }).code;
      const reason = typeof netCode === 'string' ? netCode : this.safe(err);
      throw new ProviderApiError('twilio', `Twilio ${what} failed: API unreachable (${reason})`, true);
    }
  }

  /** An error's text with the auth token removed. */
  private safe(err: unknown): string {
    const text = err instanceof Error ? err.message : typeof err === 'string' ? err : 'unknown error';
    return text.split(this.authToken).join('***');
  }
}

const NOT_FOUND = Symbol('twilio-not-found');

function toNumber(n: { sid: string; phoneNumber: string; voiceUrl?: string | null; voiceMethod?: string | null }): TwilioIncomingNumber {
  return { sid: n.sid, phoneNumber: n.phoneNumber, voiceUrl: n.voiceUrl ? n.voiceUrl : null, voiceMethod: n.voiceMethod ?? 'POST' };
}
