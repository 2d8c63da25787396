/**
 * The only file that talks to Asterisk. REST operations go through ari-client 2.2 (which loads the server's
 * Swagger api-docs and exposes `channels.originate`, `channels.hangup`, ...); the event stream is one managed
 * WebSocket on `/ari/events` per configuration, owned here so it reconnects with our backoff, reports its
 * health and closes cleanly (ari-client's own reconnect gives up after 10 tries, has no cancel and cannot
 * report health).
 *
 * Nothing of ari-client leaks out: callers get plain objects (`AriChannelInfo`, `AriEvent`, `AriHealth`) and
 * `ProviderApiError('ari', ...)`.
 *
 * Outbound network policy (SSRF, plugins/network-policy.ts): every HTTP request ari-client makes goes through
 * `policyFetch` (swagger-client's HTTP layer is replaced: `AriTransport`), so each connection resolves and checks
 * the host, is pinned to the checked address, may only go to the configured endpoint's origin (a `basePath` in
 * the api-docs pointing elsewhere is refused) and never follows a redirect (a 3xx is a failed request: "ARI
 * endpoint answered a redirect (302) to ...; redirects are not followed"). ari-client's reachability probe (the
 * `request` package) is pinned to the preflight's checked addresses with redirects off; the event WebSocket is
 * checked and pinned the same way.
 *
 * Containment: nothing a connection raises may end the process. ari-client's callbacks run inside our transport
 * (a throw there fails the load), every connection attempt catches sync and async failures, api-docs loading has
 * a deadline, and errors thrown from inside ari-client's own modules that still escape are claimed as ARI faults
 * (plugins/provider-faults.ts): the loading connection fails with the message and the process guard survives.
 *
 * Two ari-client quirks handled here:
 * - It reports HTTP errors as `Error(body)` with no status. The status is recovered from the request itself
 *   (see `AuthRouter`) and the body's `message` is parsed; `Channel with given unique ID already exists` (409)
 *   turns into an `already_exists` originate result.
 * - It stores credentials in swagger-client's process-wide authorization registry, so a second configuration
 *   would silently overwrite the first one's. `AuthRouter` replaces that entry with one that picks the
 *   credentials of the calling `AriClient` for every request.
 */
import { createRequire } from 'node:module';
import WebSocket from 'ws';
import { ProviderApiError } from '../../core/errors.js';
import {
  assertConnectable,
  NetworkPolicyError,
  pinnedLookup,
  policyFetch,
  registerFaultClaimer,
  type HostResolver,
  type NetworkPolicyOptions,
  type ResolvedAddress,
} from '../../plugins/sdk.js';
import { ariPolicy } from './ari-endpoint-policy.js';

// ---------------------------------------------------------------------------------------------------------
// Public, SDK-free types
// ---------------------------------------------------------------------------------------------------------

export interface AriReconnectOptions {
  /** First retry delay (ms). Default 500. */
  initialDelayMs?: number;
  /** Upper bound of a retry delay (ms). Default 30 000. */
  maxDelayMs?: number;
  /** Growth factor between consecutive retries. Default 2. */
  factor?: number;
  /** Randomize each delay within [delay/2, delay] so many workers do not reconnect in lockstep. Default true. */
  jitter?: boolean;
}

export interface AriClientOptions {
  /** `ari_endpoint`: http(s)://host:port of Asterisk's HTTP server; ari-client uses only scheme, host and port. */
  url: string;
  username: string;
  password: string;
  /** The configuration's Stasis application: the WebSocket subscribes to it, originate defaults to it. */
  app: string;
  reconnect?: AriReconnectOptions;
  /** WebSocket keep-alive ping interval (ms); a socket that misses a pong is dropped and reconnected. 0 disables. Default 30 000. */
  pingIntervalMs?: number;
  /** Injectable randomness for jitter (tests). */
  random?: () => number;
  /**
   * Private-network addresses allowed (`CALLPLANE_ALLOW_PRIVATE_NETWORK`; the host passes its setting). Cloud
   * metadata is refused either way. Default true, the setting's default.
   */
  allowPrivateNetwork?: boolean;
  /** Name resolution for the policy checks (tests). */
  resolve?: HostResolver;
  /** Deadline for loading the api-docs through ari-client (ms). Default 30 000. */
  loadTimeoutMs?: number;
  /** The configuration this connection belongs to: named in faults the process guard logs. */
  configurationId?: number;
}

export interface AriOriginateRequest {
  /** The call attempt's id; Asterisk refuses a second live channel with the same id (409). */
  channelId: string;
  /** Dial string, `tech/resource`, e.g. `PJSIP/+15551234567@trunk`. */
  endpoint: string;
  callerId?: string;
  /** Stasis application; defaults to the client's `app`. */
  app?: string;
  appArgs?: string[];
  /** Channel variables set before dialing. */
  variables?: Record<string, string>;
  /** Ring timeout in seconds (Asterisk's default is 30). */
  timeoutSeconds?: number;
}

export interface AriChannelInfo {
  id: string;
  name: string;
  /** Asterisk channel state: Down, Rsrvd, OffHook, Dialing, Ring, Ringing, Up, Busy, ... */
  state: string;
  callerNumber?: string;
  callerName?: string;
  dialedExten?: string;
  context?: string;
}

/**
 * An external media channel over chan_websocket (`POST /channels/externalMedia`, `transport=websocket`,
 * `encapsulation=none`): Asterisk connects out through a `websocket_client.conf` connection.
 */
