/**
 * The only code that speaks Deepgram's live transcription protocol (docs/providers.md, "Deepgram"):
 * `GET <base_url>/v1/listen?...` upgraded to a WebSocket with `Authorization: Token <api_key>`.
 *
 * - Client → server: binary audio in the stream's format (μ-law 8 kHz straight from the carrier), in chunks of
 *   at least `sendChunkMs` (40 ms: two carrier frames a message, half the sends of one per 20 ms frame; LiveKit
 *   sends Deepgram 50 ms chunks), the rest going out before each Finalize and CloseStream. Once the line has
 *   been quiet (no 20 ms piece above ~-54 dBFS mean level) for `quietAfterMs` (1 s, past Deepgram's endpointing
 *   and `utterance_end_ms`, so neither is delayed), silence goes in `quietChunkMs` (200 ms) messages, within
 *   the 20-250 ms Deepgram asks for; the first piece with sound goes out at once with the quiet audio buffered
 *   before it, and 40 ms messages resume. On a call the caller is quiet most of the time (the agent talks,
 *   pauses), and each message is a socket write, the largest cost of a streaming call on the service's thread.
 *   `{"type":"Finalize"}` when the caller stops speaking, `{"type":"KeepAlive"}` after `keepAliveMs` without
 *   audio (Deepgram closes an idle stream after 10 s), `{"type":"CloseStream"}` on close.
 * - Server → client: `Results` (`is_final`, `speech_final`, `from_finalize`), `SpeechStarted`, `UtteranceEnd`,
 *   `Metadata`; mapped to `SttEvent`s. A Finalize's answer (`from_finalize`) counts as speech-final: the caller
 *   itself declared the end of the utterance.
 * - The URL passes the host's network policy (`checkConnect`) right before every connect and the socket is
 *   pinned to the checked address; a redirect is refused, never followed.
 * - An unexpected close (not 1008, the provider's verdict on our data) reconnects up to `maxReconnects` times
 *   with backoff; audio pushed meanwhile is buffered (the last `maxBufferedMs`) and sent first. So is the audio
 *   the lost connection took but had not finalized: every `Results` with `is_final` says up to where (its
 *   `start + duration`, in seconds of that connection's audio) the server is done, and what was sent after that
 *   point is kept (the last `maxBufferedMs` of it) and sent again, so words spoken into a socket that was
 *   already dead before the client saw it close are not lost and none is transcribed twice as final. A
 *   Finalize the lost connection never answered is sent again after that audio.
 * - Errors are `ProviderApiError('deepgram', message)`; the api key never appears in one.
 */
import type { LookupFunction } from 'node:net';
import WebSocket from 'ws';
import { ALAW_TO_PCM, MULAW_TO_PCM } from '../../core/voice/g711.js';
import {
  AsyncQueue, NetworkPolicyError, ProviderApiError,
  type AudioFormat, type ConnectPermit, type SpeechToText, type SttEvent, type SttStream, type SttStreamOptions,
} from '../../plugins/sdk.js';

export const DEEPGRAM = 'deepgram';

