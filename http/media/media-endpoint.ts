/**
 * `/api/v1/telephony/<provider>/media/<run_id>`: the WebSocket providers stream a call's audio to. Attached to
 * the HTTP server's `upgrade` event. Every upgrade is authorized first (`MediaStreams.authorize`); a refusal is
 * written as a plain HTTP response (`{detail, code}` JSON) on the socket, which is then destroyed. An accepted
 * connection gets one `MediaSession`; the provider's framing turns each message into a `MediaMessage`.
 *
 * Nothing about a run is revealed to a caller without a valid media token (docs/security.md): a missing or bad
 * URL token is refused before any lookup, the same for every run id; a provider whose token travels in the
 * `start` message (Twilio) gets its upgrade accepted for any run id without a lookup, and the run is looked up
 * only once a `start` carries a valid token for it (else 1008 `token invalid`, or `no authorized start` in time).
 *
 * Limits: messages above `maxMessageBytes` close the connection with 1009 (ws's `maxPayload`); no message for
 * `idleTimeoutMs` closes it with 4408; a provider whose token travels in `start` must send a valid one within
 * `startTimeoutMs` (else 1008); when the recording store falls behind, the socket is paused until it drains
 * (TCP backpressure reaches the provider); `close()` (service shutdown) closes every session with 1001 after
 * finalizing its recording.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { audioFormatOfMedia, type MediaFraming, type MediaSession, type MediaSessionEnd, type MediaStart } from '../../core/calls/media-session.js';
import type { MediaRefusal, MediaStreams } from '../../core/calls/media-streams.use-case.js';
import type { Logger } from '../../core/ports/logger.port.js';
import type { Run } from '../../core/runs/run.js';
import { WebSocketMediaChannel, type PlayoutTimers } from '../../core/voice/websocket-media-channel.js';

export interface MediaEndpointOptions {
  maxMessageBytes: number;
  idleTimeoutMs: number;
  startTimeoutMs: number;
  /** How long shutdown waits for sessions to finalize before dropping their sockets. */
  shutdownGraceMs?: number;
  /** Connections waiting for their authorizing `start` at most (more are refused with 503). Default 256. */
  maxPendingStarts?: number;
}

/** Messages a connection may send while its `start` is being authorized (replayed to the session after). */
const MAX_BUFFERED_WHILE_AUTHORIZING = 500;

export interface MediaEndpointDeps {
  streams: Pick<MediaStreams, 'authorize' | 'open'>;
  /** Media framing per provider id; a provider without one has no media endpoint (404). */
  framings: ReadonlyMap<string, MediaFraming>;
  log: Logger;
  options: MediaEndpointOptions;
  /**
   * Hangs a call up through its carrier's call-control API, for carriers whose stream is only a fork of the
   * call (manifest `media.hangUp` `rest`: Telnyx). Without it, such a hang-up only closes the stream.
   */
  hangUpCall?: (run: Run, providerCallId: string | undefined, reason: string) => Promise<void>;
  /** Real time by default; tests give a fake. */
  timers?: PlayoutTimers;
}

/**
 * A connected, authorized stream's two-way channel, with its run and the `start` that opened it; `stream` lets a
 * voice session take over the call's recording (`MediaSession.handOverRecording`).
 */
export type MediaChannelListener = (run: Run, channel: WebSocketMediaChannel, start: MediaStart, stream: StreamControl) => void;

/** What a channel listener may ask of the stream's media session. */
export interface StreamControl {
  handOverRecording(): void;
}

const realTimers: PlayoutTimers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

/** WebSocket close codes the endpoint uses. */
export const MEDIA_CLOSE = Object.freeze({ normal: 1000, goingAway: 1001, policy: 1008, tooBig: 1009, tryAgainLater: 1013, idle: 4408 });

/**
 * `/api/v1/telephony/<provider>/media/<run_id>`, or `/api/v1/telephony/<provider>/media?run_id=<run_id>` for a
 * carrier whose WebSocket URL is configured once and gets per-call query parameters (Asterisk's
 * websocket_client.conf connection, with the dial string's `v(run_id=...,token=...)`).
 */
const MEDIA_PATH = /^\/api\/v1\/telephony\/([^/]+)\/media(?:\/([^/]+))?\/?$/;
const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 503: 'Service Unavailable' };

