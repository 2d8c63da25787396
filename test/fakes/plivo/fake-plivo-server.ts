/**
 * A fake Plivo Voice API v1 on loopback for the call, number and application operations Callplane uses. It
 * answers like Plivo: resources under `/v1/Account/{auth_id}/` ending in `/`, HTTP Basic `auth_id:auth_token`,
 * JSON in and out, `{api_id, error}` errors, 201 `{request_uuid}` for a call request, 204 for deletes, 429 with
 * `Retry-After` on demand. It also signs webhooks the way Plivo does (`X-Plivo-Signature-V3` + nonce), with its
 * own implementation of the algorithm so the provider's verifier is checked against an independent signer.
 */
import type http from 'node:http';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { basicAuthHeader, FakeHttpServer, parseJsonBody, readBody } from '../fake-http-server.js';

export interface FakePlivoOptions {
  authId?: string;
  authToken?: string;
  /** Applications at start: id → answer URL. */
  applications?: Record<string, { answerUrl: string; appName?: string }>;
  /** Rented numbers (digits, Plivo's form, or E.164). */
  numbers?: { number: string; appId?: string | null }[];
}

export interface RecordedPlivoRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  json: Record<string, unknown> | null;
  authorized: boolean;
  status: number;
}

export interface FakePlivoCall {
  requestUuid: string;
  callUuid: string;
  request: Record<string, unknown>;
  state: 'queued' | 'ringing' | 'in-progress' | 'ended';
  answerTime: string | null;
  hangupCause: string | null;
  durationSeconds: number;
  /** The body of the last accepted transfer (`legs`, `aleg_url`, `aleg_method`). */
  transfer?: Record<string, unknown>;
}

export class FakePlivoServer extends FakeHttpServer<RecordedPlivoRequest> {
  /** By request_uuid. */
  readonly calls = new Map<string, FakePlivoCall>();
  readonly numbers = new Map<string, { number: string; appId: string | null }>();
  readonly applications = new Map<string, { appId: string; appName: string; answerUrl: string; answerMethod: string }>();
  readonly authId: string;
  readonly authToken: string;

  private constructor(opts: FakePlivoOptions) {
    super((err) => ({ api_id: randomUUID(), error: err.message }));
    this.authId = opts.authId ?? `MA${randomBytes(9).toString('hex').toUpperCase()}`;
    this.authToken = opts.authToken ?? randomBytes(20).toString('base64url');
    for (const [appId, a] of Object.entries(opts.applications ?? {})) {
      this.applications.set(appId, { appId, appName: a.appName ?? 'Callplane', answerUrl: a.answerUrl, answerMethod: 'POST' });
    }
    for (const n of opts.numbers ?? []) this.numbers.set(digits(n.number), { number: digits(n.number), appId: n.appId ?? null });
  }

  /** Listening on loopback; its `url` takes the place of https://api.plivo.com. */
  static async start(opts: FakePlivoOptions = {}): Promise<FakePlivoServer> {
    return new FakePlivoServer(opts).listen();
  }

  /** The next `count` requests answer 429 with `Retry-After` (seconds). */
  rateLimitNext(count: number, retryAfterSeconds?: number): void {
    this.planRateLimits(count, retryAfterSeconds, () => ({ api_id: randomUUID(), error: 'too many requests' }));
  }

  /** The next `count` requests fail with `status` and Plivo's error body. */
  failNext(count: number, status: number, error: unknown): void {
    this.planFailures(count, status, () => ({ api_id: randomUUID(), error }));
  }

  /** The callee picks up: the call gets its CallUUID state `in-progress`. */
  answer(requestUuid: string): FakePlivoCall {
    const call = this.calls.get(requestUuid);
    if (!call) throw new Error(`no call request ${requestUuid}`);
    call.state = 'in-progress';
    call.answerTime = new Date().toISOString();
    return call;
  }