export interface DeepgramSttOptions {
  apiKey: string;
  /** The WebSocket API root, e.g. `wss://api.deepgram.com`. */
  baseUrl: string;
  /** The host's network policy for WebSocket URLs. */
  checkConnect: (url: string) => Promise<ConnectPermit>;
  /** Default model when the stream names none. Default `nova-3`. */
  model?: string;
  /** Deepgram's own endpointing (ms of silence before `speech_final`). Default 300. */
  endpointingMs?: number;
  /** `utterance_end_ms`. Default 1000. */
  utteranceEndMs?: number;
  /** A KeepAlive goes out after this long without audio (ms). Default 5000. */
  keepAliveMs?: number;
  /** Reconnect attempts after an unexpected close. Default 3. */
  maxReconnects?: number;
  /** First reconnect delay, doubled each attempt (ms). Default 200. */
  reconnectDelayMs?: number;
  /** Audio kept while reconnecting (ms of the stream's format); older audio is dropped. Default 5000. */
  maxBufferedMs?: number;
  /** Handshake bound (ms). Default 5000. */
  connectTimeoutMs?: number;
  /** How long `close` waits for the server's last results and close (ms). Default 2000. */
  closeTimeoutMs?: number;
  /**
   * Audio is sent once this much of it is buffered (ms of the stream's format), and whatever is buffered before a
   * Finalize or a CloseStream; 0 sends each push as it comes (while not quiet: see `quietAfterMs`). Default 40:
   * two 20 ms carrier frames a message.
   */
  sendChunkMs?: number;
  /**
   * After this long without sound (ms of audio), audio is sent in `quietChunkMs` messages, until a push with sound
   * (sent at once with what was buffered). Default: the longest of 1000, `endpointingMs` and `utteranceEndMs`, so
   * Deepgram's own end-of-speech results are never delayed by it. Infinity: never.
   */
  quietAfterMs?: number;
  /** Message size while quiet (ms of audio). Default 200 (Deepgram asks for 20-250 ms per message). */
  quietChunkMs?: number;
}

/**
 * Mean |sample| at or above which a push is sound (delays the quiet chunks): 64 of 32768, about -54 dBFS mean
 * level, below any speech and below the VAD's -50 dBFS gate; a line's idle hiss above it only keeps the 40 ms
 * messages (the behaviour without quiet chunks).
 */
export const DEEPGRAM_SOUND_LEVEL = 64;

/** Whether `audio` (in `format`) has a mean |sample| of at least DEEPGRAM_SOUND_LEVEL. */
export function hasSound(audio: Uint8Array, format: AudioFormat): boolean {
  if (format.encoding === 'l16') {
    const n = audio.byteLength >> 1;
    if (n === 0) return false;
    const view = new DataView(audio.buffer, audio.byteOffset, n * 2);
    const limit = DEEPGRAM_SOUND_LEVEL * n;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      sum += Math.abs(view.getInt16(i * 2, true));
      if (sum >= limit) return true;
    }
    return false;
  }
  const table = format.encoding === 'alaw' ? ALAW_TO_PCM : MULAW_TO_PCM;
  const n = audio.byteLength;
  if (n === 0) return false;
  const limit = DEEPGRAM_SOUND_LEVEL * n;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += Math.abs(table[audio[i]!]!);
    if (sum >= limit) return true;
  }
  return false;
}

const ENCODINGS: Record<AudioFormat['encoding'], string> = { mulaw: 'mulaw', alaw: 'alaw', l16: 'linear16' };

