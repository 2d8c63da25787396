/**
 * `fetch` for AI provider clients (LLM, STT, TTS over HTTP): every request goes through the outbound network
 * policy of AI service `base_url`s (network-policy.ts `assertConnectable`: the host resolved and each address
 * checked, cloud metadata always refused, private ranges per CALLPLANE_ALLOW_PRIVATE_NETWORK), connects only to
 * the checked addresses and never follows a redirect (a 3xx rejects with `NetworkPolicyError('redirect_refused')`).
 * Only string, binary and URLSearchParams bodies.
 *
 * A talking call makes three to four of these requests per turn (a transcription, the model's stream, one speech
 * request per sentence), and 50 calls make them in the same second when their turns line up, so this is a hot
 * path of the voice pipeline (docs/benchmarks.md section 10). What it keeps between requests, and why that cannot
 * be used for DNS rebinding, is network-policy.ts `PinnedConnections` (shared with the webhooks' `PinnedPoster`,
 * docs/security.md "Outbound connections"):
 *
 * - **A check is reused for at most `checkCacheMs` (default 1 s) per URL**, and only towards the addresses it
 *   checked: the request's `lookup` answers only those. After that the host is resolved and checked again. A
 *   failed check is never kept.
 * - **Keep-alive connections per origin and checked address set** (`PinnedPool`: undici clients, one connection
 *   each), as many as were in flight together, so the connections of 50 calls' requests in flight together are
 *   all reused by the next wave (node's default pool of 16 closed the rest, and every wave opened new
 *   connections). When a new check gives other addresses, requests go to a new pool; the old pool's idle
 *   connections are closed. An idle connection is closed by undici's keep-alive timer after `idleSocketMs`
 *   (default 15 s), or 2 s before the server's own `Keep-Alive: timeout` when that is shorter.
 * - **A request sent on a kept connection that the server closed meanwhile** (ECONNRESET / EPIPE / a hang-up
 *   before any answer: the server's keep-alive timeout crossed it) is sent once more on a new connection of its
 *   own; the server never saw it. undici itself retries nothing. Any other failure rejects with the socket's error
 *   (undici's socket error as node's `socket hang up`, ECONNRESET).

 * The answer is a WHATWG `Response` whose body streams the connection's bytes with back-pressure (undici's
 * handler callbacks feed it; pulled one read at a time), built directly rather than through a node stream and
 * `Readable.toWeb`. `init.signal` aborts the request and its body.
 */
import type { Dispatcher } from 'undici';
import {
  answeredOn, isKeptConnection, locationOf, NULL_BODY_STATUSES, nodeStyleError, PinnedConnections, redirectRefused,
  type CheckedTarget, type NetworkPolicyOptions, type PinnedClient, type PinnedHandler, type PinnedPool,
} from './network-policy.js';

export interface AiFetchOptions {
  /** How long a URL's check is reused (ms). Default 1 000. */
  checkCacheMs?: number;
  /** An idle connection is closed within this (ms). Default 15 000. */
  idleSocketMs?: number;
  /** Name resolution (tests inject one). */
  resolve?: NetworkPolicyOptions['resolve'];
  /** Clock of the check cache (tests). Default `Date.now`. */
  now?: () => number;
}

/** A kept connection the server had closed: the request never reached it (node's codes, see `nodeStyleError`). */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** The process's clients by policy: the language models' and the speech clients' requests share one pool. */
const shared = new Map<boolean, AiFetch>();

/**
 * The AI services' policy fetch (see the file comment). Without `options`, every call with the same
 * `allowPrivateNetwork` answers a fetch over the same client and so the same keep-alive pools: a turn's model
 * request goes out on the connection its transcription just freed (the server's idle timeout, often 5 s, has
 * closed the model's own connection from the turn before). With `options` (tests), a client of its own.
 */
