/**
 * The HTTP plumbing every fake provider API in test/fakes shares: a node:http server on an ephemeral loopback
 * port, the request log (`requests`, each entry's `status` set when it is answered), planned failures
 * (`failNext`/`rateLimitNext` of the fakes, optionally limited to matching requests), JSON answers, and the
 * body/auth helpers. Each fake keeps its own routes, auth rules, the order of its checks and its error shapes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Answers one logged request: sets its `status` and sends `body` as JSON (no body when undefined or 204). */
export type Reply = (status: number, body?: unknown, headers?: Record<string, string>) => void;

export interface PlannedFailure {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  /** Only requests it matches take it; any request when absent. */
  match?: (method: string, path: string) => boolean;
}

export abstract class FakeHttpServer<R extends { status: number }> {
  readonly requests: R[] = [];

  protected readonly server: http.Server;
  private readonly planned: PlannedFailure[] = [];

  /** `internalError` is the body of the 500 answered when `handle` throws. */
  protected constructor(internalError: (err: Error) => unknown) {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => sendJson(res, 500, internalError(err as Error)));
    });
  }

  protected abstract handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void>;

  /** Listens on an ephemeral port of 127.0.0.1. */
  protected async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** `http://127.0.0.1:<port>`: the client's base URL in place of the provider's. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Plans `count` failures; `body` is called once for each. */
  protected planFailures(count: number, status: number, body: () => unknown, headers: Record<string, string> = {}, match?: PlannedFailure['match']): void {
    for (let i = 0; i < count; i++) this.planned.push({ status, body: body(), headers, match });
  }

  /** Plans `count` 429 answers, with `Retry-After: <seconds>` when given. */
  protected planRateLimits(count: number, retryAfterSeconds: number | undefined, body: () => unknown): void {
    this.planFailures(count, 429, body, retryAfterSeconds === undefined ? {} : { 'Retry-After': String(retryAfterSeconds) });
  }

  /** Takes the first planned failure this request matches, if any. */
  protected takePlanned(method: string, path: string): PlannedFailure | undefined {
    const i = this.planned.findIndex((f) => !f.match || f.match(method, path));
    return i >= 0 ? this.planned.splice(i, 1)[0] : undefined;
  }

  /** Adds `entry` to `requests` and returns the reply that answers it. */
  protected log(res: http.ServerResponse, entry: R): Reply {
    this.requests.push(entry);
    return (status, body, headers = {}) => {
      entry.status = status;
      sendJson(res, status, body, headers);
    };
  }
}

/** JSON with its length, or no body when `body` is undefined or the status is 204. */
export function sendJson(res: http.ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined || status === 204) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A JSON body as an object; null when empty or not JSON. */
export function parseJsonBody(text: string): Record<string, unknown> | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** Query or form parameters; a repeated key becomes an array. */
export function multiMap(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of params) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** `Basic <base64 user:password>`, the exact header a client sends. */
export function basicAuthHeader(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** The decoded `user:password` of a Basic Authorization header; undefined for any other header. */
export function basicCredentials(header: string | undefined): string | undefined {
  return header?.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : undefined;
}
