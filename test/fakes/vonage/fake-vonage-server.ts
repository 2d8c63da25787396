/**
 * A fake Vonage on loopback: the Voice API (POST/PUT/GET /v1/calls, RS256 application JWT checked against the
 * application's public key), the Applications API (GET /v2/applications/{id}, Basic auth) and the Numbers API
 * (GET /account/numbers, POST /number/update, api_key/api_secret parameters), answering with Vonage's shapes
 * (`{type, title, detail}` / `{"error-code", "error-code-label"}`), 429 with `Retry-After`. It owns the
 * application's RSA key pair and the account's signature secret, and signs webhooks as Vonage does (HS256 JWT
 * with `payload_hash`).
 */
import type http from 'node:http';
import { createHash, createHmac, generateKeyPairSync, randomBytes, randomUUID, verify, type KeyObject } from 'node:crypto';
import { basicAuthHeader, FakeHttpServer, parseJsonBody, readBody } from '../fake-http-server.js';

export interface FakeVonageOptions {
  numbers?: { msisdn: string; country?: string; appId?: string | null }[];
  /** The application's voice answer URL at start. */
  answerUrl?: string | null;
  answerMethod?: 'GET' | 'POST';
  signedCallbacks?: boolean;
}

export interface RecordedVonageRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  json: Record<string, unknown> | null;
  form: Record<string, string>;
  authorized: boolean;
  status: number;
}

