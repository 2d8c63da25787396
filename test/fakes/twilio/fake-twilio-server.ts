/**
 * A fake Twilio REST API (2010-04-01) on loopback for the calls and incoming-number operations Callplane uses.
 * It answers like Twilio: form-encoded requests, JSON resources with snake_case fields, Basic auth with the
 * account SID and auth token, errors as `{code, message, more_info, status}`, 429 with `Retry-After`.
 *
 * Point the twilio SDK at it through `TwilioClient`'s `baseUrl` option (see ENVIRONMENT.md).
 */
import type http from 'node:http';
import { randomBytes } from 'node:crypto';
import { basicCredentials, FakeHttpServer, multiMap, readBody } from '../fake-http-server.js';

export interface FakeTwilioOptions {
  accountSid?: string;
  authToken?: string;
  /** Numbers the account owns at start. */
  numbers?: { phoneNumber: string; voiceUrl?: string; voiceMethod?: 'GET' | 'POST'; friendlyName?: string }[];
}

export interface RecordedTwilioRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  /** Form fields; repeated keys (e.g. StatusCallbackEvent) become arrays. */
  form: Record<string, string | string[]>;
  authorized: boolean;
  status: number;
}

export interface FakeCall {
  sid: string;
  to: string;
  from: string;
  status: 'queued' | 'ringing' | 'in-progress' | 'completed' | 'busy' | 'failed' | 'no-answer' | 'canceled';
  params: Record<string, string | string[]>;
  dateCreated: string;
  answeredBy?: string;
  /** The TwiML a live-call update gave it last (a transfer's `<Dial>`). */
  twiml?: string;
}

export interface FakeNumber {
  sid: string;
  phoneNumber: string;
  friendlyName: string;
  voiceUrl: string;
  voiceMethod: string;
}

export class FakeTwilioServer extends FakeHttpServer<RecordedTwilioRequest> {
  readonly calls = new Map<string, FakeCall>();
  readonly numbers = new Map<string, FakeNumber>();
  readonly accountSid: string;
  readonly authToken: string;

  private constructor(opts: FakeTwilioOptions) {
    super((err) => twilioError(20500, `fake Twilio error: ${err.message}`, 500));
    this.accountSid = opts.accountSid ?? `AC${hex(32)}`;
    this.authToken = opts.authToken ?? hex(32);
    for (const n of opts.numbers ?? []) this.seedNumber(n);
  }

  /** Listening on loopback; its `url` is the client's `baseUrl` in place of https://api.twilio.com. */
  static async start(opts: FakeTwilioOptions = {}): Promise<FakeTwilioServer> {
    return new FakeTwilioServer(opts).listen();
  }

  seedNumber(n: { phoneNumber: string; voiceUrl?: string; voiceMethod?: 'GET' | 'POST'; friendlyName?: string }): FakeNumber {
    const num: FakeNumber = {
      sid: `PN${hex(32)}`,
      phoneNumber: n.phoneNumber,
      friendlyName: n.friendlyName ?? n.phoneNumber,
      voiceUrl: n.voiceUrl ?? '',
      voiceMethod: n.voiceMethod ?? 'POST',
    };
    this.numbers.set(num.sid, num);
    return num;
  }

  /** The next `count` API requests answer 429 Too Many Requests (Twilio error 20429) with `Retry-After`. */
  rateLimitNext(count: number, retryAfterSeconds?: number): void {
    this.planRateLimits(count, retryAfterSeconds, () => twilioError(20429, 'Too Many Requests', 429));
  }

  /** The next `count` API requests fail with `status` and Twilio's error JSON (e.g. 400, 21211 invalid To). */
  failNext(count: number, status: number, code: number, message: string): void {
    this.planFailures(count, status, () => twilioError(code, message, status));
  }

  /** Moves a call to a new status (as Twilio would while it rings, connects, ends). */
  setCallStatus(sid: string, status: FakeCall['status'], answeredBy?: string): void {
    const call = this.calls.get(sid);
    if (!call) throw new Error(`fake Twilio: no call ${sid}`);
    call.status = status;
    if (answeredBy) call.answeredBy = answeredBy;
  }

