/**
 * A fake Asterisk ARI server on loopback that speaks the real protocol: Swagger 1.2 api-docs (what ari-client
 * loads first), the REST operations Callplane uses on `/ari/channels...`, and the `/ari/events?app=...`
 * WebSocket with Asterisk-shaped event messages. Tests drive calls with `simulate*` and inspect `requests`.
 *
 * Behaviour copied from Asterisk where it matters to us:
 * - every `/ari/` path needs Basic auth (the WebSocket also takes `api_key=user:pass`); 401 otherwise;
 * - originate with the `channelId` of a live channel answers 409 `Channel with given unique ID already exists`;
 *   once the channel is destroyed the id is free again (Asterisk only checks live channels);
 * - an originated channel is subscribed to its Stasis app at once (it gets ChannelStateChange/Dial/ChannelDestroyed
 *   before answer) and enters the app (`StasisStart`) when answered;
 * - errors are JSON `{"message": "..."}` bodies.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { basicCredentials, FakeHttpServer, readBody, type Reply } from '../fake-http-server.js';
import { ariApiDocs, withBasePath, type AriEventType } from './ari-api-docs.js';
import { connectionUri, FakeMediaLeg } from './fake-chan-websocket.js';

export interface FakeAriOptions {
  username?: string;
  password?: string;
  /** `asterisk_id` put on events. */
  asteriskId?: string;
}

export interface RecordedAriRequest {
  method: string;
  /** Path without the query string, e.g. `/ari/channels`. */
  path: string;
  query: Record<string, string>;
  /** Parsed JSON body, or undefined when there was none. */
  body?: unknown;
  /** User name from Basic auth or `api_key`, undefined when none was given. */
  user?: string;
  authorized: boolean;
  status: number;
  websocket: boolean;
}

export interface FakeChannel {
  id: string;
  name: string;
  state: 'Down' | 'Rsrvd' | 'OffHook' | 'Dialing' | 'Ring' | 'Ringing' | 'Up' | 'Busy';
  caller: { name: string; number: string };
  connected: { name: string; number: string };
  accountcode: string;
  dialplan: { context: string; exten: string; priority: number; app_name: string; app_data: string };
  creationtime: string;
  language: string;
  /** Stasis application the channel is subscribed to. */
  app: string;
  appArgs: string[];
  inStasis: boolean;
  endpoint: string;
  variables: Record<string, string>;
  timeoutSeconds?: number;
}

/** Q.850 cause texts as Asterisk's ast_cause2str spells them. */
export const CAUSE_TEXT: Record<number, string> = {
  0: 'Unknown',
  1: 'Unallocated (unassigned) number',
  3: 'No route to destination',
  16: 'Normal Clearing',
  17: 'User busy',
  18: 'No user responding',
  19: 'User alerting, no answer',
  21: 'Call Rejected',
  27: 'Destination out of order',
  28: 'Invalid number format (addr incomplete)',
  31: 'Normal, unspecified',
  34: 'Circuit/channel congestion',
  38: 'Network out of order',
  58: 'Bearer capability not available',
  127: 'Interworking, unspecified',
};

/** ARI hangup `reason` → cause code, as Asterisk maps them. */
const REASON_CAUSE: Record<string, number> = {
  normal: 16, busy: 17, congestion: 34, no_answer: 19, timeout: 19, rejected: 21, unallocated: 1,
  normal_unspecified: 31, number_incomplete: 28, codec_mismatch: 58, interworking: 127, failure: 38,
  answered_elsewhere: 26,
};

interface Socket {
  ws: WebSocket;
  apps: string[];
}

