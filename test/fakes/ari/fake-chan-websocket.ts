/**
 * The fake Asterisk's chan_websocket side of an ARI external media channel (`POST /channels/externalMedia` with
 * `transport=websocket`): like Asterisk with a `websocket_client.conf` connection, it opens a WebSocket *client* to
 * the connection's URI with the `v(name=value,...)` options of `transport_data` appended as query parameters, sends
 * `MEDIA_START` (plain text, the default control format) once connected, and then speaks the protocol
 * (docs.asterisk.org/Configuration/Channel-Drivers/WebSocket): BINARY frames are media both ways (we send 160-byte
 * μ-law frames), TEXT frames are commands from the application (`MARK_MEDIA` is answered with
 * `MEDIA_MARK_PROCESSED`, `HANGUP` hangs the channel up; `FLUSH_MEDIA`, `ANSWER` and the rest are recorded).
 */
import WebSocket from 'ws';

export interface FakeMediaLegEvents {
  /** The WebSocket is up and `MEDIA_START` was sent: Asterisk answers the channel and it enters Stasis. */
  connected(): void;
  /** The connection failed before it was up (refused upgrade, unreachable): the dial fails. */
  failed(reason: string): void;
  /** The application sent `HANGUP` or closed the WebSocket after it was up. */
  ended(reason: 'hangup' | 'closed'): void;
}

/** `v(run_id=1,token=abc)` anywhere in a chan_websocket dial string's options → `[['run_id','1'],['token','abc']]`. */
export function uriParametersOf(options: string): Array<[string, string]> {
  const m = /v\(([^)]*)\)/.exec(options);
  if (!m || !m[1]) return [];
  return m[1].split(',').filter((p) => p !== '').map((p) => {
    const i = p.indexOf('=');
    return i < 0 ? [p, ''] : [p.slice(0, i), p.slice(i + 1)];
  });
}

/** The URI chan_websocket connects to: the configured one with the `v()` parameters appended (already URI-encoded). */
export function connectionUri(configured: string, options: string): string {
  const params = uriParametersOf(options).map(([k, v]) => `${k}=${v}`);
  if (params.length === 0) return configured;
  return `${configured}${configured.includes('?') ? '&' : '?'}${params.join('&')}`;
}

/** One external media channel's WebSocket leg. */
export class FakeMediaLeg {
  /** Binary frames the application sent (agent audio). */
  readonly received: Buffer[] = [];
  /** Text frames the application sent (commands). */
  readonly commands: string[] = [];
  /** Text frames sent to the application (notifications). */
  readonly notifications: string[] = [];
  /** HTTP status of a refused upgrade, when the connection was refused. */
  refusedStatus?: number;
  private ws?: WebSocket;
  private up = false;
  private done = false;

  constructor(
    readonly channelId: string,
    readonly channelName: string,
    readonly connectionId: string,
    readonly url: string,
    readonly format: string,
    private readonly events: FakeMediaLegEvents,
  ) {}

  get connected(): boolean {
    return this.up && !this.done;
  }

  /** Bytes of agent audio received so far. */
  get receivedBytes(): number {
    return this.received.reduce((n, b) => n + b.length, 0);
  }

  /** Dials: opens the WebSocket client (as chan_websocket does when the channel is called). */
  dial(): void {
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url, { handshakeTimeout: 5000, perMessageDeflate: false });
    } catch (err) {
      this.fail(`bad URI: ${(err as Error).message}`);
      return;
    }
    this.ws = ws;
    ws.on('unexpected-response', (_req, res) => {
      this.refusedStatus = res.statusCode;
      res.resume();
      ws.terminate();
      this.fail(`upgrade refused with HTTP ${res.statusCode}`);
    });
    ws.on('error', (err) => {
      if (!this.up) this.fail(err.message);
    });
    ws.on('open', () => {
      this.up = true;
      this.notify(`MEDIA_START connection_id:${this.connectionId} channel:${this.channelName} format:${this.format} optimal_frame_size:160 ptime:20`);
      this.events.connected();
    });
    ws.on('message', (data, isBinary) => {
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      if (isBinary) {
        this.received.push(buf);
        return;
      }
      const text = buf.toString('utf8').trim();
      this.commands.push(text);
      const [command, ...params] = text.split(/\s+/);
      if (command === 'MARK_MEDIA') {
        const id = params.find((p) => p.startsWith('correlation_id:'))?.slice('correlation_id:'.length) ?? '';
        this.notify(`MEDIA_MARK_PROCESSED correlation_id:${id}`);
      } else if (command === 'HANGUP') {
        this.finish('hangup');
      }
    });
    ws.on('close', () => {
      if (this.up) this.finish('closed');
    });
  }

  /** Caller audio into the application: 160-byte binary frames (20 ms of μ-law each). */
  sendAudio(bytes: Uint8Array): void {
    if (!this.connected) return;
    for (let i = 0; i < bytes.length; i += 160) this.ws!.send(Buffer.from(bytes.subarray(i, i + 160)), { binary: true });
  }

  /** A notification (text frame) to the application, e.g. `DTMF_END digit:5`. */
  notify(text: string): void {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
    this.notifications.push(text);
    this.ws.send(text, { binary: false });
  }

  /** Asterisk hung the channel up (DELETE, the caller's side): the WebSocket closes. */
  close(): void {
    if (this.done) return;
    this.done = true;
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
    else this.ws?.terminate();
  }

  private finish(reason: 'hangup' | 'closed'): void {
    if (this.done) return;
    this.close();
    this.events.ended(reason);
  }

  private fail(reason: string): void {
    if (this.done || this.up) return;
    this.done = true;
    this.events.failed(reason);
  }
}