export interface AriExternalMediaRequest {
  /** Id of the new channel (known before Asterisk answers, so its events can be recognised). */
  channelId: string;
  /** Stasis application the channel enters once its WebSocket is up; defaults to the client's `app`. */
  app?: string;
  /** The `websocket_client.conf` connection id (`external_host`). */
  connection: string;
  /** Asterisk format name of the media, e.g. `ulaw`. */
  format: string;
  /** Dial string options appended by Asterisk (`transport_data`), e.g. `v(run_id=1,token=...)`: URI query parameters. */
  transportData?: string;
  /** Stasis arguments of the channel's `StasisStart` (`data`), e.g. `callplane-media,<run id>`. */
  appArgs?: string[];
}

export type AriOriginateResult =
  | { outcome: 'created'; channel: AriChannelInfo }
  /** A live channel already has this id: an earlier try of the same attempt dialed; nothing new was dialed. */
  | { outcome: 'already_exists'; channelId: string };

export type AriHangupReason =
  | 'normal' | 'busy' | 'congestion' | 'no_answer' | 'timeout' | 'rejected' | 'unallocated'
  | 'normal_unspecified' | 'number_incomplete' | 'codec_mismatch' | 'interworking' | 'failure' | 'answered_elsewhere';

export interface AriEvent {
  /** ARI event type: StasisStart, StasisEnd, ChannelStateChange, ChannelDestroyed, ChannelHangupRequest, Dial, ... */
  type: string;
  /** The channel the event is about (for `Dial`, the dialed peer). */
  channelId: string;
  application?: string;
  /** Q.850 cause (ChannelDestroyed, ChannelHangupRequest): 16 normal, 17 busy, 18/19 no answer, 21 rejected, 1 unallocated. */
  cause?: number;
  causeText?: string;
  /** Channel state after the event. */
  state?: string;
  callerNumber?: string;
  callerName?: string;
  /** Dialplan extension of the channel: for an inbound StasisStart, the number that was dialed. */
  dialedExten?: string;
  context?: string;
  /** StasisStart arguments (`Stasis(app,arg1,arg2)` or originate `appArgs`). */
  args?: string[];
  /** Dial: RINGING, ANSWER, BUSY, NOANSWER, CANCEL, CONGESTION, CHANUNAVAIL, ... ('' while dialing). */
  dialStatus?: string;
  /** ISO-8601 time Asterisk stamped on the event (receipt time when absent). */
  timestamp: string;
}

export interface AriHealth {
  connected: boolean;
  /** Failed connection attempts since the socket was last open (0 while connected). */
  reconnectAttempts: number;
  /** Successful re-connections since `connect()`. */
  reconnects: number;
  lastError?: string;
  lastConnectedAt?: string;
  lastDisconnectedAt?: string;
  /** Delay before the next attempt, while one is scheduled. */
  nextRetryInMs?: number;
}

// ---------------------------------------------------------------------------------------------------------
// ari-client / swagger-client surface we rely on (ari-client ships no types)
// ---------------------------------------------------------------------------------------------------------

interface SwaggerResponse {
  url: string;
  method: string;
  status: number;
  statusText: string;
  headers: Record<string, string>;
  data: string;
  obj?: unknown;
}
type SwaggerObj = {
  url: string;
  method?: string;
  headers: Record<string, string>;
  body?: unknown;
  on?: { error?: (resp: SwaggerResponse) => unknown; response?: (resp: SwaggerResponse) => unknown };
};
type SwaggerAuth = { apply(obj: SwaggerObj, authorizations?: unknown): boolean };
interface SwaggerClientModule {
  authorizations: { add(name: string, auth: SwaggerAuth): void };
  SwaggerHttp: { prototype: { execute(obj: SwaggerObj): unknown } };
}
type RequestCtor = new (params: Record<string, unknown>) => unknown;
interface RequestModule {
  Request: RequestCtor;
}
type AriOperation = (params?: Record<string, unknown>) => PromiseLike<unknown>;
interface AriSdkClient {
  channels: Record<'originate' | 'hangup' | 'get' | 'answer' | 'continueInDialplan' | 'externalMedia', AriOperation>;
  bridges: Record<'createWithId' | 'addChannel' | 'destroy' | 'get', AriOperation>;
}
interface AriClientModule {
  connect(url: string, user: string, pass: string): PromiseLike<AriSdkClient>;
}

interface AriSdk {
  ari: AriClientModule;
  /** The swagger-client instance ari-client itself uses (resolved from ari-client's location). */
  swagger: SwaggerClientModule;
  /** The `request` package ari-client probes the endpoint with (nothing else here uses it). */
  request: RequestModule;
}

let loadedSdk: AriSdk | undefined;

/**
 * ari-client, swagger-client and request (about 14 MB of heap together), loaded on the first REST operation of
 * any ARI configuration rather than at start-up: a service with no Asterisk configuration never loads them
 * (docs/deployment.md, "Memory at start-up"). Synchronous and process-wide: later calls get the same module
 * instances, so `AuthRouter` and `AriTransport` patch the instances ari-client really uses. A missing package
 * is a `ProviderApiError('ari')` naming it.
 */
function ariSdk(): AriSdk {
  if (loadedSdk) return loadedSdk;
  const requireHere = createRequire(import.meta.url);
  try {
    const ari = requireHere('ari-client') as AriClientModule;
    const requireAriClient = createRequire(requireHere.resolve('ari-client'));
    loadedSdk = {
      ari,
      swagger: requireAriClient('swagger-client') as SwaggerClientModule,
      request: requireAriClient('request') as RequestModule,
    };
  } catch (err) {
    throw new ProviderApiError('ari', `the ari-client package could not be loaded: ${describe(err)}`, false);
  }
  return loadedSdk;
}