export class FakeAriServer extends FakeHttpServer<RecordedAriRequest> {
  /**
   * websocket_client.conf: connection id → URI. `POST /channels/externalMedia` with `transport=websocket` and one of
   * these ids as `external_host` connects out to the URI (fake-chan-websocket.ts); an unknown id answers 400.
   */
  readonly websocketClients = new Map<string, string>();
  /** The chan_websocket leg of every external media channel created, by channel id (kept after it ends). */
  readonly mediaLegs = new Map<string, FakeMediaLeg>();
  readonly channels = new Map<string, FakeChannel>();
  /** Bridges by id, with the ids of the channels in them (a channel is in one bridge at most). */
  readonly bridges = new Map<string, { id: string; type: string; channels: string[] }>();
  /** When true, WebSocket upgrades are refused with 503 (Asterisk down or restarting). */
  refuseWebSockets = false;
  /**
   * A misconfigured or hostile endpoint: `/ari/api-docs/*` requests answer `status` (302) with `Location:
   * location`, after the first `after` of them (default 0) were served normally, before any auth check.
   */
  get redirectApiDocs(): { location: string; after?: number; status?: number } | undefined {
    return this.redirecting;
  }
  /** Setting it (again) starts counting `after` anew. */
  set redirectApiDocs(plan: { location: string; after?: number; status?: number } | undefined) {
    this.redirecting = plan;
    this.apiDocsServed = 0;
  }
  private redirecting?: { location: string; after?: number; status?: number };
  /** Overrides the api-docs' `basePath` (normally the request's host): a server pointing the SDK elsewhere. */
  apiDocsBasePath?: string;
  /**
   * What every newly opened event WebSocket receives first: `undeclared-event` (an event type the api-docs do
   * not declare, which throws inside ari-client's own events handler), `malformed` (text that is not JSON, a
   * JSON array, a channel that is not an object), or `bad-frame` (bytes that are no valid WebSocket frame, so
   * the client's socket fails).
   */
  eventSocketMisbehaviour?: 'undeclared-event' | 'malformed' | 'bad-frame';
  private apiDocsServed = 0;

  private readonly wss: WebSocketServer;
  private readonly sockets = new Set<Socket>();
  private readonly username: string;
  private readonly password: string;
  private readonly asteriskId: string;
  private channelSeq = 0;

  private constructor(opts: FakeAriOptions) {
    super((err) => ({ message: `fake ARI error: ${err.message}` }));
    this.username = opts.username ?? 'asterisk';
    this.password = opts.password ?? 'secret';
    this.asteriskId = opts.asteriskId ?? '02:42:ac:11:00:02';
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
  }

  /** Listening on loopback; its `url` is what a configuration's `ari_endpoint` holds. */
  static async start(opts: FakeAriOptions = {}): Promise<FakeAriServer> {
    return new FakeAriServer(opts).listen();
  }

  get credentials(): { username: string; password: string } {
    return { username: this.username, password: this.password };
  }

  /** Open event WebSockets, with the apps each subscribed to. */
  get connectedApps(): string[][] {
    return [...this.sockets].map((s) => s.apps);
  }

  /** The next `count` REST requests (matching `match` when given) answer `status` with `{message}`. */
  failNext(count: number, status: number, message: string, match?: (method: string, path: string) => boolean): void {
    this.planFailures(count, status, () => ({ message }), {}, match);
  }

  /** The called party rings: ChannelStateChange to `Ringing` and a `Dial` with status RINGING. */
  simulateRinging(channelId: string): void {
    const ch = this.mustGet(channelId);
    ch.state = 'Ringing';
    this.emit(ch.app, 'ChannelStateChange', { channel: this.snapshot(ch) });
    this.emit(ch.app, 'Dial', { peer: this.snapshot(ch), dialstring: ch.endpoint.split('/').slice(1).join('/'), dialstatus: 'RINGING' });
  }

  /** The called party answers: ChannelStateChange to `Up`, Dial ANSWER, then the channel enters Stasis (StasisStart). */
  simulateAnswer(channelId: string): void {
    const ch = this.mustGet(channelId);
    ch.state = 'Up';
    this.emit(ch.app, 'ChannelStateChange', { channel: this.snapshot(ch) });
    this.emit(ch.app, 'Dial', { peer: this.snapshot(ch), dialstring: ch.endpoint.split('/').slice(1).join('/'), dialstatus: 'ANSWER' });
    ch.inStasis = true;
    ch.dialplan = { ...ch.dialplan, app_name: 'Stasis', app_data: [ch.app, ...ch.appArgs].join(',') };
    this.emit(ch.app, 'StasisStart', { args: ch.appArgs, channel: this.snapshot(ch) });
  }

