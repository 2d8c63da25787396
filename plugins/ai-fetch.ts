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
 * - **Keep-alive connections per origin and checked address set**, up to `maxFreeSockets` (default 256) idle ones,
 *   so the connections of 50 calls' requests in flight together are all reused by the next wave (node's default
 *   pool of 16 closed the rest, and every wave opened new connections). When a new check gives other addresses,
 *   requests go to a new pool; the old pool's idle connections are closed. An idle connection is closed by a
 *   sweep within `idleSocketMs` (default 15 s) of its last request, without a socket timer per request.
 * - **A request sent on a kept connection that the server closed meanwhile** (ECONNRESET / EPIPE / a hang-up
 *   before any answer: the server's keep-alive timeout crossed it) is sent once more on a new connection, as
 *   node's documentation advises; the server never saw it. Any other failure rejects with the socket's error.
 *
 * The answer is a WHATWG `Response` whose body streams the socket's bytes with back-pressure (pulled one read at
 * a time), built directly rather than through `Readable.toWeb`, whose adapter (end-of-stream watchers, a
 * listener set per stream) cost more than the request itself. `init.signal` aborts the request and its body.
 */
import http from 'node:http';
import https from 'node:https';
import { abortWith, NULL_BODY_STATUSES, PinnedConnections, redirectRefused, type CheckedTarget, type NetworkPolicyOptions } from './network-policy.js';

export interface AiFetchOptions {
  /** How long a URL's check is reused (ms). Default 1 000. */
  checkCacheMs?: number;
  /** Idle keep-alive connections kept per origin and address set. Default 256. */
  maxFreeSockets?: number;
  /** An idle connection is closed within this (ms). Default 15 000. */
  idleSocketMs?: number;
  /** Name resolution (tests inject one). */
  resolve?: NetworkPolicyOptions['resolve'];
  /** Clock of the check cache (tests). Default `Date.now`. */
  now?: () => number;
}


/** A kept connection the server had closed: the request never reached it. */
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
    this.pins = new PinnedConnections(policy, { checkCacheMs, idleSocketMs, now, maxFreeSockets: options.maxFreeSockets ?? 256 });
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
    if (body !== undefined) headers.push('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.length));
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    const t = this.pins.fresh(url) ?? (await this.pins.check(url));
    const method = (init.method ?? 'GET').toUpperCase();
    let res: http.IncomingMessage;
    try {
      res = await this.send(t, method, headers, body, signal);
    } catch (err) {
      if (!(err as { staleSocket?: boolean }).staleSocket || signal?.aborted) throw err;
      res = await this.send(t, method, headers, body, signal, true);
    }
    return this.response(t, res, method, signal);
  }

  /** Closes every kept connection and forgets every check. */
  close(): void {
    this.pins.close();
  }

  /** The request; resolves at the answer's head. `fresh`: on a new connection (the retry of a stale one). */
  private send(t: CheckedTarget, method: string, headers: string[], body: string | Buffer | undefined, signal: AbortSignal | undefined, fresh = false): Promise<http.IncomingMessage> {
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = (t.secure ? https.request : http.request)({
        protocol: t.target.url.protocol, hostname: t.host, port: t.port, path: t.path, method,
        headers: ['Host', t.hostHeader, ...headers],
        lookup: t.target.lookup,
        agent: fresh ? false : this.pins.agent(t.agentKey, t.secure),
        ...(t.servername ? { servername: t.servername } : {}),
      });
      let answered = false;
      if (signal) abortWith(signal, req);
      req.once('response', (res) => {
        answered = true;
        resolve(res);
      });
      req.once('error', (err: NodeJS.ErrnoException) => {
        if (signal?.aborted) return reject(signal.reason);
        // a kept connection the server closed as we wrote to it: the request never reached it
        if (!answered && req.reusedSocket && (STALE_SOCKET_CODES.has(err.code ?? '') || err.message === 'socket hang up')) {
          return reject(Object.assign(err, { staleSocket: true }));
        }
        reject(err);
      });
      req.end(body);
    });
  }

  private response(t: CheckedTarget, res: http.IncomingMessage, method: string, signal: AbortSignal | undefined): Response {
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400) {
      res.resume();
      throw redirectRefused(this.policy.label ?? this.policy.field ?? 'url', status, res.headers.location, t.target.url, this.policy.field);
    }
    const headers = new Headers();
    const rawHeaders = res.rawHeaders;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) headers.append(rawHeaders[i]!, rawHeaders[i + 1]!);
    let body: ReadableStream<Uint8Array> | null = null;
    if (NULL_BODY_STATUSES.has(status) || method === 'HEAD') res.resume();
    else body = bodyStream(res, signal);
    const response = new Response(body, { status, statusText: res.statusMessage ?? '', headers });
    Object.defineProperty(response, 'url', { value: t.target.url.href });
    return response;
  }
}

/**
 * The socket's bytes as a byte-oriented web stream, pulled one read at a time: the message is paused whenever
 * the stream's queue holds a chunk nobody asked for yet. Cancelling (a reader's `cancel`) destroys the message.
 */
function bodyStream(res: http.IncomingMessage, signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let done = false;
  const onAbort = (): void => {
    res.destroy(Object.assign(new Error('The operation was aborted', { cause: signal?.reason }), { name: 'AbortError', code: 'ABORT_ERR' }));
  };
  const finish = (): void => {
    done = true;
    signal?.removeEventListener('abort', onAbort);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        if (signal) {
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        }
        res.on('data', (chunk: Buffer) => {
          if (done) return; // cancelled: what was already read is dropped
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) res.pause();
        });
        res.once('end', () => {
          if (done) return;
          finish();
          controller.close();
        });
        res.once('error', (err) => {
          if (done) return;
          finish();
          controller.error(signal?.aborted ? signal.reason : err);
        });
        res.once('close', () => {
          // closed before its end (the connection cut): the reader must not wait forever
          if (done) return;
          finish();
          controller.error(signal?.aborted ? signal.reason : Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
        });
      },
      pull() {
        res.resume();
      },
      cancel() {
        finish();
        res.destroy();
      },
    },
    { highWaterMark: 1 },
  );
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