interface Credentials {
  username: string;
  password: string;
}
interface CallScope {
  credentials: Credentials;
  status?: number;
}

/**
 * Process-wide swagger authorization that applies the right credentials to each request:
 * - during a REST call, the calling client's (set synchronously just before the call; swagger-client applies
 *   authorizations synchronously while building the request), and it records the response status on error;
 * - otherwise (api-docs loading, which runs in later callbacks), the credentials registered for the origin.
 */
const AuthRouter = {
  byOrigin: new Map<string, Credentials>(),
  current: undefined as CallScope | undefined,
  installed: false,
  install(): void {
    ariSdk().swagger.authorizations.add('basic-auth', {
      apply: (obj) => {
        const scope = AuthRouter.current;
        const creds = scope?.credentials ?? AuthRouter.byOrigin.get(originOf(obj.url));
        if (creds) {
          obj.headers.Authorization = `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`;
        }
        if (scope && obj.on?.error) {
          const onError = obj.on.error;
          obj.on.error = (resp) => {
            scope.status = resp?.status;
            return onError(resp);
          };
        }
        return true;
      },
    });
  },
};

/** ari-client loads api-docs with process-wide credentials: load one configuration at a time. */
let loadQueue: Promise<unknown> = Promise.resolve();

interface CheckedEndpoint {
  policy: NetworkPolicyOptions;
  /** Addresses the last preflight checked (ari-client's probe is pinned to them). */
  addresses?: ResolvedAddress[];
}

/**
 * ari-client's HTTP, through the network policy. Installed once, process-wide (swagger-client and `request` are
 * shared module instances): swagger-client's `SwaggerHttp.execute` becomes `policyFetch` to a registered ARI
 * origin (anything else is refused without a request), answers come back in swagger's response shape, 3xx
 * included as errors, and a throw from ari-client's callbacks fails the connection that is loading instead of
 * escaping. The `request` probe is pinned and does not follow redirects.
 */
const AriTransport = {
  endpoints: new Map<string, CheckedEndpoint>(),
  /** The client whose api-docs are loading (loads are serialized by `loadQueue`). */
  loading: undefined as AriClient | undefined,
  installed: false,
  install(): void {
    if (AriTransport.installed) return;
    const { swagger, request: requestModule } = ariSdk();
    AriTransport.installed = true;
    swagger.SwaggerHttp.prototype.execute = (obj: SwaggerObj) => {
      void AriTransport.execute(obj);
    };
    const Original = requestModule.Request;
    const Guarded = function GuardedRequest(params: Record<string, unknown>) {
      return new Original(AriTransport.guardProbe(params));
    } as unknown as RequestCtor;
    Guarded.prototype = Original.prototype;
    requestModule.Request = Guarded;
  },
  guardProbe(params: Record<string, unknown>): Record<string, unknown> {
    const raw = params.uri ?? params.url;
    const url = typeof raw === 'string' ? raw : raw instanceof URL ? raw.href : String((raw as { href?: unknown } | undefined)?.href ?? '');
    const checked = AriTransport.endpoints.get(originOf(url));
    if (!checked?.addresses) throw new ProviderApiError('ari', `refused: ${originOf(url) || 'the URL'} is not a checked ARI endpoint`);
    return { ...params, followRedirect: false, followAllRedirects: false, lookup: pinnedLookup(checked.addresses) };
  },
  async execute(obj: SwaggerObj): Promise<void> {
    const base = { url: obj.url, method: (obj.method ?? 'GET').toUpperCase(), headers: {} as Record<string, string>, data: '' };
    let out: SwaggerResponse;
    let ok = false;
    const checked = AriTransport.endpoints.get(originOf(obj.url));
    if (!checked) {
      const message = `refused: ${originOf(obj.url) || obj.url} is not the configured ARI endpoint`;
      out = { ...base, status: 0, statusText: message, data: JSON.stringify({ message }) };
    } else {
      try {
        const res = await policyFetch(obj.url, {
          method: base.method,
          headers: obj.headers,
          body: typeof obj.body === 'string' && obj.body !== '' ? obj.body : undefined,
          signal: AbortSignal.timeout(15_000),
        }, checked.policy);
        const data = await res.text();
        out = { ...base, status: res.status, statusText: res.statusText, headers: Object.fromEntries(res.headers), data };
        if (/json/i.test(res.headers.get('content-type') ?? '')) {
          try {
            out.obj = data === '' ? {} : JSON.parse(data);
          } catch {
            // swagger-client parses `data` itself and fails the load
          }
        }
        ok = res.status >= 200 && res.status < 300;
      } catch (err) {
        const message = describe(err);
        const status = err instanceof NetworkPolicyError && err.redirect ? err.redirect.status : 0;
        out = { ...base, status, statusText: message, data: JSON.stringify({ message }) };
        // an api-docs request refused by the policy fails the loading connection with the policy's own words
        if (err instanceof NetworkPolicyError && new URL(obj.url).pathname.startsWith('/ari/api-docs/')) {
          AriTransport.loading?.abortLoad(new ProviderApiError('ari', message, err.code !== 'refused_address'));
        }
      }
    }
    try {
      (ok ? obj.on?.response : obj.on?.error)?.(out);
    } catch (err) {
      // swagger-client throws from its own failure handlers (`fail` throws the message): the load failed
      AriTransport.loading?.abortLoad(err);
    }
  },
};

/** Frames of ari-client and the packages it brings: an error thrown there belongs to an ARI connection. */
const ARI_SDK_FRAME = /[\\/]node_modules[\\/](?:ari-client|swagger-client|shred|request)[\\/]/;