  // ---------------------------------------------------------------------------------------------------------

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = (req.method ?? 'GET').toUpperCase();
    const raw = await readBody(req);
    const form = (req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded') ? multiMap(new URLSearchParams(raw)) : {};
    const authorized = this.checkAuth(req.headers.authorization);
    const reply = this.log(res, { method, path: url.pathname, query: multiMap(url.searchParams), form, authorized, status: 0 });

    if (!authorized) {
      res.setHeader('WWW-Authenticate', 'Basic realm="Twilio API"');
      return reply(401, twilioError(20003, 'Authentication Error - invalid username', 401));
    }
    const planned = this.takePlanned(method, url.pathname);
    if (planned) return reply(planned.status, planned.body, planned.headers);

    if (method === 'GET' && url.pathname === `/2010-04-01/Accounts/${this.accountSid}.json`) {
      // the account of these credentials (the credentials check fetches it)
      return reply(200, {
        sid: this.accountSid, friendly_name: 'Fake Twilio account', status: 'active', type: 'Full', owner_account_sid: this.accountSid,
        date_created: new Date(0).toUTCString(), date_updated: new Date(0).toUTCString(), auth_token: this.authToken,
        uri: `/2010-04-01/Accounts/${this.accountSid}.json`, subresource_uris: {},
      });
    }
    const prefix = `/2010-04-01/Accounts/${this.accountSid}/`;
    if (!url.pathname.startsWith(prefix)) {
      return reply(404, twilioError(20404, `The requested resource ${url.pathname} was not found`, 404));
    }
    const rest = url.pathname.slice(prefix.length);
    const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[v.length - 1] : v);