export function aiPolicyFetch(allowPrivateNetwork: boolean, options?: AiFetchOptions): typeof fetch {
  const policy = { allowPrivateNetwork, field: 'base_url', label: 'AI service base_url', ...(options?.resolve ? { resolve: options.resolve } : {}) };
  let client = options ? undefined : shared.get(allowPrivateNetwork);
  if (!client) {
    client = new AiFetch(policy, options);
    if (!options) shared.set(allowPrivateNetwork, client);
  }
  const c = client;
  return ((input: string | URL | Request, init: RequestInit = {}) => c.fetch(input, init)) as typeof fetch;
}

export class AiFetch {
  private readonly pins: PinnedConnections;

  constructor(
    private readonly policy: NetworkPolicyOptions,
    options: AiFetchOptions = {},
  ) {
    const { checkCacheMs, idleSocketMs, now } = options;
    this.pins = new PinnedConnections(policy, { checkCacheMs, idleSocketMs, now });
  }

  async fetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
    const url = input instanceof Request ? input.url : String(input);
    const headers: string[] = [];
    let contentType: string | undefined;
    for (const [name, value] of headerEntries(init.headers)) {
      const lower = name.toLowerCase();
      if (lower === 'host' || lower === 'content-length') continue;
      if (lower === 'content-type') contentType = value;
      headers.push(name, value);
    }
    const raw = init.body ?? null;
    let body: string | Buffer | undefined;
    if (raw === null) body = undefined;
    else if (typeof raw === 'string') {
      body = raw;
      if (contentType === undefined) headers.push('content-type', 'text/plain;charset=UTF-8');
    } else if (raw instanceof Uint8Array) body = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
    else if (raw instanceof ArrayBuffer) body = Buffer.from(raw);
    else if (raw instanceof URLSearchParams) {
      body = raw.toString();
      if (contentType === undefined) headers.push('content-type', 'application/x-www-form-urlencoded;charset=UTF-8');
    } else throw new TypeError('AI provider requests send string, binary or form bodies only');
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    const t = this.pins.fresh(url) ?? (await this.pins.check(url));
    const method = (init.method ?? 'GET').toUpperCase();
    const request: Dispatcher.DispatchOptions = { path: t.path, method, headers: ['host', t.hostHeader, ...headers], body: body ?? null };
    try {
      return await this.send(t, request, signal, undefined);
    } catch (err) {
      if (!(err as { staleSocket?: boolean }).staleSocket || signal?.aborted) throw err;
      // once more, on a connection of its own (closed when the answer ends)
      const single = this.pins.single(t);
      return this.send(t, request, signal, single);
    }
  }

  /** Closes every kept connection and forgets every check. */
  close(): void {
    this.pins.close();
  }

  /** The request; resolves at the answer's head. `single`: on that one-off client (the retry of a stale kept connection). */
  private send(t: CheckedTarget, request: Dispatcher.DispatchOptions, signal: AbortSignal | undefined, single: PinnedClient | undefined): Promise<Response> {
    return new Promise<Response>((resolve, reject) => {
      const handler = new FetchHandler(this.policy, t, request.method === 'HEAD', signal, resolve, reject, single);
      if (single) single.dispatch(request, handler);
      else this.pins.pool(t).dispatch(request, handler);
    });
  }
}

/**
 * One AI request's undici handler: resolves with a `Response` at the answer's head, whose body is a web stream fed
 * by the connection with back-pressure (undici pauses the socket while the stream's queue holds a chunk nobody
 * asked for yet; a read resumes it). Cancelling the body or aborting the signal aborts the request (the connection
 * is closed, never returned to the pool). A failure before any answer on a kept connection is flagged
 * `staleSocket` (sent once more by the caller).
 */