registerFaultClaimer((err) => {
  const stack = err instanceof Error ? err.stack ?? '' : '';
  if (!ARI_SDK_FRAME.test(stack)) return undefined;
  const client = AriTransport.loading;
  client?.abortLoad(err);
  return { provider: 'ari', ...(client?.configurationId !== undefined ? { configurationId: client.configurationId } : {}), message: `ari-client failed outside any handler: ${describe(err)}` };
});

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------------------------------------

type Listener<T> = (value: T) => void;

export class AriClient {
  private readonly origin: string;
  private readonly credentials: Credentials;
  private readonly reconnect: Required<AriReconnectOptions>;
  private readonly pingIntervalMs: number;
  private readonly random: () => number;
  private readonly policy: NetworkPolicyOptions;
  private readonly loadTimeoutMs: number;
  readonly configurationId?: number;
  private rejectLoad?: (err: Error) => void;

  private api?: AriSdkClient;
  private apiLoading?: Promise<AriSdkClient>;
  private ws?: WebSocket;
  private started = false;
  private closed = false;
  private retryTimer?: NodeJS.Timeout;
  private pingTimer?: NodeJS.Timeout;
  private awaitingPong = false;
  private firstConnect?: { resolve: () => void; reject: (e: Error) => void };
  private readonly eventListeners = new Set<Listener<AriEvent>>();
  private readonly healthListeners = new Set<Listener<AriHealth>>();
  private state: AriHealth = { connected: false, reconnectAttempts: 0, reconnects: 0 };
  private everConnected = false;

  constructor(private readonly opts: AriClientOptions) {
    let parsed: URL;
    try {
      parsed = new URL(opts.url);
    } catch {
      throw new ProviderApiError('ari', 'ari_endpoint is not a valid URL');
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new ProviderApiError('ari', 'ari_endpoint must be an http(s) URL');
    }
    this.origin = parsed.origin;
    this.credentials = { username: opts.username, password: opts.password };
    this.reconnect = {
      initialDelayMs: opts.reconnect?.initialDelayMs ?? 500,
      maxDelayMs: opts.reconnect?.maxDelayMs ?? 30_000,
      factor: opts.reconnect?.factor ?? 2,
      jitter: opts.reconnect?.jitter ?? true,
    };
    this.pingIntervalMs = opts.pingIntervalMs ?? 30_000;
    this.random = opts.random ?? Math.random;
    this.policy = ariPolicy({ allowPrivateNetwork: opts.allowPrivateNetwork ?? true, resolve: opts.resolve });
    this.loadTimeoutMs = opts.loadTimeoutMs ?? 30_000;
    this.configurationId = opts.configurationId;
  }

  /** Fails the api-docs load in progress (an error ari-client raised outside any handler). No-op otherwise. */
  abortLoad(err: unknown): void {
    this.rejectLoad?.(err instanceof ProviderApiError ? err : new ProviderApiError('ari', `ari-client failed while loading the api-docs: ${describe(err)}`, true));
  }

  /**
   * Starts the managed event WebSocket (and loads the ARI api-docs). Resolves once the socket is open.
   * If the first attempt fails it rejects with a `ProviderApiError` and keeps retrying in the background
   * (see `health()`) until `close()`. Calling it again while started returns the same state: it resolves at
   * once when connected, otherwise waits for the next successful connection.
   */
  connect(): Promise<void> {
    if (this.closed) return Promise.reject(new ProviderApiError('ari', 'ARI client is closed'));
    if (this.state.connected) return Promise.resolve();
    const p = new Promise<void>((resolve, reject) => {
      this.firstConnect = { resolve, reject };
    });
    if (!this.started) {
      this.started = true;
      void this.attempt();
    }
    return p;
  }

  /**
   * Originates a call into the Stasis application with `channelId` as the channel's id.
   * Idempotent for one attempt: when a live channel already has that id (Asterisk's 409) nothing is dialed and
   * the result is `already_exists`. Throws `ProviderApiError` for other refusals (retryable when Asterisk was
   * unreachable or failed with 5xx).
   */
  async originate(req: AriOriginateRequest): Promise<AriOriginateResult> {
    const params: Record<string, unknown> = {
      endpoint: req.endpoint,
      app: req.app ?? this.opts.app,
      channelId: req.channelId,
    };
    if (req.appArgs && req.appArgs.length > 0) params.appArgs = req.appArgs.join(',');
    if (req.callerId) params.callerId = req.callerId;
    if (req.timeoutSeconds !== undefined) params.timeout = Math.max(1, Math.round(req.timeoutSeconds));
    if (req.variables && Object.keys(req.variables).length > 0) params.variables = { ...req.variables };
    try {
      const channel = await this.call('originate', params);
      return { outcome: 'created', channel: toChannelInfo(channel) };
    } catch (err) {
      const failure = err as AriCallFailure;
      if (failure instanceof AriCallFailure && (failure.status === 409 || /unique id already exists/i.test(failure.ariMessage ?? ''))) {
        return { outcome: 'already_exists', channelId: req.channelId };
      }
      throw failure.toProviderError('originate');
    }
  }

  /**
   * Hangs a channel up with an ARI `reason` (default `normal`). Idempotent: a channel that is already gone
   * answers `not_found`. Throws `ProviderApiError` on other failures.
   */
  async hangup(channelId: string, reason: AriHangupReason = 'normal'): Promise<'hung_up' | 'not_found'> {
    try {
      await this.call('hangup', { channelId, reason });
      return 'hung_up';
    } catch (err) {
      const failure = err as AriCallFailure;
      if (failure instanceof AriCallFailure && failure.status === 404) return 'not_found';
      throw failure.toProviderError('hangup');
    }
  }

