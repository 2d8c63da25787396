/**
 * A fake Telnyx API v2 on loopback for the Call Control and number operations Callplane uses. It answers like
 * Telnyx: JSON in and out, `Authorization: Bearer <api key>`, resources wrapped in `data`, errors as
 * `{errors: [{code, title, detail}]}`, 429 with `Retry-After`. It also holds the account's Ed25519 webhook key
 * pair and signs webhooks the way Telnyx does (`telnyx-signature-ed25519` over `timestamp|body`).
 */
import type http from 'node:http';
import { generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import { FakeHttpServer, parseJsonBody, readBody } from '../fake-http-server.js';

export interface FakeTelnyxOptions {
  apiKey?: string;
  connectionId?: string;
  /** The application's webhook URL at start (null: none). */
  webhookEventUrl?: string | null;
  numbers?: { phoneNumber: string; connectionId?: string | null }[];
}

export interface RecordedTelnyxRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  json: Record<string, unknown> | null;
  authorized: boolean;
  status: number;
}

export interface FakeTelnyxCall {
  callControlId: string;
  callLegId: string;
  callSessionId: string;
  request: Record<string, unknown>;
  isAlive: boolean;
  answered: boolean;
  answerRequest?: Record<string, unknown>;
  /** The body of the last accepted transfer command. */
  transferRequest?: Record<string, unknown>;
}

export class FakeTelnyxServer extends FakeHttpServer<RecordedTelnyxRequest> {
  readonly calls = new Map<string, FakeTelnyxCall>();
  readonly numbers = new Map<string, { id: string; phoneNumber: string; connectionId: string | null }>();
  readonly apiKey: string;
  readonly connectionId: string;
  application: { id: string; applicationName: string; webhookEventUrl: string | null };
  /** base64 of the 32 raw public key bytes, as the Portal shows it. */
  readonly publicKeyBase64: string;

  private readonly privateKey: KeyObject;

  private constructor(opts: FakeTelnyxOptions) {
    super((err) => telnyxError('10007', 'Unexpected error', err.message));
    this.apiKey = opts.apiKey ?? `KEY${randomUUID().replace(/-/g, '').toUpperCase()}`;
    this.connectionId = opts.connectionId ?? String(1_000_000_000_000_000_000n + BigInt(Math.floor(Math.random() * 1e9)));
    this.application = { id: this.connectionId, applicationName: 'Callplane', webhookEventUrl: opts.webhookEventUrl ?? null };
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    this.privateKey = privateKey;
    this.publicKeyBase64 = (publicKey.export({ format: 'der', type: 'spki' }) as Buffer).subarray(-32).toString('base64');
    for (const n of opts.numbers ?? []) this.seedNumber(n.phoneNumber, n.connectionId === undefined ? null : n.connectionId);
  }

  /** Listening on loopback; its `url` takes the place of https://api.telnyx.com. */
  static async start(opts: FakeTelnyxOptions = {}): Promise<FakeTelnyxServer> {
    return new FakeTelnyxServer(opts).listen();
  }

  seedNumber(phoneNumber: string, connectionId: string | null = null): { id: string; phoneNumber: string; connectionId: string | null } {
    const n = { id: String(Math.floor(Math.random() * 1e15)), phoneNumber, connectionId };
    this.numbers.set(n.id, n);
    return n;
  }

  /** The next `count` requests answer 429 with `Retry-After` (seconds). */
  rateLimitNext(count: number, retryAfterSeconds?: number): void {
    this.planRateLimits(count, retryAfterSeconds, () => telnyxError('10011', 'Too many requests', 'Rate limit exceeded'));
  }

  /** The next `count` requests fail with `status` and a Telnyx error body. */
  failNext(count: number, status: number, code: string, title: string, detail: string): void {
    this.planFailures(count, status, () => telnyxError(code, title, detail));
  }

  /** A webhook as Telnyx sends it: the JSON text and its signature headers (timestamp defaults to now). */
  signWebhook(body: unknown, timestampSeconds = Math.floor(Date.now() / 1000)): { rawBody: string; headers: Record<string, string> } {
    const rawBody = JSON.stringify(body);
    const signature = sign(null, Buffer.from(`${timestampSeconds}|${rawBody}`, 'utf8'), this.privateKey).toString('base64');
    return { rawBody, headers: { 'content-type': 'application/json', 'telnyx-signature-ed25519': signature, 'telnyx-timestamp': String(timestampSeconds) } };
  }

  /** A Call Control event envelope (`{data: {record_type, event_type, id, occurred_at, payload}}`). */
  event(eventType: string, payload: Record<string, unknown>): Record<string, unknown> {
    return { data: { record_type: 'event', event_type: eventType, id: randomUUID(), occurred_at: new Date().toISOString(), payload: { connection_id: this.connectionId, ...payload } }, meta: { attempt: 1, delivered_to: 'fake' } };
  }

  /** A call arriving at one of the account's numbers (Telnyx then posts `call.initiated`); returns its call_control_id. */
  incomingCall(from: string, to: string): FakeTelnyxCall {
    const call: FakeTelnyxCall = { callControlId: `v3:${randomUUID().replace(/-/g, '')}`, callLegId: randomUUID(), callSessionId: randomUUID(), request: { from, to, direction: 'incoming' }, isAlive: true, answered: false };
    this.calls.set(call.callControlId, call);
    return call;
  }

  endCall(callControlId: string): void {
    const c = this.calls.get(callControlId);
    if (c) c.isAlive = false;
  }