class FetchHandler implements Dispatcher.DispatchHandler, PinnedHandler {
  via?: PinnedClient;
  pool?: PinnedPool;
  private abort: ((err: Error) => void) | undefined;
  private kept = false;
  private answered = false;
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  private resume: (() => void) | undefined;
  /** onData said false: undici holds the connection's bytes until `resume`. */
  private paused = false;
  private done = false;
  private readonly onAbort = (): void => {
    const err = Object.assign(new Error('The operation was aborted', { cause: this.signal?.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
    this.abort?.(err);
    // the caller sees the signal's reason, as from node's http and from fetch
    this.fail(this.signal?.reason ?? err);
  };

  constructor(
    private readonly policy: NetworkPolicyOptions,
    private readonly t: CheckedTarget,
    private readonly head: boolean,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (r: Response) => void,
    private readonly reject: (e: unknown) => void,
    private readonly single: PinnedClient | undefined,
  ) {
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    // the request goes out now, on the client's connection: kept when an answer already ended on it
    this.kept = this.via !== undefined && isKeptConnection(this.via);
    if (this.signal?.aborted) abort(this.signal.reason as Error);
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText?: string): boolean {
    this.answered = true;
    this.resume = resume;
    if (statusCode >= 300 && statusCode < 400) {
      this.done = true; // the body is read to its end and dropped (the connection is kept)
      this.finish();
      this.reject(redirectRefused(this.policy.label ?? this.policy.field ?? 'url', statusCode, locationOf(rawHeaders), this.t.target.url, this.policy.field));
      return true;
    }
    const headers = new Headers();
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) headers.append(rawHeaders[i]!.toString('latin1'), rawHeaders[i + 1]!.toString('latin1'));
    let body: ReadableStream<Uint8Array> | null = null;
    if (NULL_BODY_STATUSES.has(statusCode) || this.head) this.done = true;
    else {
      body = new ReadableStream<Uint8Array>(
        {
          start: (c) => {
            this.controller = c;
          },
          pull: () => {
            // only when paused: a pull that an enqueue itself triggers (a read was waiting) runs inside undici's
            // parser, which must not be resumed from within itself
            if (!this.paused) return;
            this.paused = false;
            this.resume?.();
          },
          cancel: () => {
            this.done = true;
            this.finish();
            this.abort?.(Object.assign(new Error('The body was cancelled'), { name: 'AbortError', code: 'ABORT_ERR' }));
          },
        },
        { highWaterMark: 1 },
      );
    }
    const response = new Response(body, { status: statusCode, statusText: statusText ?? '', headers });
    Object.defineProperty(response, 'url', { value: this.t.target.url.href });
    this.resolve(response);
    return true;
  }

  onData(chunk: Buffer): boolean {
    const c = this.controller;
    // dropped: a null body, a refused redirect, a cancelled read; and the empty chunk undici's parser hands over
    // when it resumes after a pause (queued, it would pause again at once, and the resume repeat it: a loop)
    if (this.done || !c || chunk.length === 0) return true;
    c.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    // false pauses the connection until the stream's reader pulls
    if ((c.desiredSize ?? 0) > 0) return true;
    this.paused = true;
    return false;
  }

  onComplete(): void {
    if (this.via) {
      answeredOn(this.via);
      this.pool?.ended(this.via);
    }
    this.finish();
    if (!this.done) {
      this.done = true;
      this.controller?.close();
    }
  }

  onError(err: Error): void {
    if (this.via) this.pool?.ended(this.via);
    this.fail(this.signal?.aborted ? (this.signal.reason as Error) : nodeStyleError(err));
  }

  private fail(err: unknown): void {
    this.finish();
    if (!this.answered) {
      this.answered = true;
      const e = err as NodeJS.ErrnoException & { staleSocket?: boolean };
      // a kept connection the server closed as we wrote to it: the request never reached it
      if (this.kept && !this.signal?.aborted && (STALE_SOCKET_CODES.has(e.code ?? '') || e.message === 'socket hang up')) e.staleSocket = true;
      this.reject(e);
      return;
    }
    if (this.done) return;
    this.done = true;
    this.controller?.error(err);
  }

  private finish(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    if (this.single) this.single.close().catch(() => undefined);
  }
}

function* headerEntries(h: RequestInit['headers']): Generator<[string, string]> {
  if (!h) return;
  if (h instanceof Headers) {
    yield* h.entries();
    return;
  }
  if (Array.isArray(h)) {
    for (const [k, v] of h as Array<[string, string]>) yield [k, v];
    return;
  }
  for (const k in h) {
    const v = (h as Record<string, string | undefined>)[k];
    if (v !== undefined) yield [k, v];
  }
}