/** Writes a small JSON HTTP response on a socket that was about to be upgraded, then destroys it. */
function refuseUpgrade(socket: Duplex, status: number, code: string, detail: string): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ detail, code });
  const headers = [
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`,
    'Connection: close',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...(status === 503 ? ['Retry-After: 5'] : []),
  ];
  socket.once('finish', () => socket.destroy());
  socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
  setTimeout(() => socket.destroy(), 1000).unref();
}

interface Connection {
  ws: WebSocket;
  session: MediaSession;
  channel: WebSocketMediaChannel | null;
  ended: Promise<unknown> | null;
}

export class MediaEndpoint {
  private readonly wss: WebSocketServer;
  private readonly connections = new Set<Connection>();
  /** Accepted connections of `start`-token providers whose start has not been authorized yet. */
  private readonly awaitingStart = new Set<WebSocket>();
  private readonly servers = new Set<Server>();
  private closing: Promise<void> | null = null;
  private readonly channelListeners = new Set<MediaChannelListener>();

  constructor(private readonly deps: MediaEndpointDeps) {
    this.wss = new WebSocketServer({ noServer: true, maxPayload: deps.options.maxMessageBytes, perMessageDeflate: false, clientTracking: false });
  }

  /** Live connections (tests, health). */
  get connectionCount(): number {
    return this.connections.size;
  }

  /**
   * Calls `listener` with the two-way `MediaChannel` of every stream whose `start` was accepted (the voice
   * session subscribes here), after the recording started. Returns the unsubscribe function. A listener that
   * throws is logged; the stream goes on (recorded, without that listener).
   */
  onChannel(listener: MediaChannelListener): () => void {
    this.channelListeners.add(listener);
    return () => this.channelListeners.delete(listener);
  }

  /** Listens to `server`'s upgrades. Idempotent per server. */
  attach(server: Server): void {
    if (this.servers.has(server)) return;
    this.servers.add(server);
    server.on('upgrade', this.onUpgrade);
  }

  /** True when `url` is a media endpoint path (other upgrade handlers may take the rest). */
  static matches(url: string | undefined): boolean {
    return MEDIA_PATH.test((url ?? '').split('?')[0]!);
  }

  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => socket.destroy());
    this.upgrade(req, socket, head).catch((e: unknown) => {
      this.deps.log.error({ err: (e as Error)?.message }, 'media upgrade failed');
      refuseUpgrade(socket, 503, 'media_unavailable', 'The media endpoint failed; try again later');
    });
  };

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://media.invalid');
    const m = MEDIA_PATH.exec(url.pathname);
    if (!m) return refuseUpgrade(socket, 404, 'not_found', 'Not Found');
    if (this.closing) return refuseUpgrade(socket, 503, 'shutting_down', 'The service is shutting down');
    const framing = this.deps.framings.get(decodeURIComponent(m[1]!));
    if (!framing) return refuseUpgrade(socket, 404, 'media_not_supported', 'This provider streams no media to Callplane');
    const runIdText = m[2] ?? url.searchParams.get('run_id') ?? '';
    const runId = /^[1-9]\d{0,14}$/.test(runIdText) ? Number(runIdText) : null;
    if (runId === null) return refuseUpgrade(socket, 404, 'run_not_found', 'Run not found');
    const log = this.deps.log.child({ provider: framing.provider, run_id: runId });
    const urlToken = url.searchParams.get('token');
    if (urlToken === null && framing.tokenIn === 'start') {
      // no lookup before a token is proven: an active, a finished and an unknown run id get the same answer
      if (this.awaitingStart.size >= (this.deps.options.maxPendingStarts ?? 256)) {
        return refuseUpgrade(socket, 503, 'media_sessions_exhausted', 'Too many media streams at once; try again later');
      }
      if (socket.destroyed) return;
      this.wss.handleUpgrade(req, socket, head, (ws) => this.awaitStart(ws, framing, runId, log));
      return;
    }
    const authorization = await this.deps.streams.authorize(framing, runId, urlToken);
    if (!authorization.ok) {
      log.warn({ status: authorization.status, code: authorization.code }, 'media connection refused');
      return refuseUpgrade(socket, authorization.status, authorization.code, authorization.detail);
    }
    if (this.closing) return refuseUpgrade(socket, 503, 'shutting_down', 'The service is shutting down');
    if (socket.destroyed) return;
    const session = this.deps.streams.open(framing, authorization);
    if (isRefusal(session)) return refuseUpgrade(socket, session.status, session.code, session.detail);
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, framing, authorization.run, session, authorization.authorizedByUrl, log));
  }

  /**
   * A connection whose token travels in `start`: waits (at most `startTimeoutMs`) for a `start`, checks its token
   * for this provider and run, then authorizes the run and hands the connection to a session, replaying what
   * arrived meanwhile (the start included). Any failure closes with 1008.
   */
  private awaitStart(ws: WebSocket, framing: MediaFraming, runId: number, log: Logger): void {
    this.awaitingStart.add(ws);
    const buffered: Array<[RawData, boolean]> = [];
    let authorizing = false;
    let settled = false;
    const finish = () => {
      settled = true;
      clearTimeout(deadline);
      this.awaitingStart.delete(ws);
      ws.off('message', onMessage);
    };
    const refuse = (reason: string) => {
      finish();
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(MEDIA_CLOSE.policy, reason);
    };
    const deadline = setTimeout(() => refuse('no authorized start'), this.deps.options.startTimeoutMs);
    deadline.unref();
    const onMessage = (data: RawData, isBinary: boolean) => {
      if (settled) return;
      if (authorizing) {
        if (buffered.length < MAX_BUFFERED_WHILE_AUTHORIZING) buffered.push([data, isBinary]);
        else refuse('too many messages before the stream was authorized');
        return;
      }
      const message = framing.parse(toBytes(data), isBinary);
      // like a session awaiting its start: anything else before it is dropped
      if (message.kind !== 'start') return;
      authorizing = true;
      buffered.push([data, isBinary]);
      void this.authorizeStart(framing, runId, message.start.parameters.token).then((outcome) => {
        if (settled || ws.readyState !== ws.OPEN) {
          // the peer left (or shutdown began) while the start was checked: release the session it would have had
          if (typeof outcome !== 'string') void outcome.session.onStop('closed');
          if (!settled) finish();
          return;
        }
        if (typeof outcome === 'string') {
          log.warn({ reason: outcome }, 'media stream refused at start');
          return refuse(outcome);
        }
        finish();
        this.serve(ws, framing, outcome.run, outcome.session, true, log);
        for (const [d, b] of buffered) ws.emit('message', d, b);
      }, (e: unknown) => {
        log.error({ err: (e as Error)?.message }, 'media start authorization failed');
        refuse('media endpoint failure');
      });
    };
    ws.on('message', onMessage);
    ws.on('error', (err: Error) => log.warn({ err: err.message }, 'media connection error before start'));
    ws.on('close', () => {
      if (!settled) finish();
    });
  }

  /** The session for a `start` token, or the close reason (token problems first: they say nothing about the run). */
  private async authorizeStart(framing: MediaFraming, runId: number, token: unknown): Promise<{ run: Run; session: MediaSession } | string> {
    if (typeof token !== 'string' || token === '') return 'token invalid';
    const authorization = await this.deps.streams.authorize(framing, runId, token);
    if (!authorization.ok) {
      if (authorization.code === 'media_token_expired') return 'token expired';
      if (authorization.code === 'media_token_invalid' || authorization.code === 'media_token_missing') return 'token invalid';
      return authorization.code;
    }
    if (this.closing) return 'shutting_down';
    const session = this.deps.streams.open(framing, { run: authorization.run, authorizedByUrl: true });
    return isRefusal(session) ? session.code : { run: authorization.run, session };
  }

  /** The two-way channel of a stream whose start was accepted, handed to the `onChannel` listeners. */
  private openChannel(ws: WebSocket, framing: MediaFraming, run: Run, start: MediaStart, log: Logger, onHangUp: () => void, stream: StreamControl): WebSocketMediaChannel | null {
    const hangUpCall = this.deps.hangUpCall;
    const wireFormat = audioFormatOfMedia(start.format);
    let channel: WebSocketMediaChannel;
    try {
      channel = new WebSocketMediaChannel({
        send: (data, binary) => {
          if (ws.readyState === ws.OPEN) ws.send(data, { binary });
        },
        close: (code, reason) => {
          onHangUp();
          if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
        },
      }, {
        framing,
        stream: { ...(start.streamId ? { streamId: start.streamId } : {}), ...(start.providerCallId ? { providerCallId: start.providerCallId } : {}) },
        timers: this.deps.timers ?? realTimers,
        ...(wireFormat ? { wireFormat } : {}),
        ...(hangUpCall ? { hangUpCall: (reason: string) => hangUpCall(run, start.providerCallId, reason) } : {}),
        log,
      });
    } catch (e) {
      log.warn({ err: (e as Error)?.message }, 'no two-way media channel for this stream');
      return null;
    }
    for (const listener of this.channelListeners) {
      try {
        listener(run, channel, start, stream);
      } catch (e) {
        log.error({ err: (e as Error)?.message }, 'media channel listener failed');
      }
    }
    return channel;
  }

  private serve(ws: WebSocket, framing: MediaFraming, run: Run, session: MediaSession, authorizedByUrl: boolean, log: Logger): void {
    const conn: Connection = { ws, session, channel: null, ended: null };
    this.connections.add(conn);
    const { idleTimeoutMs, startTimeoutMs } = this.deps.options;
    let endReason: MediaSessionEnd = 'closed';
    const close = (code: number, reason: string, why: MediaSessionEnd) => {
      endReason = why;
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason);
    };
    const idle = setTimeout(() => close(MEDIA_CLOSE.idle, 'idle timeout', 'idle'), idleTimeoutMs);
    idle.unref();
    // a connection whose token travels in `start` is not authorized until then: it gets little time
    const startDeadline = authorizedByUrl
      ? undefined
      : setTimeout(() => {
        if (session.state === 'awaiting_start') close(MEDIA_CLOSE.policy, 'no authorized start', 'start_timeout');
      }, startTimeoutMs);
    startDeadline?.unref();

    ws.on('message', (data: RawData, isBinary: boolean) => {
      idle.refresh();
      if (session.state === 'ended') return;
      const message = framing.parse(toBytes(data), isBinary);
      switch (message.kind) {
        case 'connected':
          return;
        case 'start': {
          const firstStart = session.state === 'awaiting_start';
          const started = session.onStart(message.start);
          if (!started.ok) return close(MEDIA_CLOSE.policy, started.reason, 'unauthorized');
          if (firstStart && !conn.channel) {
            conn.channel = this.openChannel(ws, framing, run, message.start, log, () => {
              endReason = 'hangup';
            }, { handOverRecording: () => session.handOverRecording() });
          }
          return;
        }
        case 'audio':
          conn.channel?.receive(message);
          if (!session.onAudio(message.track, message.payload) && !ws.isPaused) {
            ws.pause();
            session.whenDrained(() => {
              if (ws.readyState === ws.OPEN) ws.resume();
            });
          }
          return;
        case 'mark':
          conn.channel?.receive(message);
          return session.onMark(message.name);
        case 'dtmf':
          conn.channel?.receive(message);
          return session.onDtmf();
        case 'cleared':
          return;
        case 'stop':
          conn.channel?.receive(message);
          endReason = 'stop';
          conn.ended = session.onStop('stop');
          void conn.ended.then(() => close(MEDIA_CLOSE.normal, 'stream stopped', 'stop'));
          return;
        case 'ignored':
          return session.onIgnored(message.reason);
      }
    });
    ws.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') endReason = 'too_large';
      else endReason = 'error';
      log.warn({ err: err.message, code: err.code ?? null }, 'media connection error');
    });
    ws.on('close', (code: number) => {
      clearTimeout(idle);
      clearTimeout(startDeadline);
      conn.channel?.closed(endReason);
      conn.ended ??= session.onStop(endReason);
      void conn.ended.finally(() => this.connections.delete(conn));
      log.info({ code, reason: endReason }, 'media connection closed');
    });
  }

  /**
   * Stops taking connections and ends every session: each recording is finalized and attached, then its
   * socket closes with 1001. Waits at most `shutdownGraceMs` (default 5 s), then drops what is left.
   * Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const server of this.servers) server.off('upgrade', this.onUpgrade);
      for (const ws of this.awaitingStart) ws.close(MEDIA_CLOSE.goingAway, 'service shutting down');
      this.awaitingStart.clear();
      const pending = [...this.connections].map(async (conn) => {
        conn.channel?.closed('shutdown');
        conn.ended ??= conn.session.onStop('shutdown');
        await conn.ended;
        if (conn.ws.readyState === conn.ws.CLOSED) return;
        const closed = new Promise<void>((r) => conn.ws.once('close', () => r()));
        conn.ws.close(MEDIA_CLOSE.goingAway, 'service shutting down');
        await closed;
      });
      const grace = this.deps.options.shutdownGraceMs ?? 5000;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(pending), new Promise<void>((r) => (timer = setTimeout(r, grace)))]);
      clearTimeout(timer);
      // a peer that never answers the closing handshake must not hold the server open
      for (const conn of this.connections) if (conn.ws.readyState !== conn.ws.CLOSED) conn.ws.terminate();
      this.wss.close();
    })();
    return this.closing;
  }
}

function isRefusal(v: MediaSession | MediaRefusal): v is MediaRefusal {
  return (v as MediaRefusal).ok === false;
}

function toBytes(data: RawData): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return data;
}