  /**
   * The far end (or the network) ends the call with a Q.850 `cause`: ChannelHangupRequest, StasisEnd when the
   * channel was in the app, then ChannelDestroyed; the channel id becomes free again.
   */
  simulateHangup(channelId: string, cause: number, causeText?: string): void {
    const ch = this.mustGet(channelId);
    this.emit(ch.app, 'ChannelHangupRequest', { cause, channel: this.snapshot(ch) });
    this.destroy(ch, cause, causeText);
  }

  /**
   * A call comes in and the dialplan sends it to `Stasis(app)`: a new channel in state `Ring` whose caller is
   * `callerNumber` and whose dialplan extension is `dialedExten`, announced with StasisStart.
   */
  simulateInbound(opts: { channelId: string; callerNumber: string; dialedExten: string; app?: string; context?: string; callerName?: string; args?: string[] }): FakeChannel {
    const app = opts.app ?? this.defaultApp();
    const ch: FakeChannel = {
      id: opts.channelId,
      name: `PJSIP/trunk-${this.nextSeq()}`,
      state: 'Ring',
      caller: { name: opts.callerName ?? '', number: opts.callerNumber },
      connected: { name: '', number: '' },
      accountcode: '',
      dialplan: { context: opts.context ?? 'from-trunk', exten: opts.dialedExten, priority: 2, app_name: 'Stasis', app_data: app },
      creationtime: asteriskTime(),
      language: 'en',
      app,
      appArgs: opts.args ?? [],
      inStasis: true,
      endpoint: 'PJSIP/trunk',
      variables: {},
    };
    this.channels.set(ch.id, ch);
    this.emit(app, 'StasisStart', { args: ch.appArgs, channel: this.snapshot(ch) });
    return ch;
  }

  /** Closes every event WebSocket from the server side, as when Asterisk restarts. */
  dropWebSockets(): void {
    for (const s of this.sockets) s.ws.terminate();
    this.sockets.clear();
  }

  /** Sends a raw event to the sockets subscribed to `app` (for tests of unusual messages). */
  emitRaw(app: string, message: Record<string, unknown>): void {
    const data = JSON.stringify(message);
    for (const s of this.sockets) if (s.apps.includes(app)) s.ws.send(data);
  }

  private misbehave(ws: WebSocket, app: string): void {
    const mode = this.eventSocketMisbehaviour;
    if (mode === 'undeclared-event') {
      this.emitRaw(app, { type: 'NotAnAriEvent', timestamp: asteriskTime(), application: app, channel: { id: 'ghost', name: 'x', state: 'Up' } });
    } else if (mode === 'malformed') {
      ws.send('{"type": "StasisStart", not json');
      ws.send('[1, 2, 3]');
      ws.send(JSON.stringify({ type: 'StasisStart', application: app, channel: 'not-an-object', args: 7 }));
    } else if (mode === 'bad-frame') {
      // FIN with all three reserved bits set: no extension negotiated them, so the client must fail the socket
      const raw = (ws as unknown as { _socket: Duplex })._socket;
      raw.write(Buffer.from([0xf1, 0x00]));
    }
  }

  override async close(): Promise<void> {
    for (const leg of this.mediaLegs.values()) leg.close();
    this.dropWebSockets();
    this.wss.close();
    await super.close();
  }

  // ---------------------------------------------------------------------------------------------------------

  private nextSeq(): string {
    this.channelSeq += 1;
    return this.channelSeq.toString(16).padStart(8, '0');
  }

  private defaultApp(): string {
    const first = [...this.sockets][0];
    return first?.apps[0] ?? 'callplane';
  }

  private mustGet(channelId: string): FakeChannel {
    const ch = this.channels.get(channelId);
    if (!ch) throw new Error(`fake ARI: no live channel ${channelId}`);
    return ch;
  }

  private snapshot(ch: FakeChannel): Record<string, unknown> {
    return {
      id: ch.id,
      name: ch.name,
      state: ch.state,
      caller: { ...ch.caller },
      connected: { ...ch.connected },
      accountcode: ch.accountcode,
      dialplan: { ...ch.dialplan },
      creationtime: ch.creationtime,
      language: ch.language,
    };
  }