    if (rest === 'Calls.json' && method === 'POST') {
      const to = one(form.To);
      const from = one(form.From);
      if (!to) return reply(400, twilioError(21201, "No 'To' number is specified", 400));
      if (!from) return reply(400, twilioError(21213, "No 'From' number is specified", 400));
      if (!form.Url && !form.Twiml && !form.ApplicationSid) {
        return reply(400, twilioError(21205, 'Url parameter is required.', 400));
      }
      const call: FakeCall = { sid: `CA${hex(32)}`, to, from, status: 'queued', params: form, dateCreated: new Date().toUTCString() };
      this.calls.set(call.sid, call);
      return reply(201, this.callJson(call));
    }
    const callMatch = /^Calls\/(CA[0-9a-f]{32})\.json$/.exec(rest);
    if (callMatch) {
      const call = this.calls.get(callMatch[1]);
      if (!call) return reply(404, twilioError(20404, `The requested resource ${url.pathname} was not found`, 404));
      if (method === 'GET') return reply(200, this.callJson(call));
      if (method === 'POST') {
        const status = one(form.Status);
        const twiml = one(form.Twiml);
        if (twiml !== undefined && status === undefined) {
          // new instructions for a live call (a transfer): Twilio refuses them once the call is not in progress
          if (call.status !== 'in-progress') return reply(400, twilioError(21220, 'Call is not in-progress. Cannot redirect.', 400));
          if (!/^\s*(<\?xml[^>]*>\s*)?<Response>/.test(twiml)) return reply(400, twilioError(12100, 'Document parse failure', 400));
          call.twiml = twiml;
          return reply(200, this.callJson(call));
        }
        if (status === 'completed') {
          if (['queued', 'ringing', 'in-progress'].includes(call.status)) call.status = call.status === 'in-progress' ? 'completed' : 'canceled';
        } else if (status === 'canceled') {
          if (['queued', 'ringing'].includes(call.status)) call.status = 'canceled';
        } else if (status !== undefined) {
          return reply(400, twilioError(21218, `Invalid value for Status: ${status}`, 400));
        }
        return reply(200, this.callJson(call));
      }
    }
    if (rest === 'IncomingPhoneNumbers.json' && method === 'GET') {
      const wanted = one(multiMap(url.searchParams).PhoneNumber);
      const pageSize = Number(url.searchParams.get('PageSize') ?? 50);
      const all = [...this.numbers.values()].filter((n) => !wanted || n.phoneNumber.includes(wanted.replace(/^\+/, '')));
      const page = all.slice(0, pageSize);
      return reply(200, {
        first_page_uri: `${url.pathname}?PageSize=${pageSize}&Page=0`,
        end: Math.max(0, page.length - 1),
        previous_page_uri: null,
        incoming_phone_numbers: page.map((n) => this.numberJson(n)),
        uri: `${url.pathname}${url.search}`,
        page_size: pageSize,
        start: 0,
        next_page_uri: null,
        page: 0,
      });
    }
    const pnMatch = /^IncomingPhoneNumbers\/(PN[0-9a-f]{32})\.json$/.exec(rest);
    if (pnMatch) {
      const num = this.numbers.get(pnMatch[1]);
      if (!num) return reply(404, twilioError(20404, `The requested resource ${url.pathname} was not found`, 404));
      if (method === 'GET') return reply(200, this.numberJson(num));
      if (method === 'POST') {
        const voiceUrl = one(form.VoiceUrl);
        const voiceMethod = one(form.VoiceMethod);
        if (voiceMethod !== undefined && voiceMethod !== 'GET' && voiceMethod !== 'POST') {
          return reply(400, twilioError(21608, 'VoiceMethod must be GET or POST', 400));
        }
        if (voiceUrl !== undefined) num.voiceUrl = voiceUrl;
        if (voiceMethod !== undefined) num.voiceMethod = voiceMethod;
        return reply(200, this.numberJson(num));
      }
    }
    return reply(404, twilioError(20404, `The requested resource ${url.pathname} was not found`, 404));
  }

  private checkAuth(header: string | undefined): boolean {
    return basicCredentials(header) === `${this.accountSid}:${this.authToken}`;
  }

  private callJson(c: FakeCall): Record<string, unknown> {
    const base = `/2010-04-01/Accounts/${this.accountSid}/Calls/${c.sid}`;
    return {
      sid: c.sid,
      account_sid: this.accountSid,
      to: c.to,
      to_formatted: c.to,
      from: c.from,
      from_formatted: c.from,
      status: c.status,
      direction: 'outbound-api',
      answered_by: c.answeredBy ?? null,
      api_version: '2010-04-01',
      date_created: c.dateCreated,
      date_updated: new Date().toUTCString(),
      start_time: null,
      end_time: null,
      duration: null,
      price: null,
      price_unit: 'USD',
      parent_call_sid: null,
      phone_number_sid: null,
      caller_name: null,
      forwarded_from: null,
      group_sid: null,
      queue_time: '0',
      trunk_sid: null,
      uri: `${base}.json`,
      subresource_uris: { notifications: `${base}/Notifications.json`, recordings: `${base}/Recordings.json` },
    };
  }

  private numberJson(n: FakeNumber): Record<string, unknown> {
    return {
      sid: n.sid,
      account_sid: this.accountSid,
      phone_number: n.phoneNumber,
      friendly_name: n.friendlyName,
      voice_url: n.voiceUrl || null,
      voice_method: n.voiceMethod,
      voice_fallback_url: null,
      voice_fallback_method: 'POST',
      voice_caller_id_lookup: false,
      voice_application_sid: null,
      status_callback: '',
      status_callback_method: 'POST',
      sms_url: '',
      sms_method: 'POST',
      capabilities: { voice: true, sms: true, mms: false, fax: false },
      api_version: '2010-04-01',
      date_created: new Date(0).toUTCString(),
      date_updated: new Date().toUTCString(),
      origin: 'twilio',
      status: 'in-use',
      uri: `/2010-04-01/Accounts/${this.accountSid}/IncomingPhoneNumbers/${n.sid}.json`,
    };
  }
}

function twilioError(code: number, message: string, status: number): Record<string, unknown> {
  return { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
}

function hex(n: number): string {
  return randomBytes(Math.ceil(n / 2)).toString('hex').slice(0, n);
}