  // ---------------------------------------------------------------------------------------------------------

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const text = await readBody(req);
    const json = parseJsonBody(text);
    const authorized = req.headers.authorization === `Bearer ${this.apiKey}`;
    const reply = this.log(res, { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), json, authorized, status: 0 });
    const planned = this.takePlanned(req.method ?? 'GET', url.pathname);
    if (planned) return reply(planned.status, planned.body, planned.headers);
    if (!authorized) return reply(401, telnyxError('10009', 'Authentication failed', 'The API key in the Authorization header is not valid'));
    if (text && json === null) return reply(400, telnyxError('10015', 'Bad Request', 'The request body is not valid JSON'));
    const body = json ?? {};
    const m = req.method ?? 'GET';
    const p = url.pathname;

    if (m === 'POST' && p === '/v2/calls') {
      for (const f of ['connection_id', 'to', 'from']) {
        if (typeof body[f] !== 'string' || !body[f]) return reply(422, telnyxError('10032', 'Invalid parameter', `The '${f}' parameter is required`));
      }
      if (body.connection_id !== this.connectionId) return reply(422, telnyxError('10010', 'Invalid connection', 'The connection_id does not belong to this account'));
      const call: FakeTelnyxCall = { callControlId: `v3:${randomUUID().replace(/-/g, '')}`, callLegId: randomUUID(), callSessionId: randomUUID(), request: body, isAlive: true, answered: false };
      this.calls.set(call.callControlId, call);
      return reply(200, { data: this.callResource(call) });
    }
    const action = /^\/v2\/calls\/([^/]+)\/actions\/(answer|hangup|transfer)$/.exec(p);
    if (m === 'POST' && action) {
      const call = this.calls.get(decodeURIComponent(action[1]!));
      if (!call) return reply(404, telnyxError('10005', 'Resource not found', 'Call not found'));
      if (!call.isAlive) return reply(422, telnyxError('90018', 'Call has already ended', 'This call is no longer active and can\'t receive commands.'));
      if (action[2] === 'transfer') {
        // Telnyx checks `to` (E.164 or a SIP URI) before accepting; the B leg's fate arrives later as webhooks
        if (typeof body.to !== 'string' || !/^(\+[1-9]\d{1,14}|sips?:\S+)$/.test(body.to)) {
          return reply(422, telnyxError('10032', 'Invalid parameter', "The 'to' parameter must be a DID in +E.164 format or a SIP URI"));
        }
        if (!call.answered && call.request.direction === 'incoming') {
          return reply(422, telnyxError('90015', 'Call not answered yet', 'This call must be answered before it can be transferred.'));
        }
        call.transferRequest = body;
      } else if (action[2] === 'answer') {
        call.answered = true;
        call.answerRequest = body;
      } else {
        call.isAlive = false;
      }
      return reply(200, { data: { result: 'ok' } });
    }
    const getCall = /^\/v2\/calls\/([^/]+)$/.exec(p);
    if (m === 'GET' && getCall) {
      const call = this.calls.get(decodeURIComponent(getCall[1]!));
      if (!call) return reply(404, telnyxError('10005', 'Resource not found', 'Call not found'));
      return reply(200, { data: this.callResource(call) });
    }
    if (m === 'GET' && p === '/v2/phone_numbers') {
      const wanted = url.searchParams.get('filter[phone_number]');
      const list = [...this.numbers.values()].filter((n) => !wanted || n.phoneNumber === wanted);
      return reply(200, { data: list.map((n) => numberResource(n)), meta: { total_results: list.length, page_number: 1, page_size: 20, total_pages: 1 } });
    }
    const num = /^\/v2\/phone_numbers\/([^/]+)$/.exec(p);
    if (m === 'PATCH' && num) {
      const n = this.numbers.get(decodeURIComponent(num[1]!));
      if (!n) return reply(404, telnyxError('10005', 'Resource not found', 'Phone number not found'));
      if ('connection_id' in body) n.connectionId = typeof body.connection_id === 'string' && body.connection_id ? body.connection_id : null;
      return reply(200, { data: numberResource(n) });
    }
    const app = /^\/v2\/call_control_applications\/([^/]+)$/.exec(p);
    if (app) {
      if (decodeURIComponent(app[1]!) !== this.application.id) return reply(404, telnyxError('10005', 'Resource not found', 'Call control application not found'));
      if (m === 'PATCH') {
        if (typeof body.application_name !== 'string' || typeof body.webhook_event_url !== 'string') {
          return reply(422, telnyxError('10032', 'Invalid parameter', 'application_name and webhook_event_url are required'));
        }
        this.application = { ...this.application, applicationName: body.application_name, webhookEventUrl: body.webhook_event_url };
      } else if (m !== 'GET') {
        return reply(405, telnyxError('10015', 'Bad Request', 'Method not allowed'));
      }
      return reply(200, { data: { record_type: 'call_control_application', id: this.application.id, application_name: this.application.applicationName, webhook_event_url: this.application.webhookEventUrl ?? '', webhook_api_version: '2', active: true } });
    }
    return reply(404, telnyxError('10005', 'Resource not found', `No route ${m} ${p}`));
  }

  private callResource(call: FakeTelnyxCall): Record<string, unknown> {
    return { record_type: 'call', call_control_id: call.callControlId, call_leg_id: call.callLegId, call_session_id: call.callSessionId, is_alive: call.isAlive, call_duration: call.isAlive ? 0 : 12 };
  }
}

function numberResource(n: { id: string; phoneNumber: string; connectionId: string | null }): Record<string, unknown> {
  return { record_type: 'phone_number', id: n.id, phone_number: n.phoneNumber, connection_id: n.connectionId ?? '', status: 'active' };
}

function telnyxError(code: string, title: string, detail: string): { errors: Array<Record<string, string>> } {
  return { errors: [{ code, title, detail }] };
}
