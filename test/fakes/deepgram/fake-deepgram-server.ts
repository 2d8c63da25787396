/**
 * A fake Deepgram on loopback speaking its real wire protocols:
 *
 * - Live transcription: `GET /v1/listen?encoding&sample_rate&channels&model&interim_results&endpointing&
 *   utterance_end_ms&vad_events...` upgraded to a WebSocket, `Authorization: Token <key>` (else HTTP 401 with
 *   `{err_code, err_msg, request_id}` and a `dg-error` header, as Deepgram answers). Binary frames are audio;
 *   audio with energy is "speech": `SpeechStarted`, interim `Results` every `interimEveryMs` of speech (growing
 *   prefixes of the scripted transcript), then a final `Results` (`is_final`, `speech_final`) after
 *   `endpointing` ms of silence, `UtteranceEnd` after `utterance_end_ms`; `{"type":"Finalize"}` flushes at once
 *   (`from_finalize: true`); `KeepAlive` keeps an idle stream open (`idleTimeoutMs` without audio or keepalive
 *   closes it with 1011 NET-0001); `CloseStream` flushes, sends `Metadata` and closes 1000. Text that is not
 *   a known control message closes 1008 (DATA-0000).
 * - Aura TTS: `POST /v1/speak?model&encoding&sample_rate&container` with `{"text"}`, answered with a streamed
 *   tone (a burst per word) of `msPerChar` per character in the requested encoding.
 *
 * Tests script transcripts (`say`), delays, refusals (`refuseNext`) and dropped connections (`dropAll`), and
 * read what arrived (`connections`, `speakRequests`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AudioFormat } from '../../../core/voice/audio-format.js';
import { readBody } from '../fake-http-server.js';
import { decodeSamples, meanAbs, ScriptedTextToSpeech } from '../scripted-speech.js';

export interface FakeDeepgramOptions {
  /** The key clients must send (`Authorization: Token <apiKey>`). Default `dg-test-key`. */
  apiKey?: string;
  /** Transcript when the script runs out. */
  defaultText?: string;
  /**
   * Recognizes an utterance from its first chunk of speech audio (in the stream's format), in place of the
   * script: a benchmark's closed set of recordings, each with its own words ('' for noise). Per connection, so
   * concurrent calls each get their own words.
   */
  transcribe?: (firstSpeech: Uint8Array, format: AudioFormat) => string;
  /** Mean |sample| above which audio is speech. Default 500. */
  energyThreshold?: number;
  /**
   * Once speech started, the mean |sample| at or under which a 20 ms piece is silence (default: `energyThreshold`).
   * 0: only digital silence is, and the silence count starts after a piece's last non-silent sample, so the
   * endpointing follows the end of the sound itself (a benchmark's reference end of speech) to the sample.
   */
  releaseThreshold?: number;
  /** An interim per this much speech (ms). Default 200. */
  interimEveryMs?: number;
  /** Extra delay before a final result (ms): the "STT delay". Default 0. */
  finalDelayMs?: number;
  /** Closes a stream (1011, NET-0001) after this long without audio or KeepAlive (ms). Default 10 000. */
  idleTimeoutMs?: number;
  /** TTS: audio per character (ms). Default 60. */
  msPerChar?: number;
  /** TTS: delay before the response headers (ms). Default 0. */
  speakFirstByteDelayMs?: number;
}

export interface FakeListenConnection {
  query: Record<string, string>;
  authorization: string | undefined;
  audioBytes: number;
  /** Each binary (audio) message's size in bytes, in order. */
  audioMessages: number[];
  /** Control messages received, in order (`Finalize`, `KeepAlive`, `CloseStream`, ...). */
  controls: string[];
  /** Every message the fake sent (parsed). */
  sent: Array<Record<string, unknown>>;
  /** The close code once closed. */
  closeCode?: number;
  socket: WebSocket;
}