  /** The call ends with a hang-up cause and talk time. */
  end(requestUuid: string, hangupCause = 'NORMAL_CLEARING', durationSeconds = 0): FakePlivoCall {
    const call = this.calls.get(requestUuid);
    if (!call) throw new Error(`no call request ${requestUuid}`);
    call.state = 'ended';
    call.hangupCause = hangupCause;
    call.durationSeconds = durationSeconds;
    return call;
  }

  /**
   * Plivo's V3 signature headers for a webhook to `url` (the exact URL Plivo calls) with these form params
   * (POST) — computed here independently of the provider's code.
   */
  signWebhook(url: string, params: Record<string, string>, method: 'POST' | 'GET' = 'POST', nonce = randomBytes(10).toString('hex')): Record<string, string> {
    const u = new URL(url);
    const byName = (entries: Array<[string, string]>) => entries.sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
    const query = byName([...u.searchParams.entries()]).map(([k, v]) => `${k}=${v}`).join('&');
    const form = method === 'POST' ? byName(Object.entries(params)).map(([k, v]) => k + v).join('') : '';
    const hasForm = method === 'POST' && Object.keys(params).length > 0;
    const parts = [`${u.origin}${u.pathname}`];
    if (query || hasForm) parts.push('?', query);
    if (query && hasForm) parts.push('.');
    parts.push(form, '.', nonce);
    const signature = createHmac('sha256', this.authToken).update(parts.join('')).digest('base64');
    return { 'x-plivo-signature-v3': signature, 'x-plivo-signature-v3-nonce': nonce, 'x-plivo-signature-ma-v3': 'unused' };
  }