  /** Answers a channel that is in our Stasis application (inbound). Throws `ProviderApiError` (404 when gone). */
  async answer(channelId: string): Promise<void> {
    try {
      await this.call('answer', { channelId });
    } catch (err) {
      throw (err as AriCallFailure).toProviderError('answer');
    }
  }

  /** Sends a channel back to the dialplan (leaves our application). Throws `ProviderApiError`. */
  async continueInDialplan(channelId: string, target: { context?: string; extension?: string; priority?: number } = {}): Promise<void> {
    try {
      await this.call('continueInDialplan', { channelId, ...target });
    } catch (err) {
      throw (err as AriCallFailure).toProviderError('continue');
    }
  }

  /**
   * Creates a mixing bridge with `bridgeId` (POST /bridges/{bridgeId}); a transfer bridges the caller and the
   * target there. Throws `ProviderApiError` (Asterisk's words).
   */
  async createBridge(bridgeId: string): Promise<void> {
    try {
      await this.call('createWithId', { bridgeId, type: 'mixing' }, 'bridges');
    } catch (err) {
      throw (err as AriCallFailure).toProviderError('create bridge');
    }
  }

  /**
   * Adds channels to a bridge (POST /bridges/{bridgeId}/addChannel `channel=a,b`); a channel in another bridge of
   * our application moves. Throws `ProviderApiError` (400 a channel is gone, 409/422 not in Stasis).
   */
  async addChannelsToBridge(bridgeId: string, channelIds: string[]): Promise<void> {
    try {
      await this.call('addChannel', { bridgeId, channel: channelIds.join(',') }, 'bridges');
    } catch (err) {
      throw (err as AriCallFailure).toProviderError('add channel to bridge');
    }
  }

  /** Destroys a bridge (DELETE /bridges/{bridgeId}); a bridge already gone is fine. Throws `ProviderApiError` otherwise. */
  async destroyBridge(bridgeId: string): Promise<void> {
    try {
      await this.call('destroy', { bridgeId }, 'bridges');
    } catch (err) {
      const failure = err as AriCallFailure;
      if (failure instanceof AriCallFailure && failure.status === 404) return;
      throw failure.toProviderError('destroy bridge');
    }
  }

  /** Current state of a live channel; null when Asterisk has no such channel (ended). Used to reconcile. */
  async getChannel(channelId: string): Promise<AriChannelInfo | null> {
    try {
      return toChannelInfo(await this.call('get', { channelId }));
    } catch (err) {
      const failure = err as AriCallFailure;
      if (failure instanceof AriCallFailure && failure.status === 404) return null;
      throw failure.toProviderError('get channel');
    }
  }

  /**
   * Creates an external media channel over chan_websocket (media both ways, `direction=both`). Asterisk answers
   * at once and dials asynchronously: the channel enters the application (`StasisStart`) once its WebSocket is
   * connected, or is destroyed when the connection fails. Throws `ProviderApiError` (400: unknown connection id or
   * a version without chan_websocket; retryable when Asterisk was unreachable or failed with 5xx).
   */
  async externalMedia(req: AriExternalMediaRequest): Promise<AriChannelInfo> {
    const params: Record<string, unknown> = {
      channelId: req.channelId,
      app: req.app ?? this.opts.app,
      external_host: req.connection,
      transport: 'websocket',
      encapsulation: 'none',
      connection_type: 'client',
      format: req.format,
      direction: 'both',
    };
    if (req.transportData) params.transport_data = req.transportData;
    if (req.appArgs && req.appArgs.length > 0) params.data = req.appArgs.join(',');
    try {
      return toChannelInfo(await this.call('externalMedia', params));
    } catch (err) {
      throw (err as AriCallFailure).toProviderError('external media');
    }
  }

  /** The ids of the channels in a bridge (GET /bridges/{bridgeId}); null when the bridge is gone. Throws `ProviderApiError` otherwise. */
  async getBridge(bridgeId: string): Promise<{ id: string; channelIds: string[] } | null> {
    try {
      const raw = (await this.call('get', { bridgeId }, 'bridges')) as { id?: unknown; channels?: unknown } | null;
      const channels = Array.isArray(raw?.channels) ? raw.channels.filter((c): c is string => typeof c === 'string') : [];
      return { id: typeof raw?.id === 'string' ? raw.id : bridgeId, channelIds: channels };
    } catch (err) {
      const failure = err as AriCallFailure;
      if (failure instanceof AriCallFailure && failure.status === 404) return null;
      throw failure.toProviderError('get bridge');
    }
  }

  /** Subscribes to normalized channel events of our application. Returns the unsubscribe function. */
  onEvent(cb: (event: AriEvent) => void): () => void {
    this.eventListeners.add(cb);
    return () => this.eventListeners.delete(cb);
  }

  /**
   * Called on every connection change (opened, lost, retry scheduled). After a re-connection, events of the
   * gap are lost: callers should reconcile live calls with `getChannel`.
   */
  onHealthChange(cb: (health: AriHealth) => void): () => void {
    this.healthListeners.add(cb);
    return () => this.healthListeners.delete(cb);
  }

  health(): AriHealth {
    return { ...this.state };
  }