export interface FakeSpeakRequest {
  query: Record<string, string>;
  authorization: string | undefined;
  body: Record<string, unknown> | null;
  status: number;
}

const ENCODING_OF: Record<string, AudioFormat['encoding']> = { mulaw: 'mulaw', alaw: 'alaw', linear16: 'l16' };

export class FakeDeepgramServer {
  readonly connections: FakeListenConnection[] = [];
  readonly speakRequests: FakeSpeakRequest[] = [];
  private readonly server: http.Server;
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly script: string[] = [];
  private readonly refusals: number[] = [];
  private readonly apiKey: string;

  private constructor(private readonly opts: FakeDeepgramOptions) {
    this.apiKey = opts.apiKey ?? 'dg-test-key';
    this.server = http.createServer((req, res) => {
      this.speak(req, res).catch(() => res.destroy());
    });
    this.server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
  }

  static async start(opts: FakeDeepgramOptions = {}): Promise<FakeDeepgramServer> {
    const fake = new FakeDeepgramServer(opts);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** `ws://127.0.0.1:<port>`: the service's `base_url` in place of `wss://api.deepgram.com`. */
  get baseUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  get key(): string {
    return this.apiKey;
  }

  /** Queues the transcripts of the next utterances (across connections). */
  say(...texts: string[]): this {
    this.script.push(...texts);
    return this;
  }

  /** The next `count` connection attempts are refused with HTTP `status`. */
  refuseNext(count: number, status: number): void {
    for (let i = 0; i < count; i++) this.refusals.push(status);
  }

  /** Closes every open stream abruptly with `code` (1011: the server failed; 1006-like: `terminate`). */
  dropAll(code: number | 'terminate' = 1011, reason = 'NET-0000: the service failed'): void {
    for (const c of this.connections) {
      if (c.socket.readyState !== c.socket.OPEN) continue;
      if (code === 'terminate') c.socket.terminate();
      else c.socket.close(code, reason);
    }
  }

  /** Open streams. */
  get open(): FakeListenConnection[] {
    return this.connections.filter((c) => c.socket.readyState === c.socket.OPEN);
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.socket.terminate();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private unauthorized(authorization: string | undefined): boolean {
    return authorization !== `Token ${this.apiKey}`;
  }

  private upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const refuse = (status: number, errCode: string, errMsg: string) => {
      const body = JSON.stringify({ err_code: errCode, err_msg: errMsg, request_id: `req-${Date.now()}` });
      socket.end(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\ndg-error: ${errMsg}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    };
    if (url.pathname !== '/v1/listen') return refuse(404, 'NOT_FOUND', 'Not found');
    const planned = this.refusals.shift();
    if (planned) return refuse(planned, planned === 429 ? 'TOO_MANY_REQUESTS' : 'INTERNAL', planned === 429 ? 'Too many requests' : 'The service is unavailable');
    if (this.unauthorized(req.headers.authorization)) return refuse(401, 'INVALID_AUTH', 'Invalid credentials.');
    const query = Object.fromEntries(url.searchParams);
    const encoding = ENCODING_OF[query.encoding ?? ''];
    const sampleRate = Number(query.sample_rate);
    if (!encoding || !Number.isInteger(sampleRate) || sampleRate <= 0) return refuse(400, 'Bad Request', 'encoding and sample_rate are required for raw audio');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.listen(ws, req, query, { encoding, sampleRate } as AudioFormat));
  }

  private listen(ws: WebSocket, req: http.IncomingMessage, query: Record<string, string>, format: AudioFormat): void {
    const conn: FakeListenConnection = { query, authorization: req.headers.authorization, audioBytes: 0, audioMessages: [], controls: [], sent: [], socket: ws };
    this.connections.push(conn);
    const endpointing = query.endpointing === 'false' ? Infinity : Number(query.endpointing ?? 10);
    const utteranceEnd = query.utterance_end_ms ? Number(query.utterance_end_ms) : undefined;
    const interims = query.interim_results === 'true';
    const bytesPerSecond = format.sampleRate * (format.encoding === 'l16' ? 2 : 1);
    let audioSeconds = 0;
    let speech: { text: string; start: number; voicedMs: number; interims: number } | undefined;
    let silenceMs = 0;
    let sinceFinalMs: number | undefined;
    let idle: ReturnType<typeof setTimeout> | undefined;

    const send = (msg: Record<string, unknown>) => {
      conn.sent.push(msg);
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
    };
    const results = (text: string, o: { isFinal: boolean; speechFinal: boolean; fromFinalize?: boolean; start: number }) => ({
      type: 'Results',
      channel_index: [0, 1],
      duration: Math.max(0, audioSeconds - o.start),
      start: o.start,
      is_final: o.isFinal,
      speech_final: o.speechFinal,
      ...(o.fromFinalize ? { from_finalize: true } : {}),
      channel: { alternatives: [{ transcript: text, confidence: text ? 0.98 : 0, words: [] }] },
      metadata: { request_id: 'fake', model_info: { name: query.model ?? 'nova-3' } },
    });
    const final = (o: { speechFinal: boolean; fromFinalize?: boolean }) => {
      const s = speech;
      speech = undefined;
      silenceMs = 0;
      const msg = results(s?.text ?? '', { isFinal: true, ...o, start: s?.start ?? audioSeconds });
      sinceFinalMs = s ? 0 : sinceFinalMs;
      if (this.opts.finalDelayMs) setTimeout(() => send(msg), this.opts.finalDelayMs);
      else send(msg);
    };
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => ws.close(1011, 'NET-0001: no audio or KeepAlive received within the timeout window'), this.opts.idleTimeoutMs ?? 10_000);
    };
    touch();