/** `wss://host[/prefix]` → `wss://host[/prefix]/v1/listen?...` for one stream. */
export function deepgramListenUrl(baseUrl: string, format: AudioFormat, o: { model: string; language?: string; endpointingMs: number; utteranceEndMs: number }): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/v1/listen`);
  const q = url.searchParams;
  q.set('encoding', ENCODINGS[format.encoding]);
  q.set('sample_rate', String(format.sampleRate));
  q.set('channels', '1');
  q.set('model', o.model);
  if (o.language) q.set('language', o.language);
  q.set('interim_results', 'true');
  q.set('punctuate', 'true');
  q.set('smart_format', 'true');
  q.set('endpointing', String(o.endpointingMs));
  q.set('utterance_end_ms', String(o.utteranceEndMs));
  q.set('vad_events', 'true');
  return url.href;
}

export class DeepgramSpeechToText implements SpeechToText {
  constructor(private readonly opts: DeepgramSttOptions) {}

  async open(options: SttStreamOptions): Promise<SttStream> {
    options.signal?.throwIfAborted();
    const stream = new DeepgramSttStream(this.opts, options);
    await stream.start();
    return stream;
  }
}

/** The text of a failure, with the api key blanked out whatever the server echoed. */
function redactor(key: string): (text: string) => string {
  return (text) => (key ? text.split(key).join('***') : text);
}

interface DeepgramMessage {
  type?: string;
  is_final?: boolean;
  speech_final?: boolean;
  /** Seconds of this connection's audio before the result's span, and the span's length. */
  start?: number;
  duration?: number;
  from_finalize?: boolean;
  channel?: { alternatives?: Array<{ transcript?: string }> };
  description?: string;
  message?: string;
  err_msg?: string;
}

class DeepgramSttStream implements SttStream {
  readonly events: AsyncQueue<SttEvent>;
  /** `interim_results=true` is always asked for. */
  readonly interimResults = true;
  private readonly url: string;
  private readonly redact: (t: string) => string;
  private ws: WebSocket | undefined;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Pushed on an open connection, not sent yet: less than `chunkBytes`. */
  private outgoing: Buffer[] = [];
  private outgoingBytes = 0;
  private readonly chunkBytes: number;
  private readonly quietChunkBytes: number;
  private readonly quietAfterBytes: number;
  /** Bytes pushed since the last push with sound (starts quiet: nothing has been said yet). */
  private quietBytes = Infinity;
  /** Sends a partial chunk `sendChunkMs` after its first byte came, should no more audio come (a stalled stream). */
  private outgoingTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly maxPendingBytes: number;
  private readonly bytesPerSecond: number;
  /** Audio sent on the current connection after its last final result's end: what a lost connection may not have heard. */
  private unconfirmed: Buffer[] = [];
  private unconfirmedBytes = 0;
  /** The current connection's byte offset of `unconfirmed[0]` (the audio before it is covered by a final). */
  private unconfirmedFrom = 0;
  private finalizePending = false;
  /** A Finalize was sent on the current connection and its answer (`from_finalize`) has not come. */
  private finalizeUnanswered = false;
  private finalizedSinceAudio = false;
  private lastSentAt = Date.now();
  private keepAliveTimer: ReturnType<typeof setInterval> | undefined;
  private closing: Promise<void> | undefined;
  private reconnecting = false;
  private lastServerError: string | undefined;

  constructor(
    private readonly opts: DeepgramSttOptions,
    private readonly options: SttStreamOptions,
  ) {
    this.redact = redactor(opts.apiKey);
    this.url = deepgramListenUrl(opts.baseUrl, options.format, {
      model: options.model || opts.model || 'nova-3',
      language: options.language,
      endpointingMs: opts.endpointingMs ?? 300,
      utteranceEndMs: opts.utteranceEndMs ?? 1000,
    });
    this.bytesPerSecond = options.format.sampleRate * (options.format.encoding === 'l16' ? 2 : 1);
    this.maxPendingBytes = Math.ceil(((opts.maxBufferedMs ?? 5000) * this.bytesPerSecond) / 1000);
    this.chunkBytes = Math.floor(((opts.sendChunkMs ?? 40) * this.bytesPerSecond) / 1000);
    this.quietChunkBytes = Math.max(this.chunkBytes, Math.floor(((opts.quietChunkMs ?? 200) * this.bytesPerSecond) / 1000));
    // never before Deepgram's own endpointing and UtteranceEnd could have come: those are counted on the audio it has
    const quietAfterMs = opts.quietAfterMs ?? Math.max(1000, opts.endpointingMs ?? 300, opts.utteranceEndMs ?? 1000);
    this.quietAfterBytes = (quietAfterMs * this.bytesPerSecond) / 1000;
    this.events = new AsyncQueue<SttEvent>(() => void this.close());
  }

  async start(): Promise<void> {
    this.ws = await this.connect();
    const keepAliveMs = this.opts.keepAliveMs ?? 5000;
    this.keepAliveTimer = setInterval(() => {
      if (Date.now() - this.lastSentAt >= keepAliveMs) this.sendJson({ type: 'KeepAlive' });
    }, Math.max(10, Math.min(1000, keepAliveMs / 4)));
    this.keepAliveTimer.unref?.();
    this.options.signal?.addEventListener('abort', () => void this.close(), { once: true });
  }

  push(audio: Uint8Array): void {
    if (this.closing || audio.byteLength === 0) return;
    this.finalizedSinceAudio = false;
    // a copy: the caller may reuse its buffer, and this one may have to be sent again
    const copy = Buffer.from(audio);
    const sound = hasSound(copy, this.options.format);
    const wasQuiet = this.quietBytes >= this.quietAfterBytes;
    this.quietBytes = sound ? 0 : this.quietBytes + copy.length;
    if (this.ws?.readyState === WebSocket.OPEN && !this.reconnecting) {
      this.outgoing.push(copy);
      this.outgoingBytes += copy.length;
      // sound after a quiet stretch goes out at once (with the quiet audio before it): Deepgram hears it no later
      // than in 40 ms messages
      const quiet = this.quietBytes >= this.quietAfterBytes;
      if (sound && wasQuiet) this.sendOutgoing();
      else if (this.outgoingBytes >= (quiet ? this.quietChunkBytes : this.chunkBytes)) this.sendOutgoing();
      else if (!this.outgoingTimer) {
        this.outgoingTimer = setTimeout(() => {
          this.outgoingTimer = undefined;
          this.sendOutgoing();
        }, quiet ? (this.opts.quietChunkMs ?? 200) : (this.opts.sendChunkMs ?? 40));
        this.outgoingTimer.unref?.();
      }
      return;
    }
    this.pending.push(copy);
    this.pendingBytes += copy.length;
    this.trimPending();
  }

  /** Sends the buffered audio as one message (the connection is open). */
  private sendOutgoing(): void {
    this.clearOutgoingTimer();
    if (this.outgoingBytes === 0 || this.ws?.readyState !== WebSocket.OPEN) return;
    // a buffer of its own, not a slice of node's shared 8 kB pool (Buffer.from / Buffer.concat of small sizes):
    // `unconfirmed` keeps up to `maxBufferedMs` of these, and a kept slice pins its whole slab, which in a process
    // serving many calls holds other calls' short-lived bytes too (heap snapshots of the voice bench, 10 calls:
    // 35 kB of slabs per call 50 s in, 97 kB at 130 s, for at most 40 kB of audio)
    const chunk = Buffer.allocUnsafeSlow(this.outgoingBytes);
    let at = 0;
    for (const piece of this.outgoing) {
      chunk.set(piece, at);
      at += piece.length;
    }
    this.outgoing = [];
    this.outgoingBytes = 0;
    this.ws.send(chunk);
    this.lastSentAt = Date.now();
    this.unconfirmed.push(chunk);
    this.unconfirmedBytes += chunk.length;
    while (this.unconfirmedBytes > this.maxPendingBytes && this.unconfirmed.length > 1) {
      const dropped = this.unconfirmed.shift()!.length;
      this.unconfirmedBytes -= dropped;
      this.unconfirmedFrom += dropped;
    }
  }

  /** Bytes of memory the audio this stream keeps holds on to (each distinct buffer counted whole). */
  get heldBytes(): number {
    const buffers = new Set<ArrayBufferLike>();
    for (const list of [this.pending, this.outgoing, this.unconfirmed]) for (const b of list) buffers.add(b.buffer);
    let n = 0;
    for (const b of buffers) n += b.byteLength;
    return n;
  }

  /** Forgets the audio buffered and not sent (it was taken elsewhere, or the stream is over). */
  private dropOutgoing(): void {
    this.outgoing = [];
    this.outgoingBytes = 0;
    this.clearOutgoingTimer();
  }

  private clearOutgoingTimer(): void {
    if (this.outgoingTimer === undefined) return;
    clearTimeout(this.outgoingTimer);
    this.outgoingTimer = undefined;
  }

  /** Keeps the newest `maxBufferedMs` of what waits for a connection. */
  private trimPending(): void {
    while (this.pendingBytes > this.maxPendingBytes && this.pending.length > 1) this.pendingBytes -= this.pending.shift()!.length;
  }

  /** A final result covers the current connection's audio up to `endSeconds`: that audio need never be sent again. */
  private confirm(endSeconds: number): void {
    let drop = Math.floor(endSeconds * this.bytesPerSecond) - this.unconfirmedFrom;
    while (drop > 0 && this.unconfirmed.length > 0) {
      const head = this.unconfirmed[0]!;
      const n = Math.min(drop, head.length);
      if (n === head.length) this.unconfirmed.shift();
      else this.unconfirmed[0] = head.subarray(n);
      this.unconfirmedBytes -= n;
      this.unconfirmedFrom += n;
      drop -= n;
    }
  }

  finalize(): void {
    if (this.closing || this.finalizedSinceAudio) return;
    this.finalizedSinceAudio = true;
    if (this.ws?.readyState === WebSocket.OPEN && !this.reconnecting) {
      this.sendOutgoing(); // every word spoken goes before the Finalize
      this.sendJson({ type: 'Finalize' });
      this.finalizeUnanswered = true;
    } else this.finalizePending = true;
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = (async () => {
      clearInterval(this.keepAliveTimer);
      if (!this.reconnecting) this.sendOutgoing();
      this.pending = [];
      this.unconfirmed = [];
      this.dropOutgoing();
      const ws = this.ws;
      if (ws && ws.readyState === WebSocket.OPEN) {
        // CloseStream: the server sends its last results and Metadata, then closes.
        ws.send(JSON.stringify({ type: 'CloseStream' }));
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            ws.terminate();
            resolve();
          }, this.opts.closeTimeoutMs ?? 2000);
          ws.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
        });
      } else ws?.terminate();
      this.events.end();
    })();
    return this.closing;
  }

  private sendJson(message: Record<string, unknown>): void {
    if (this.ws?.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify(message));
    this.lastSentAt = Date.now();
  }

  /** One connection attempt: policy check, handshake; resolves with the open socket (handlers attached). */
  private async connect(): Promise<WebSocket> {
    let permit: ConnectPermit;
    try {
      permit = await this.opts.checkConnect(this.url);
    } catch (err) {
      if (err instanceof NetworkPolicyError) throw new ProviderApiError(DEEPGRAM, err.message, false);
      throw err;
    }
    const ws = new WebSocket(this.url, {
      headers: { Authorization: `Token ${this.opts.apiKey}` },
      lookup: permit.lookup as unknown as LookupFunction,
      handshakeTimeout: this.opts.connectTimeoutMs ?? 5000,
      followRedirects: false,
      perMessageDeflate: false,
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (req, res) => {
        const status = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.length < 16 && chunks.push(c));
        res.on('end', () => {
          req.destroy();
          reject(this.handshakeError(status, res.headers, Buffer.concat(chunks).toString('utf8')));
        });
        res.on('error', () => reject(this.handshakeError(status, res.headers, '')));
      });
      ws.once('error', (err) => reject(new ProviderApiError(DEEPGRAM, `Deepgram could not be reached: ${this.redact(codeOf(err))}`, true)));
    });
    ws.on('error', () => undefined); // a late socket error arrives with its close, handled there
    ws.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(data.toString());
    });
    ws.once('close', (code, reason) => this.onClose(ws, code, reason.toString()));
    return ws;
  }

  private handshakeError(status: number, headers: Record<string, string | string[] | undefined>, body: string): ProviderApiError {
    if (status >= 300 && status < 400) {
      return new ProviderApiError(DEEPGRAM, `Deepgram answered a redirect (HTTP ${status}), which is not followed; check base_url`, false);
    }
    let detail = typeof headers['dg-error'] === 'string' ? headers['dg-error'] : '';
    try {
      const parsed = JSON.parse(body) as { err_msg?: unknown; message?: unknown; reason?: unknown };
      const m = [parsed.err_msg, parsed.message, parsed.reason].find((x) => typeof x === 'string' && x !== '');
      if (typeof m === 'string') detail = m;
    } catch {
      // not JSON: keep the header
    }
    const retryable = status === 429 || status >= 500;
    return new ProviderApiError(DEEPGRAM, this.redact(`Deepgram refused the connection (HTTP ${status})${detail ? `: ${detail}` : ''}`), retryable);
  }

  private onMessage(text: string): void {
    let m: DeepgramMessage;
    try {
      m = JSON.parse(text) as DeepgramMessage;
    } catch {
      return;
    }
    switch (m.type) {
      case 'Results': {
        const transcript = m.channel?.alternatives?.[0]?.transcript ?? '';
        if (m.is_final) {
          if (typeof m.start === 'number' && typeof m.duration === 'number') this.confirm(m.start + m.duration);
          if (m.from_finalize === true) this.finalizeUnanswered = false;
          const speechFinal = m.speech_final === true || m.from_finalize === true;
          if (transcript !== '' || speechFinal) this.events.push({ type: 'final', text: transcript, speechFinal });
        } else if (transcript !== '') this.events.push({ type: 'interim', text: transcript });
        return;
      }
      case 'SpeechStarted':
        this.events.push({ type: 'speech_started' });
        return;
      case 'UtteranceEnd':
        this.events.push({ type: 'utterance_end' });
        return;
      case 'Error':
        this.lastServerError = [m.description, m.message, m.err_msg].find((x) => typeof x === 'string' && x !== '');
        return;
      default:
        return; // Metadata and anything newer
    }
  }

  private onClose(ws: WebSocket, code: number, reason: string): void {
    if (ws !== this.ws || this.closing) return;
    const why = this.redact([reason, this.lastServerError].filter(Boolean).join('; ') || `code ${code}`);
    if (code === 1008) {
      // DATA-0000 and the like: the server judged what we sent; another connection would be judged the same.
      this.fail(new ProviderApiError(DEEPGRAM, `Deepgram closed the stream: ${why}`, false));
      return;
    }
    void this.reconnect(why);
  }

  private async reconnect(why: string): Promise<void> {
    this.reconnecting = true;
    // what the lost connection took without finalizing goes first, then what was buffered for it and never
    // sent, then what was pushed since (newest kept)
    this.pending = [...this.unconfirmed, ...this.outgoing, ...this.pending];
    this.pendingBytes += this.unconfirmedBytes + this.outgoingBytes;
    this.dropOutgoing();
    this.trimPending();
    this.unconfirmed = [];
    this.unconfirmedBytes = 0;
    this.unconfirmedFrom = 0;
    if (this.finalizeUnanswered) {
      this.finalizeUnanswered = false;
      this.finalizePending = true;
    }
    const attempts = this.opts.maxReconnects ?? 3;
    let last = why;
    for (let n = 0; n < attempts; n++) {
      await new Promise((r) => setTimeout(r, (this.opts.reconnectDelayMs ?? 200) * 2 ** n));
      if (this.closing) return;
      try {
        const ws = await this.connect();
        if (this.closing) {
          ws.terminate();
          return;
        }
        this.ws = ws;
        this.reconnecting = false;
        const pending = this.pending;
        this.pending = [];
        this.pendingBytes = 0;
        for (const chunk of pending) {
          ws.send(chunk);
          this.unconfirmed.push(chunk);
          this.unconfirmedBytes += chunk.length;
        }
        this.lastSentAt = Date.now();
        if (this.finalizePending) {
          this.finalizePending = false;
          this.sendJson({ type: 'Finalize' });
          this.finalizeUnanswered = true;
        }
        return;
      } catch (err) {
        last = err instanceof Error ? err.message : String(err);
        if (err instanceof ProviderApiError && !err.retryable) break;
      }
    }
    this.fail(new ProviderApiError(DEEPGRAM, `Deepgram connection lost (${why}) and could not be restored: ${last}`, true));
  }

  private fail(err: ProviderApiError): void {
    clearInterval(this.keepAliveTimer);
    this.closing = Promise.resolve();
    this.pending = [];
    this.unconfirmed = [];
    this.dropOutgoing();
    this.ws?.terminate();
    this.events.fail(err);
  }
}

function codeOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  return typeof e?.code === 'string' ? e.code : typeof e?.message === 'string' ? e.message : 'network error';
}