  /** Stops the WebSocket and every timer; the client cannot be reused. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.retryTimer = undefined;
    this.pingTimer = undefined;
    this.firstConnect?.reject(new ProviderApiError('ari', 'ARI client closed before connecting'));
    this.firstConnect = undefined;
    const ws = this.ws;
    this.ws = undefined;
    if (ws && ws.readyState !== WebSocket.CLOSED) {
      await new Promise<void>((resolve) => {
        ws.once('close', () => resolve());
        if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
        else ws.close(1000);
        setTimeout(() => {
          ws.terminate();
          resolve();
        }, 1000).unref();
      });
    }
    this.setState({ connected: false, nextRetryInMs: undefined });
  }

  // -------------------------------------------------------------------------------------------------------
  // REST through ari-client
  // -------------------------------------------------------------------------------------------------------

  private loadApi(): Promise<AriSdkClient> {
    if (this.api) return Promise.resolve(this.api);
    if (this.apiLoading) return this.apiLoading;
    const load = loadQueue.then(async () => {
      AriTransport.install();
      AuthRouter.byOrigin.set(this.origin, this.credentials);
      await this.preflight();
      if (this.closed) throw new ProviderApiError('ari', 'ARI client is closed');
      return await new Promise<AriSdkClient>((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new ProviderApiError('ari', `ARI api-docs did not load from ${this.origin} within ${Math.round(this.loadTimeoutMs / 1000)} s`, true));
        }, this.loadTimeoutMs);
        timer.unref();
        const settle = () => {
          clearTimeout(timer);
          if (AriTransport.loading === this) AriTransport.loading = undefined;
          this.rejectLoad = undefined;
        };
        this.rejectLoad = (err) => {
          settle();
          reject(err);
        };
        AriTransport.loading = this;
        try {
          const pending = ariSdk().ari.connect(this.origin, this.credentials.username, this.credentials.password);
          // ari-client has just (synchronously) put its own credentials in the shared registry: route again.
          AuthRouter.install();
          Promise.resolve(pending).then(
            (api) => {
              settle();
              resolve(api);
            },
            (err: unknown) => this.rejectLoad?.(err instanceof Error ? err : new Error(describe(err))),
          );
        } catch (err) {
          this.rejectLoad?.(err as Error);
        }
      });
    });
    loadQueue = load.catch(() => undefined);
    this.apiLoading = load.then(
      (api) => {
        this.api = api;
        this.apiLoading = undefined;
        return api;
      },
      (err: unknown) => {
        this.apiLoading = undefined;
        throw err instanceof ProviderApiError ? err : new ProviderApiError('ari', `could not load ARI api-docs: ${describe(err)}`, true);
      },
    );
    return this.apiLoading;
  }

  /**
   * Asks Asterisk who it is (`GET /ari/asterisk/info`) with the configuration's username and password, without
   * the event socket and without following redirects (a 3xx is a failure: provider endpoints never redirect
   * us). Never throws; read-only. `timeoutMs` bounds the request (default 5 000).
   */
  async checkCredentials(timeoutMs = 5_000): Promise<{ ok: boolean; message: string }> {
    let res: Response;
    try {
      // through the network policy: the host's addresses are checked (and pinned) and a 3xx is never followed
      res = await policyFetch(`${this.origin}/ari/asterisk/info`, {
        headers: { Authorization: basic(this.credentials), Accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      }, this.policy);
    } catch (err) {
      if (err instanceof NetworkPolicyError && err.redirect) {
        return { ok: false, message: `Asterisk ARI at ${this.origin} answered a redirect (HTTP ${err.redirect.status}); redirects are not followed` };
      }
      if (err instanceof NetworkPolicyError) return { ok: false, message: err.message };
      return { ok: false, message: `Asterisk ARI is unreachable at ${this.origin}: ${redact(describe(err), this.credentials.password)}` };
    }
    const text = await res.text().catch(() => '');
    if (res.status === 401 || res.status === 403) return { ok: false, message: 'Asterisk ARI rejected the username or password' };
    if (res.status !== 200) return { ok: false, message: `Asterisk ARI answered HTTP ${res.status} to GET /ari/asterisk/info at ${this.origin}` };
    let version = '';
    try {
      const v = (JSON.parse(text) as { system?: { version?: unknown } })?.system?.version;
      if (typeof v === 'string') version = v;
    } catch {
      return { ok: false, message: `${this.origin} answered GET /ari/asterisk/info with something that is not ARI JSON` };
    }
    return { ok: true, message: `Asterisk${version ? ` ${version}` : ''} at ${this.origin} accepted the ARI credentials` };
  }

  /**
   * Fetches `resources.json` with our credentials before ari-client does: ari-client cannot tell a wrong
   * password or a non-ARI server from other failures (and swagger-client throws from a callback on them).
   */
  private async preflight(): Promise<void> {
    const url = `${this.origin}/ari/api-docs/resources.json`;
    let res: Response;
    try {
      const target = await assertConnectable(url, this.policy);
      AriTransport.endpoints.set(this.origin, { policy: this.policy, addresses: target.addresses });
      res = await policyFetch(url, {
        headers: { Authorization: basic(this.credentials), Accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      }, this.policy);
    } catch (err) {
      // refused address, unresolvable host or a redirect: the message says which
      if (err instanceof NetworkPolicyError) throw new ProviderApiError('ari', err.message, err.code !== 'refused_address');
      throw new ProviderApiError('ari', `Asterisk ARI is unreachable at ${this.origin}: ${describe(err)}`, true);
    }
    const text = await res.text().catch(() => '');
    if (res.status === 401 || res.status === 403) {
      throw new ProviderApiError('ari', 'Asterisk ARI rejected the username or password', false);
    }
    if (res.status !== 200) {
      throw new ProviderApiError('ari', `Asterisk ARI api-docs answered HTTP ${res.status} at ${this.origin}`, res.status >= 500);
    }
    let listing: { basePath?: unknown } | null;
    try {
      listing = JSON.parse(text) as { basePath?: unknown } | null;
    } catch {
      throw new ProviderApiError('ari', `Asterisk ARI api-docs at ${this.origin} are not JSON`, false);
    }
    const basePath = listing?.basePath;
    if (typeof basePath === 'string' && /^[a-z][a-z0-9+.-]*:/i.test(basePath) && originOf(basePath) !== this.origin) {
      throw new ProviderApiError('ari', `Asterisk ARI api-docs at ${this.origin} point at another host (basePath ${basePath}); refused`, false);
    }
  }

  private async call<R extends keyof AriSdkClient = 'channels'>(op: keyof AriSdkClient[R], params: Record<string, unknown>, resource?: R): Promise<unknown> {
    let api: AriSdkClient;
    try {
      api = await this.loadApi();
    } catch (err) {
      throw new AriCallFailure(undefined, undefined, err as Error);
    }
    const scope: CallScope = { credentials: this.credentials };
    let pending: PromiseLike<unknown>;
    AuthRouter.current = scope;
    try {
      const operations = api[resource ?? 'channels'] as Record<PropertyKey, AriOperation>;
      pending = operations[op](params);
    } catch (err) {
      throw AriCallFailure.from(err, scope.status);
    } finally {
      AuthRouter.current = undefined;
    }
    try {
      return await pending;
    } catch (err) {
      throw AriCallFailure.from(err, scope.status);
    }
  }

  // -------------------------------------------------------------------------------------------------------
  // Managed event WebSocket
  // -------------------------------------------------------------------------------------------------------

  /** One connection attempt; whatever it raises (sync or async) becomes a failed attempt, never an escape. */
  private async attempt(): Promise<void> {
    try {
      await this.attemptOnce();
    } catch (err) {
      this.failed(err);
    }
  }

  private async attemptOnce(): Promise<void> {
    if (this.closed) return;
    this.retryTimer = undefined;
    this.setState({ nextRetryInMs: undefined });
    try {
      await this.loadApi();
    } catch (err) {
      this.failed(err);
      return;
    }
    if (this.closed) return;
    const wsUrl = new URL('/ari/events', this.origin.replace(/^http/, 'ws'));
    wsUrl.searchParams.set('app', this.opts.app);
    wsUrl.searchParams.set('api_key', `${this.credentials.username}:${this.credentials.password}`);
    let lookup;
    try {
      ({ lookup } = await assertConnectable(wsUrl, { ...this.policy, protocols: ['ws:', 'wss:'] }));
    } catch (err) {
      this.failed(err instanceof NetworkPolicyError ? new ProviderApiError('ari', err.message, err.code !== 'refused_address') : err);
      return;
    }
    if (this.closed) return;
    // pinned to the checked address; ws passes `lookup` through to node's http(s)
    const ws = new WebSocket(wsUrl, { handshakeTimeout: 10_000, followRedirects: false, lookup } as WebSocket.ClientOptions);
    this.ws = ws;
    let failedOnce = false;
    const fail = (err: unknown) => {
      if (failedOnce || this.ws !== ws) return;
      failedOnce = true;
      this.ws = undefined;
      if (this.pingTimer) clearInterval(this.pingTimer);
      this.pingTimer = undefined;
      ws.removeAllListeners('message');
      ws.terminate();
      this.failed(err);
    };
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      fail(new Error(status === 401 ? 'ARI WebSocket rejected the credentials (401)' : `ARI WebSocket upgrade answered HTTP ${status}`));
    });
    ws.on('error', (err) => fail(err));
    ws.on('close', (code) => fail(new Error(`ARI WebSocket closed (code ${code})`)));
    ws.on('open', () => {
      if (this.closed) {
        ws.close(1000);
        return;
      }
      const reconnected = this.everConnected;
      this.everConnected = true;
      this.setState({
        connected: true,
        reconnectAttempts: 0,
        reconnects: this.state.reconnects + (reconnected ? 1 : 0),
        lastConnectedAt: new Date().toISOString(),
        nextRetryInMs: undefined,
      });
      this.startPing(ws, fail);
      this.firstConnect?.resolve();
      this.firstConnect = undefined;
    });
    ws.on('pong', () => {
      this.awaitingPong = false;
    });
    ws.on('message', (data) => {
      try {
        this.dispatch(data.toString());
      } catch {
        // an unreadable message is dropped; the socket stays
      }
    });
  }