    const pieceBytes = bytesPerSecond / 50; // 20 ms
    const hear = (audio: Uint8Array) => {
      const ms = (audio.byteLength / bytesPerSecond) * 1000;
      const startOfChunk = audioSeconds;
      audioSeconds += ms / 1000;
      const start = this.opts.energyThreshold ?? 500;
      const release = this.opts.releaseThreshold ?? start;
      const samples = decodeSamples(audio, format); // once per piece: its level, and its trailing silence
      if (meanAbs(samples) > (speech ? release : start)) {
        silenceMs = release === 0 ? trailingSilenceMs(samples, format.sampleRate) : 0;
        sinceFinalMs = undefined;
        if (!speech) {
          const text = this.opts.transcribe ? this.opts.transcribe(audio, format) : (this.script.shift() ?? this.opts.defaultText ?? 'hello from the fake caller');
          speech = { text, start: startOfChunk, voicedMs: 0, interims: 0 };
          if (query.vad_events === 'true') send({ type: 'SpeechStarted', channel: [0], timestamp: startOfChunk });
        }
        speech.voicedMs += ms;
        const every = this.opts.interimEveryMs ?? 200;
        if (interims && speech.voicedMs >= every * (speech.interims + 1)) {
          speech.interims++;
          const words = speech.text.split(/\s+/).filter(Boolean);
          send(results(words.slice(0, Math.max(1, Math.min(words.length - 1, speech.interims))).join(' '), { isFinal: false, speechFinal: false, start: speech.start }));
        }
      } else if (speech) {
        silenceMs += ms;
        if (silenceMs >= endpointing) final({ speechFinal: true });
      } else if (sinceFinalMs !== undefined && utteranceEnd !== undefined) {
        sinceFinalMs += ms;
        if (sinceFinalMs >= utteranceEnd) {
          sinceFinalMs = undefined;
          send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: audioSeconds });
        }
      }
    };

    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        const message = new Uint8Array(data as Buffer);
        touch();
        conn.audioBytes += message.byteLength;
        conn.audioMessages.push(message.byteLength);
        // heard in 20 ms pieces, as a server that listens to the audio rather than to its messages: a message whose
        // first half is speech and second half silence starts the silence count in its middle, not at its end
        for (let at = 0; at < message.byteLength; at += pieceBytes) hear(message.subarray(at, at + pieceBytes));
        return;
      }
      let msg: { type?: unknown };
      try {
        msg = JSON.parse(data.toString()) as { type?: unknown };
      } catch {
        msg = {};
      }
      const type = typeof msg.type === 'string' ? msg.type : '';
      conn.controls.push(type || '(unknown)');
      switch (type) {
        case 'KeepAlive':
          touch();
          return;
        case 'Finalize':
          final({ speechFinal: false, fromFinalize: true });
          return;
        case 'CloseStream':
          if (speech) final({ speechFinal: true });
          setTimeout(() => {
            send({ type: 'Metadata', transaction_key: 'deprecated', request_id: 'fake', sha256: '', created: new Date().toISOString(), duration: audioSeconds, channels: 1 });
            ws.close(1000);
          }, (this.opts.finalDelayMs ?? 0) + 1);
          return;
        default:
          ws.close(1008, 'DATA-0000: the payload cannot be decoded as audio or is not a known control message');
      }
    });
    ws.on('close', (code) => {
      conn.closeCode = code;
      clearTimeout(idle);
    });
  }

  private async speak(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const text = await readBody(req);
    let body: Record<string, unknown> | null = null;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      body = null;
    }
    const entry: FakeSpeakRequest = { query, authorization: req.headers.authorization, body, status: 0 };
    this.speakRequests.push(entry);
    const fail = (status: number, errCode: string, errMsg: string) => {
      entry.status = status;
      const payload = JSON.stringify({ err_code: errCode, err_msg: errMsg, request_id: 'fake' });
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) }).end(payload);
    };
    if (req.method !== 'POST' || url.pathname !== '/v1/speak') return fail(404, 'NOT_FOUND', 'Not found');
    if (this.unauthorized(req.headers.authorization)) return fail(401, 'INVALID_AUTH', 'Invalid credentials.');
    const planned = this.refusals.shift();
    if (planned) return fail(planned, 'INTERNAL', 'The service is unavailable');
    const encoding = ENCODING_OF[query.encoding ?? 'linear16'];
    const sampleRate = Number(query.sample_rate ?? 24000);
    if (!encoding || !Number.isInteger(sampleRate)) return fail(400, 'UNSUPPORTED_AUDIO_FORMAT', 'Unsupported audio format');
    if (typeof body?.text !== 'string' || body.text.trim() === '') return fail(400, 'INVALID_QUERY_PARAMETER', 'text is required');
    const format = { encoding, sampleRate } as AudioFormat;
    if (this.opts.speakFirstByteDelayMs) await new Promise((r) => setTimeout(r, this.opts.speakFirstByteDelayMs));
    const audio = new ScriptedTextToSpeech({ msPerChar: this.opts.msPerChar ?? 60 }).render(body.text, format);
    entry.status = 200;
    res.writeHead(200, { 'Content-Type': encoding === 'mulaw' ? 'audio/mulaw' : encoding === 'alaw' ? 'audio/alaw' : 'audio/l16', 'dg-request-id': 'fake' });
    const chunk = Math.max(1, Math.round(sampleRate / 10) * (encoding === 'l16' ? 2 : 1));
    for (let i = 0; i < audio.length && !res.destroyed; i += chunk) {
      await new Promise<void>((resolve) => res.write(audio.subarray(i, i + chunk), () => resolve()));
    }
    res.end();
  }
}

/** The digital silence at the end of `s` (ms): the samples after its last non-silent one. */
function trailingSilenceMs(s: Int16Array, sampleRate: number): number {
  let n = 0;
  while (n < s.length && s[s.length - 1 - n] === 0) n++;
  return (n * 1000) / sampleRate;
}