export interface FakeVonageCall {
  uuid: string;
  conversationUuid: string;
  request: Record<string, unknown>;
  status: string;
  duration?: number;
  /** The body of the last accepted transfer (`{action: "transfer", destination}`). */
  transfer?: Record<string, unknown>;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export class FakeVonageServer extends FakeHttpServer<RecordedVonageRequest> {
  readonly calls = new Map<string, FakeVonageCall>();
  readonly numbers = new Map<string, { msisdn: string; country: string; appId: string | null }>();
  readonly applicationId = randomUUID();
  readonly apiKey = randomBytes(4).toString('hex');
  readonly apiSecret = randomBytes(8).toString('hex');
  readonly signatureSecret = randomBytes(24).toString('hex');
  /** PKCS#8 PEM, as the Dashboard downloads it. */
  readonly privateKeyPem: string;
  application: { answerUrl: string | null; answerMethod: string; signedCallbacks: boolean };

  private readonly publicKey: KeyObject;

  private constructor(opts: FakeVonageOptions) {
    super((err) => ({ type: 'about:blank', title: 'Internal Server Error', detail: err.message }));
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKey = publicKey;
    this.privateKeyPem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    this.application = { answerUrl: opts.answerUrl ?? null, answerMethod: opts.answerMethod ?? 'GET', signedCallbacks: opts.signedCallbacks ?? true };
    for (const n of opts.numbers ?? []) this.numbers.set(n.msisdn, { msisdn: n.msisdn, country: n.country ?? 'US', appId: n.appId ?? null });
  }

  static async start(opts: FakeVonageOptions = {}): Promise<FakeVonageServer> {
    return new FakeVonageServer(opts).listen();
  }

  rateLimitNext(count: number, retryAfterSeconds?: number): void {
    this.planRateLimits(count, retryAfterSeconds, () => ({ type: 'https://developer.nexmo.com/api-errors#throttled', title: 'Too Many Requests', detail: 'Rate limit hit' }));
  }

  failNext(count: number, status: number, title: string, detail: string): void {
    this.planFailures(count, status, () => ({ type: `https://developer.nexmo.com/api-errors#${status}`, title, detail }));
  }

  /**
   * A webhook as Vonage sends it: the JSON text and `Authorization: Bearer <HS256 JWT>` whose claims carry the
   * account, the application and the body's SHA-256 (`payload_hash`). `claims` overrides or adds claims.
   */
  signWebhook(body: unknown, opts: { secret?: string; claims?: Record<string, unknown> } = {}): { rawBody: string; headers: Record<string, string> } {
    const rawBody = JSON.stringify(body);
    const now = Math.floor(Date.now() / 1000);
    const claims = { iat: now, jti: randomUUID(), iss: 'Vonage', payload_hash: createHash('sha256').update(rawBody).digest('hex'), api_key: this.apiKey, application_id: this.applicationId, ...opts.claims };
    const head = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const payload = b64url(JSON.stringify(claims));
    const sig = createHmac('sha256', opts.secret ?? this.signatureSecret).update(`${head}.${payload}`).digest('base64url');
    return { rawBody, headers: { 'content-type': 'application/json', authorization: `Bearer ${head}.${payload}.${sig}` } };
  }

  setCallStatus(uuid: string, status: string, duration?: number): void {
    const c = this.calls.get(uuid);
    if (!c) throw new Error(`fake Vonage: no call ${uuid}`);
    c.status = status;
    if (duration !== undefined) c.duration = duration;
  }

  // ---------------------------------------------------------------------------------------------------------

  /** True for a valid RS256 JWT of this application (signature, application_id, exp, jti). */
  private jwtValid(authorization: string | undefined): boolean {
    const m = /^Bearer (.+)$/.exec(authorization ?? '');
    const parts = m?.[1]?.split('.') ?? [];
    if (parts.length !== 3) return false;
    try {
      const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString()) as { alg?: string };
      const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as Record<string, unknown>;
      if (header.alg !== 'RS256') return false;
      if (!verify('sha256', Buffer.from(`${parts[0]}.${parts[1]}`), this.publicKey, Buffer.from(parts[2]!, 'base64url'))) return false;
      const now = Math.floor(Date.now() / 1000);
      return claims.application_id === this.applicationId && typeof claims.jti === 'string' && typeof claims.iat === 'number' && (typeof claims.exp !== 'number' || claims.exp > now);
    } catch {
      return false;
    }
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const text = await readBody(req);
    const type = String(req.headers['content-type'] ?? '');
    const json = type.includes('json') ? parseJsonBody(text) : null;
    const form: Record<string, string> = !type.includes('json') && type.includes('x-www-form-urlencoded') ? Object.fromEntries(new URLSearchParams(text)) : {};
    const query = Object.fromEntries(url.searchParams);
    const p = url.pathname;
    const m = req.method ?? 'GET';
    const isVoice = p.startsWith('/v1/calls');
    const isApps = p.startsWith('/v2/applications/');
    const basic = basicAuthHeader(this.apiKey, this.apiSecret);
    const params = { ...query, ...form };
    const authorized = isVoice ? this.jwtValid(req.headers.authorization) : isApps ? req.headers.authorization === basic : params.api_key === this.apiKey && params.api_secret === this.apiSecret;
    const reply = this.log(res, { method: m, path: p, query, json, form, authorized, status: 0 });
    const planned = this.takePlanned(m, p);
    if (planned) return reply(planned.status, planned.body, planned.headers);
    if (!authorized) {
      if (isVoice || isApps) return reply(401, { type: 'https://developer.nexmo.com/api-errors#unauthorized', title: 'Invalid credentials supplied', detail: 'You did not provide correct credentials.' });
      return reply(401, { 'error-code': '401', 'error-code-label': 'authentication failed' });
    }

    if (m === 'POST' && p === '/v1/calls') {
      const body = json ?? {};
      const to = Array.isArray(body.to) ? (body.to[0] as Record<string, unknown> | undefined) : undefined;
      const from = body.from as Record<string, unknown> | undefined;
      const invalid: Array<{ name: string; reason: string }> = [];
      if (!to || to.type !== 'phone' || !/^\d{7,15}$/.test(String(to.number ?? ''))) invalid.push({ name: 'to', reason: 'must be a phone endpoint with 7-15 digits' });
      if (!from || from.type !== 'phone' || !/^\d{7,15}$/.test(String(from.number ?? ''))) invalid.push({ name: 'from', reason: 'must be a phone endpoint with 7-15 digits' });
      if (!Array.isArray(body.ncco) && !Array.isArray(body.answer_url)) invalid.push({ name: 'ncco', reason: 'ncco or answer_url is required' });
      if (invalid.length) return reply(400, { type: 'https://developer.nexmo.com/api-errors/voice#validation', title: 'Bad Request', detail: 'The request failed due to validation errors', invalid_parameters: invalid });
      const call: FakeVonageCall = { uuid: randomUUID(), conversationUuid: `CON-${randomUUID()}`, request: body, status: 'started' };
      this.calls.set(call.uuid, call);
      return reply(201, { uuid: call.uuid, status: 'started', direction: 'outbound', conversation_uuid: call.conversationUuid });
    }
    const one = /^\/v1\/calls\/([^/]+)$/.exec(p);
    if (one) {
      const call = this.calls.get(decodeURIComponent(one[1]!));
      if (!call) return reply(404, { type: 'https://developer.nexmo.com/api-errors#not-found', title: 'Not Found', detail: 'Call not found' });
      if (m === 'GET') {
        return reply(200, { uuid: call.uuid, conversation_uuid: call.conversationUuid, status: call.status, direction: 'outbound', to: (call.request.to as unknown[])[0], from: call.request.from, ...(call.duration !== undefined ? { duration: String(call.duration) } : {}) });
      }
      if (m === 'PUT' && json?.action === 'transfer') {
        // a live leg moves to a new NCCO (inline, or fetched from a URL)
        const destination = (json.destination ?? {}) as Record<string, unknown>;
        if (destination.type !== 'ncco' || (!Array.isArray(destination.ncco) && !Array.isArray(destination.url))) {
          return reply(400, { type: 'https://developer.nexmo.com/api-errors/voice#validation', title: 'Bad Request', detail: 'destination must be {type: "ncco", ncco: [...]} or {type: "ncco", url: [...]}' });
        }
        if (call.status !== 'answered') {
          return reply(400, { type: 'https://developer.nexmo.com/api-errors/voice#bad-request', title: 'Bad Request', detail: `Call is not in progress (status ${call.status})` });
        }
        call.transfer = json;
        return reply(204);
      }
      if (m === 'PUT') {
        if (json?.action !== 'hangup') return reply(400, { type: 'about:blank', title: 'Bad Request', detail: 'unsupported action' });
        if (!['completed', 'busy', 'cancelled', 'failed', 'rejected', 'timeout', 'unanswered', 'machine'].includes(call.status)) {
          call.status = call.status === 'answered' ? 'completed' : 'cancelled';
        }
        return reply(204);
      }
    }
    const app = /^\/v2\/applications\/([^/]+)$/.exec(p);
    if (m === 'GET' && app) {
      if (decodeURIComponent(app[1]!) !== this.applicationId) return reply(404, { type: 'about:blank', title: 'Not Found', detail: 'Application not found' });
      const webhooks: Record<string, unknown> = { event_url: { address: 'https://example.com/events', http_method: 'POST' } };
      if (this.application.answerUrl) webhooks.answer_url = { address: this.application.answerUrl, http_method: this.application.answerMethod };
      return reply(200, { id: this.applicationId, name: 'Callplane', capabilities: { voice: { webhooks, signed_callbacks: this.application.signedCallbacks } }, keys: { public_key: 'PEM' } });
    }
    if (m === 'GET' && p === '/account/numbers') {
      const pattern = query.pattern ?? '';
      const list = [...this.numbers.values()].filter((n) => n.msisdn.startsWith(pattern));
      return reply(200, { count: list.length, numbers: list.map((n) => ({ country: n.country, msisdn: n.msisdn, type: 'mobile-lvn', features: ['VOICE', 'SMS'], ...(n.appId ? { app_id: n.appId } : {}) })) });
    }
    if (m === 'POST' && p === '/number/update') {
      const n = this.numbers.get(form.msisdn ?? '');
      if (!n || n.country !== form.country) return reply(420, { 'error-code': '420', 'error-code-label': 'Invalid parameters' });
      n.appId = form.app_id ? form.app_id : null;
      return reply(200, { 'error-code': '200', 'error-code-label': 'success' });
    }
    return reply(404, { type: 'about:blank', title: 'Not Found', detail: `No route ${m} ${p}` });
  }
}