  private startPing(ws: WebSocket, fail: (err: unknown) => void): void {
    if (this.pingIntervalMs <= 0) return;
    this.awaitingPong = false;
    this.pingTimer = setInterval(() => {
      if (this.awaitingPong) {
        fail(new Error('ARI WebSocket missed a keep-alive pong'));
        return;
      }
      this.awaitingPong = true;
      ws.ping();
    }, this.pingIntervalMs);
    this.pingTimer.unref();
  }

  private failed(err: unknown): void {
    if (this.closed) return;
    const message = redact(describe(err), this.credentials.password);
    const wasConnected = this.state.connected;
    // Losing an open socket is not a failed attempt; every failed connection attempt is.
    const attempts = wasConnected ? 0 : this.state.reconnectAttempts + 1;
    const delay = this.backoffDelay(attempts + 1);
    this.setState({
      connected: false,
      lastError: message,
      reconnectAttempts: attempts,
      lastDisconnectedAt: wasConnected ? new Date().toISOString() : this.state.lastDisconnectedAt,
      nextRetryInMs: delay,
    });
    if (this.firstConnect && !this.everConnected) {
      this.firstConnect.reject(err instanceof ProviderApiError ? err : new ProviderApiError('ari', `ARI WebSocket: ${message}`, true));
      this.firstConnect = undefined;
    }
    this.retryTimer = setTimeout(() => void this.attempt(), delay);
    this.retryTimer.unref();
  }