  private destroy(ch: FakeChannel, cause: number, causeText?: string): void {
    // a chan_websocket channel hung up closes its WebSocket
    this.mediaLegs.get(ch.id)?.close();
    if (ch.inStasis) {
      ch.inStasis = false;
      this.emit(ch.app, 'StasisEnd', { channel: this.snapshot(ch) });
    }
    this.channels.delete(ch.id);
    for (const bridge of this.bridges.values()) bridge.channels = bridge.channels.filter((c) => c !== ch.id);
    this.emit(ch.app, 'ChannelDestroyed', {
      cause,
      cause_txt: causeText ?? CAUSE_TEXT[cause] ?? 'Unknown',
      channel: this.snapshot(ch),
    });
  }

  private emit(app: string, type: AriEventType, fields: Record<string, unknown>): void {
    this.emitRaw(app, { type, timestamp: asteriskTime(), asterisk_id: this.asteriskId, application: app, ...fields });
  }

  private authUser(req: http.IncomingMessage, query: URLSearchParams): { user?: string; ok: boolean } {
    const pair = basicCredentials(req.headers.authorization) ?? (query.has('api_key') ? query.get('api_key') ?? '' : undefined);
    let user: string | undefined;
    let pass: string | undefined;
    if (pair !== undefined) {
      const i = pair.indexOf(':');
      user = pair.slice(0, i);
      pass = pair.slice(i + 1);
    }
    return { user, ok: user === this.username && pass === this.password };
  }