  // ---------------------------------------------------------------------------------------------------------

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const text = await readBody(req);
    const json = parseJsonBody(text);
    const authorized = req.headers.authorization === basicAuthHeader(this.authId, this.authToken);
    const reply = this.log(res, { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), json, authorized, status: 0 });
    const error = (status: number, message: unknown) => reply(status, { api_id: randomUUID(), error: message });
    const planned = this.takePlanned(req.method ?? 'GET', url.pathname);
    if (planned) return reply(planned.status, planned.body, planned.headers);
    if (!authorized) return error(401, 'Authentication credentials invalid');
    if (text && json === null) return error(400, 'invalid JSON body');
    const prefix = `/v1/Account/${this.authId}/`;
    if (!url.pathname.startsWith(prefix)) return error(404, 'not found');
    const p = url.pathname.slice(prefix.length - 1);
    const m = req.method ?? 'GET';
    const body = json ?? {};

    if (m === 'GET' && p === '/') {
      // the account of these credentials (Plivo's GET /v1/Account/{auth_id}/): the credentials check reads it
      return reply(200, { api_id: randomUUID(), account_type: 'standard', auth_id: this.authId, name: 'Fake Plivo account', cash_credits: '10.00000', resource_uri: prefix });
    }
    if (m === 'POST' && p === '/Call/') {
      for (const f of ['from', 'to', 'answer_url']) {
        if (typeof body[f] !== 'string' || !body[f]) return error(400, { [f]: ['This field is required.'] });
      }
      if (!/^\d+$/.test(String(body.from)) || !/^\d+$/.test(String(body.to))) return error(400, 'invalid from or to number');
      const call: FakePlivoCall = { requestUuid: randomUUID(), callUuid: randomUUID(), request: body, state: 'ringing', answerTime: null, hangupCause: null, durationSeconds: 0 };
      this.calls.set(call.requestUuid, call);
      return reply(201, { api_id: randomUUID(), message: 'call fired', request_uuid: call.requestUuid });
    }
    const callPath = /^\/Call\/([^/]+)\/$/.exec(p);
    if (callPath) {
      const id = decodeURIComponent(callPath[1]!);
      const call = [...this.calls.values()].find((c) => c.callUuid === id);
      if (m === 'POST') {
        // Transfer a call: Plivo fetches the new XML from aleg_url (and/or bleg_url) for a live call
        if (!call || call.state !== 'in-progress') return error(404, 'call not found');
        const legs = body.legs ?? 'aleg';
        if (legs !== 'aleg' && legs !== 'bleg' && legs !== 'both') return error(400, { legs: ['legs must be aleg, bleg or both'] });
        if ((legs === 'aleg' || legs === 'both') && (typeof body.aleg_url !== 'string' || !/^https?:\/\//.test(body.aleg_url))) {
          return error(400, 'aleg_url is required and must be a valid URL when legs is aleg or both');
        }
        call.transfer = body;
        return reply(202, { api_id: randomUUID(), message: 'call transferred' });
      }
      if (m === 'DELETE') {
        if (!call || call.state !== 'in-progress') return error(404, 'call not found');
        call.state = 'ended';
        call.hangupCause = 'NORMAL_CLEARING';
        return reply(204);
      }
      if (m === 'GET' && url.searchParams.get('status') === 'live') {
        if (!call || call.state === 'ended' || call.state === 'queued') return error(404, 'call not found');
        return reply(200, { api_id: randomUUID(), call_uuid: call.callUuid, call_status: call.state, direction: 'outbound', from: call.request.from, to: call.request.to, request_uuid: call.requestUuid });
      }
      if (m === 'GET') {
        if (!call || call.state !== 'ended') return error(404, 'call not found');
        return reply(200, {
          api_id: randomUUID(), call_uuid: call.callUuid, call_direction: 'outbound', call_duration: call.durationSeconds, bill_duration: call.durationSeconds,
          answer_time: call.answerTime, end_time: new Date().toISOString(), hangup_cause_name: call.hangupCause, hangup_cause_code: call.hangupCause === 'NORMAL_CLEARING' ? 4000 : 3000,
          from_number: call.request.from, to_number: call.request.to, call_state: call.answerTime ? 'ANSWER' : 'NO_ANSWER',
        });
      }
    }
    const requestPath = /^\/Request\/([^/]+)\/$/.exec(p);
    if (m === 'DELETE' && requestPath) {
      const call = this.calls.get(decodeURIComponent(requestPath[1]!));
      if (!call || (call.state !== 'queued' && call.state !== 'ringing')) return error(404, 'call request not found');
      call.state = 'ended';
      call.hangupCause = 'ORIGINATOR_CANCEL';
      return reply(204);
    }
    const numberPath = /^\/Number\/([^/]+)\/$/.exec(p);
    if (numberPath) {
      const n = this.numbers.get(decodeURIComponent(numberPath[1]!));
      if (!n) return error(404, 'number not found');
      if (m === 'POST') {
        if ('app_id' in body) {
          const appId = typeof body.app_id === 'string' && body.app_id ? body.app_id : null;
          if (appId && !this.applications.has(appId)) return error(400, 'app_id not found');
          n.appId = appId;
        }
        return reply(202, { api_id: randomUUID(), message: 'changed' });
      }
      return reply(200, {
        api_id: randomUUID(), number: n.number, alias: null, voice_enabled: true,
        application: n.appId ? `/v1/Account/${this.authId}/Application/${n.appId}/` : null,
        resource_uri: `/v1/Account/${this.authId}/Number/${n.number}/`,
      });
    }
    const appPath = /^\/Application\/([^/]+)\/$/.exec(p);
    if (appPath) {
      const app = this.applications.get(decodeURIComponent(appPath[1]!));
      if (!app) return error(404, 'application not found');
      if (m === 'POST') {
        if (typeof body.answer_url === 'string') app.answerUrl = body.answer_url;
        if (typeof body.answer_method === 'string') app.answerMethod = body.answer_method;
        return reply(202, { api_id: randomUUID(), message: 'changed' });
      }
      return reply(200, { api_id: randomUUID(), app_id: app.appId, app_name: app.appName, answer_url: app.answerUrl, answer_method: app.answerMethod, resource_uri: `/v1/Account/${this.authId}/Application/${app.appId}/` });
    }
    return error(404, `no route ${m} ${p}`);
  }
}

function digits(n: string): string {
  return n.replace(/[^0-9]/g, '');
}