  /** Exponential backoff for the n-th consecutive failure (n ≥ 1), capped, optionally jittered. */
  private backoffDelay(n: number): number {
    const { initialDelayMs, maxDelayMs, factor, jitter } = this.reconnect;
    const raw = Math.min(maxDelayMs, initialDelayMs * factor ** (n - 1));
    return Math.round(jitter ? raw / 2 + (this.random() * raw) / 2 : raw);
  }

  private setState(patch: Partial<AriHealth>): void {
    this.state = { ...this.state, ...patch };
    for (const k of Object.keys(this.state) as (keyof AriHealth)[]) if (this.state[k] === undefined) delete this.state[k];
    if (patch.connected !== undefined || patch.nextRetryInMs !== undefined) {
      const snapshot = this.health();
      for (const l of this.healthListeners) safely(() => l(snapshot));
    }
  }

  private dispatch(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    const event = normalizeEvent(msg);
    if (!event) return;
    for (const l of this.eventListeners) safely(() => l(event));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------

class AriCallFailure extends Error {
  constructor(
    readonly status: number | undefined,
    readonly ariMessage: string | undefined,
    readonly inner?: Error,
  ) {
    super(ariMessage ?? inner?.message ?? 'ARI request failed');
  }

  /** ari-client rejects with Error(body) (body `{"message": ...}`), a raw swagger response, or a thrown string. */
  static from(err: unknown, status: number | undefined): AriCallFailure {
    if (err instanceof AriCallFailure) return err;
    if (err instanceof ProviderApiError) return new AriCallFailure(undefined, undefined, err);
    let text: string | undefined;
    let st = status;
    if (err instanceof Error) text = err.message;
    else if (typeof err === 'string') text = err;
    else if (err && typeof err === 'object') {
      const o = err as { status?: unknown; data?: unknown };
      if (typeof o.status === 'number' && o.status > 0) st ??= o.status;
      if (o.data !== undefined) text = String(o.data);
    }
    let message = text;
    if (text) {
      try {
        const parsed = JSON.parse(text) as { message?: unknown; error?: unknown };
        if (typeof parsed.message === 'string') message = parsed.message;
        else if (typeof parsed.error === 'string') message = parsed.error;
      } catch {
        // not JSON: keep the text
      }
    }
    return new AriCallFailure(st, message, err instanceof Error ? err : undefined);
  }

  toProviderError(what: string): ProviderApiError {
    if (this.inner instanceof ProviderApiError) return this.inner;
    const status = this.status;
    const retryable = status === undefined || status >= 500;
    const detail = `Asterisk ${what} failed${status ? ` (HTTP ${status})` : ''}: ${this.ariMessage ?? 'no response'}`;
    return new ProviderApiError('ari', detail, retryable);
  }
}

function toChannelInfo(raw: unknown): AriChannelInfo {
  const c = (raw ?? {}) as {
    id?: string; name?: string; state?: string;
    caller?: { name?: string; number?: string };
    dialplan?: { exten?: string; context?: string };
  };
  return strip({
    id: String(c.id ?? ''),
    name: String(c.name ?? ''),
    state: String(c.state ?? ''),
    callerNumber: c.caller?.number || undefined,
    callerName: c.caller?.name || undefined,
    dialedExten: c.dialplan?.exten || undefined,
    context: c.dialplan?.context || undefined,
  });
}

/** Turns an ARI WebSocket message into an `AriEvent`; null for messages that are not about a channel. */
export function normalizeEvent(msg: unknown): AriEvent | null {
  if (!msg || typeof msg !== 'object') return null;
  const m = msg as Record<string, unknown>;
  const type = typeof m.type === 'string' ? m.type : undefined;
  if (!type) return null;
  const channel = (type === 'Dial' ? m.peer : m.channel) as Record<string, unknown> | undefined;
  if (!channel || typeof channel !== 'object' || typeof channel.id !== 'string') return null;
  const info = toChannelInfo(channel);
  return strip({
    type,
    channelId: info.id,
    application: typeof m.application === 'string' ? m.application : undefined,
    cause: typeof m.cause === 'number' ? m.cause : undefined,
    causeText: typeof m.cause_txt === 'string' ? m.cause_txt : undefined,
    state: info.state || undefined,
    callerNumber: info.callerNumber,
    callerName: info.callerName,
    dialedExten: info.dialedExten,
    context: info.context,
    args: Array.isArray(m.args) ? m.args.map(String) : undefined,
    dialStatus: type === 'Dial' && typeof m.dialstatus === 'string' ? m.dialstatus : undefined,
    timestamp: isoTime(m.timestamp),
  });
}

/** Asterisk stamps `2024-05-01T10:11:12.345+0000`; JavaScript wants `+00:00`. */
function isoTime(value: unknown): string {
  if (typeof value === 'string') {
    const fixed = value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
    const t = Date.parse(fixed);
    if (!Number.isNaN(t)) return new Date(t).toISOString();
  }
  return new Date().toISOString();
}

function strip<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

function basic(c: Credentials): string {
  return `Basic ${Buffer.from(`${c.username}:${c.password}`).toString('base64')}`;
}

function describe(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  return 'unknown error';
}

function redact(text: string, secret: string): string {
  return secret ? text.split(secret).join('***').split(encodeURIComponent(secret)).join('***') : text;
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // a listener's failure must not break the socket or the other listeners
  }
}