  private upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const auth = this.authUser(req, url.searchParams);
    const record = (status: number): void => {
      this.requests.push({
        method: 'GET', path: url.pathname, query: queryObject(url.searchParams), user: auth.user,
        authorized: auth.ok, status, websocket: true,
      });
    };
    const refuse = (status: number, text: string): void => {
      record(status);
      socket.write(`HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      socket.destroy();
    };
    if (url.pathname !== '/ari/events') return refuse(404, 'Not Found');
    if (!auth.ok) return refuse(401, 'Unauthorized');
    if (this.refuseWebSockets) return refuse(503, 'Service Unavailable');
    const apps = (url.searchParams.get('app') ?? '').split(',').filter(Boolean);
    if (apps.length === 0) return refuse(400, 'Bad Request');
    record(101);
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const entry: Socket = { ws, apps };
      this.sockets.add(entry);
      ws.on('close', () => this.sockets.delete(entry));
      ws.on('error', () => this.sockets.delete(entry));
      this.misbehave(ws, apps[0]);
    });
  }

  protected async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = (req.method ?? 'GET').toUpperCase();
    const raw = await readBody(req);
    let body: unknown;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const auth = this.authUser(req, url.searchParams);
    const reply = this.log(res, {
      method, path: url.pathname, query: queryObject(url.searchParams), body, user: auth.user,
      authorized: auth.ok, status: 0, websocket: false,
    });

    if (this.redirectApiDocs && url.pathname.startsWith('/ari/api-docs/')) {
      this.apiDocsServed += 1;
      if (this.apiDocsServed > (this.redirectApiDocs.after ?? 0)) return reply(this.redirectApiDocs.status ?? 302, undefined, { location: this.redirectApiDocs.location });
    }
    if (!url.pathname.startsWith('/ari/')) return reply(404, { message: 'Not found' });
    if (!auth.ok) return reply(401, { message: 'Authentication required' });

    const origin = this.apiDocsBasePath ?? `http://${req.headers.host ?? '127.0.0.1'}`;
    const docs = ariApiDocs();
    if (method === 'GET' && url.pathname === '/ari/api-docs/resources.json') return reply(200, withBasePath(docs.listing, origin));
    const docMatch = /^\/ari\/api-docs\/([a-z]+)\.json$/.exec(url.pathname);
    if (method === 'GET' && docMatch) {
      const doc = docs.resources[docMatch[1]];
      return doc ? reply(200, withBasePath(doc, origin)) : reply(404, { message: 'Not found' });
    }

    const planned = this.takePlanned(method, url.pathname);
    if (planned) return reply(planned.status, planned.body, planned.headers);

    const q = url.searchParams;
    const parts = url.pathname.slice('/ari/'.length).split('/').map(decodeURIComponent);
    if (parts[0] === 'asterisk' && parts[1] === 'info' && parts.length === 2 && method === 'GET') {
      // what Asterisk answers to GET /ari/asterisk/info (the credentials check reads it)
      return reply(200, {
        build: { os: 'Linux', kernel: '6.1.0', machine: 'x86_64', options: '', date: '2026-01-01 00:00:00 UTC', user: 'fake' },
        system: { version: '20.5.0', entity_id: this.asteriskId },
        config: { name: 'fake', default_language: 'en', setid: { user: 'asterisk', group: 'asterisk' } },
        status: { startup_time: asteriskTime(), last_reload_time: asteriskTime() },
      });
    }
    if (parts[0] === 'asterisk' && parts[1] === 'ping' && method === 'GET') {
      return reply(200, { asterisk_id: this.asteriskId, ping: 'pong', timestamp: asteriskTime() });
    }
    if (parts[0] === 'applications') {
      const names = new Set([...this.sockets].flatMap((s) => s.apps));
      const describe = (name: string) => ({
        name,
        channel_ids: [...this.channels.values()].filter((c) => c.app === name).map((c) => c.id),
        bridge_ids: [], endpoint_ids: [], device_names: [],
      });
      if (parts.length === 1 && method === 'GET') return reply(200, [...names].map(describe));
      if (parts.length === 2 && method === 'GET') {
        return names.has(parts[1]) ? reply(200, describe(parts[1])) : reply(404, { message: 'Application not found' });
      }
    }
    if (parts[0] === 'bridges' && parts.length === 1) {
      if (method === 'GET') return reply(200, [...this.bridges.values()].map((b) => bridgeJson(b)));
      if (method === 'POST') {
        const id = q.get('bridgeId') || `${Date.now()}.${this.nextSeq()}`;
        if (this.bridges.has(id)) return reply(409, { message: 'Bridge with the same bridgeId already exists' });
        const created = { id, type: q.get('type') ?? 'mixing', channels: [] as string[] };
        this.bridges.set(id, created);
        return reply(200, bridgeJson(created));
      }
    }
    if (parts[0] === 'bridges' && parts.length === 2 && method === 'GET') {
      const found = this.bridges.get(parts[1]);
      return found ? reply(200, bridgeJson(found)) : reply(404, { message: 'Bridge not found' });
    }
    if (parts[0] === 'bridges' && parts.length >= 2) {
      const bridge = this.bridges.get(parts[1]);
      if (parts.length === 2 && method === 'POST') {
        const created = bridge ?? { id: parts[1], type: q.get('type') ?? 'mixing', channels: [] };
        this.bridges.set(created.id, created);
        return reply(200, { id: created.id, technology: 'simple_bridge', bridge_type: created.type, bridge_class: 'stasis', creator: 'Stasis', name: '', channels: created.channels, creationtime: asteriskTime() });
      }
      if (!bridge) return reply(404, { message: 'Bridge not found' });
      if (parts.length === 2 && method === 'DELETE') {
        this.bridges.delete(bridge.id);
        return reply(204);
      }
      if (parts.length === 3 && parts[2] === 'addChannel' && method === 'POST') {
        const ids = q.getAll('channel').flatMap((c) => c.split(',')).filter((c) => c !== '');
        if (ids.length === 0) return reply(400, { message: 'Missing parameter channel' });
        for (const id of ids) {
          const ch = this.channels.get(id);
          if (!ch) return reply(400, { message: 'Channel not found' });
          if (!ch.inStasis) return reply(422, { message: 'Channel not in Stasis application' });
        }
        for (const other of this.bridges.values()) other.channels = other.channels.filter((c) => !ids.includes(c));
        bridge.channels.push(...ids);
        return reply(204);
      }
    }
    if (parts[0] === 'channels') {
      if (parts.length === 1 && method === 'GET') return reply(200, [...this.channels.values()].map((c) => this.snapshot(c)));
      if (parts.length === 1 && method === 'POST') return this.originate(q.get('channelId') ?? undefined, q, body, reply);
      if (parts.length === 2 && method === 'POST' && parts[1] === 'externalMedia') return this.externalMedia(q, reply);
      const ch = this.channels.get(parts[1]);
      if (parts.length === 2 && method === 'POST') return this.originate(parts[1], q, body, reply);
      if (!ch) return reply(404, { message: 'Channel not found' });
      if (parts.length === 2 && method === 'GET') return reply(200, this.snapshot(ch));
      if (parts.length === 2 && method === 'DELETE') {
        const reason = q.get('reason_code') ? Number(q.get('reason_code')) : REASON_CAUSE[q.get('reason') ?? 'normal'];
        if (reason === undefined || Number.isNaN(reason)) return reply(400, { message: 'Invalid reason for hangup provided' });
        reply(204);
        this.destroy(ch, reason);
        return;
      }
      if (parts.length === 3 && method === 'POST' && parts[2] === 'answer') {
        if (!ch.inStasis) return reply(409, { message: 'Channel not in Stasis application' });
        ch.state = 'Up';
        reply(204);
        this.emit(ch.app, 'ChannelStateChange', { channel: this.snapshot(ch) });
        return;
      }
      if (parts.length === 3 && method === 'POST' && parts[2] === 'ring') {
        if (!ch.inStasis) return reply(409, { message: 'Channel not in Stasis application' });
        return reply(204);
      }
      if (parts.length === 3 && method === 'POST' && parts[2] === 'continue') {
        if (!ch.inStasis) return reply(409, { message: 'Channel not in Stasis application' });
        reply(204);
        ch.inStasis = false;
        this.emit(ch.app, 'StasisEnd', { channel: this.snapshot(ch) });
        return;
      }
      if (parts.length === 3 && method === 'GET' && parts[2] === 'variable') {
        const name = q.get('variable') ?? '';
        if (!name) return reply(400, { message: 'Variable name is required' });
        return name in ch.variables ? reply(200, { value: ch.variables[name] }) : reply(404, { message: 'Provided variable was not found' });
      }
    }
    return reply(404, { message: 'Resource not found' });
  }

  /**
   * `POST /channels/externalMedia` as Asterisk 20.16+/21.11+/22.6+ answers it for `transport=websocket` (checks from
   * res/ari/resource_channels.c): a `WebSocket/<external_host>/<transport_data>d(<direction>)` channel is created
   * and dialed at once; Asterisk answers with its snapshot (state Down) before the WebSocket is up. When the
   * connection is up the channel is answered and enters the application (`StasisStart` with the `data` args);
   * when it fails the channel is destroyed (cause 38); when the application hangs up or closes, cause 16.
   */
  private externalMedia(q: URLSearchParams, reply: Reply): void {
    const app = q.get('app') ?? '';
    const transport = q.get('transport') || 'udp';
    const encapsulation = q.get('encapsulation') || 'rtp';
    const host = q.get('external_host') ?? '';
    const format = q.get('format') ?? '';
    const direction = q.get('direction') ?? '';
    if (!app) return reply(400, { message: 'app cannot be empty' });
    if (transport === 'websocket' && encapsulation !== 'none') return reply(400, { message: "encapsulation must be 'none' for websocket transport" });
    if (transport !== 'websocket') return reply(501, { message: 'The encapsulation and/or transport is not supported' });
    if ((q.get('connection_type') || 'client') !== 'client') return reply(501, { message: 'The fake speaks chan_websocket client connections only' });
    const uri = this.websocketClients.get(host);
    if (!uri) return reply(400, { message: 'external_host must be a valid websocket_client connection id.' });
    if (!format) return reply(400, { message: 'format cannot be empty' });
    if (direction && !['both', 'in', 'out'].includes(direction)) return reply(400, { message: 'Invalid direction specified' });
    const id = q.get('channelId') || `${Date.now()}.${this.nextSeq()}`;
    if (this.channels.has(id)) return reply(409, { message: 'Channel with given unique ID already exists' });
    const transportData = q.get('transport_data') ?? '';
    const ch: FakeChannel = {
      id,
      name: `WebSocket/${host}/0x${this.nextSeq()}`,
      state: 'Down',
      caller: { name: '', number: '' },
      connected: { name: '', number: '' },
      accountcode: '',
      dialplan: { context: 'default', exten: 's', priority: 1, app_name: '', app_data: '' },
      creationtime: asteriskTime(),
      language: 'en',
      app,
      appArgs: (q.get('data') ?? '').split(',').filter((a) => a !== ''),
      inStasis: false,
      endpoint: `WebSocket/${host}${transportData ? `/${transportData}` : ''}${direction ? `${transportData ? '' : '/'}d(${direction})` : ''}`,
      variables: { MEDIA_WEBSOCKET_CONNECTION_ID: host, MEDIA_WEBSOCKET_OPTIMAL_FRAME_SIZE: '160' },
    };
    this.channels.set(id, ch);
    const live = () => this.channels.get(id) === ch;
    const leg = new FakeMediaLeg(id, ch.name, host, connectionUri(uri, transportData), format, {
      connected: () => {
        if (!live()) return;
        ch.state = 'Up';
        this.emit(ch.app, 'ChannelStateChange', { channel: this.snapshot(ch) });
        ch.inStasis = true;
        this.emit(ch.app, 'StasisStart', { args: ch.appArgs, channel: this.snapshot(ch) });
      },
      failed: () => {
        if (live()) this.destroy(ch, 38);
      },
      ended: () => {
        if (live()) this.destroy(ch, 16);
      },
    });
    this.mediaLegs.set(id, leg);
    reply(200, this.snapshot(ch));
    leg.dial();
  }

  private originate(
    channelId: string | undefined,
    q: URLSearchParams,
    body: unknown,
    reply: Reply,
  ): void {
    const endpoint = q.get('endpoint') ?? '';
    const app = q.get('app') ?? '';
    if (!endpoint) return reply(400, { message: 'Endpoint must be specified' });
    const slash = endpoint.indexOf('/');
    if (slash <= 0 || slash === endpoint.length - 1) return reply(400, { message: 'Invalid endpoint specified' });
    if (!app && !q.get('extension')) return reply(400, { message: 'Application or extension must be specified' });
    const variables = (body && typeof body === 'object' && 'variables' in body ? (body as { variables: unknown }).variables : undefined) ?? {};
    if (typeof variables !== 'object' || Object.values(variables as object).some((v) => typeof v !== 'string')) {
      return reply(400, { message: "Only string values in the 'variables' object allowed" });
    }
    const id = channelId || `${Date.now()}.${this.nextSeq()}`;
    if (this.channels.has(id)) return reply(409, { message: 'Channel with given unique ID already exists' });
    const callerId = q.get('callerId') ?? '';
    const cid = /^(?:"?([^"<]*)"?\s*)?<([^>]*)>$/.exec(callerId);
    const ch: FakeChannel = {
      id,
      name: `${endpoint.slice(0, slash)}/${endpoint.slice(slash + 1).split('@').pop()}-${this.nextSeq()}`,
      state: 'Down',
      caller: cid ? { name: (cid[1] ?? '').trim(), number: cid[2] } : { name: '', number: callerId },
      connected: { name: '', number: '' },
      accountcode: '',
      dialplan: { context: 'default', exten: 's', priority: 1, app_name: '', app_data: '' },
      creationtime: asteriskTime(),
      language: 'en',
      app,
      appArgs: (q.get('appArgs') ?? '').split(',').filter((a) => a !== ''),
      inStasis: false,
      endpoint,
      variables: { ...(variables as Record<string, string>) },
      timeoutSeconds: q.has('timeout') ? Number(q.get('timeout')) : undefined,
    };
    this.channels.set(id, ch);
    reply(200, this.snapshot(ch));
  }
}

function bridgeJson(b: { id: string; type: string; channels: string[] }): Record<string, unknown> {
  return { id: b.id, technology: 'simple_bridge', bridge_type: b.type, bridge_class: 'stasis', creator: 'Stasis', name: '', channels: [...b.channels], creationtime: asteriskTime() };
}

function queryObject(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of params) out[k] = v;
  return out;
}

/** Asterisk's event timestamp format: `2024-05-01T10:11:12.345+0000`. */
function asteriskTime(d = new Date()): string {
  return d.toISOString().replace('Z', '+0000');
}
