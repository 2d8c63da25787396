/**
 * A fake ElevenLabs stream-input WebSocket on loopback, speaking the real protocol:
 * `GET /v1/text-to-speech/{voice_id}/stream-input?model_id&output_format` upgraded with the `xi-api-key`
 * header (a wrong key: HTTP 401 `{"detail":{"status":"invalid_api_key","message"}}`). The first message must be
 * `{"text":" "}` (with optional `voice_settings`); text messages are buffered and generated when they carry
 * `try_trigger_generation` or `flush`, or at `{"text":""}` (end of input), as `{"audio": <base64>, "isFinal":
 * false, "alignment", "normalizedAlignment"}` chunks (a tone burst per word, `msPerChar` per character, in the
 * requested `output_format`: ulaw_8000, alaw_8000, pcm_<rate>), then `{"isFinal": true}` and a 1000 close.
 * An unknown voice or output format gets an error message and a 1008 close; `inputTimeoutMs` without text
 * closes 1008 (`input_timeout_exceeded`). Tests read `connections`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { AudioFormat } from '../../../core/voice/audio-format.js';
import { ScriptedTextToSpeech } from '../scripted-speech.js';

export interface FakeElevenLabsOptions {
  apiKey?: string;
  /** Voice ids that exist; any when absent. */
  voices?: string[];
  /** Audio per character (ms). Default 60. */
  msPerChar?: number;
  /** Audio per message (ms). Default 100. */
  chunkMs?: number;
  /** Delay between audio messages (ms). Default 0. */
  chunkDelayMs?: number;
  /** Closes 1008 after this long without a text message (ms). Default 20 000. */
  inputTimeoutMs?: number;
}

export interface FakeElevenLabsConnection {
  voiceId: string;
  query: Record<string, string>;
  apiKey: string | undefined;
  /** Every client message, parsed. */
  received: Array<Record<string, unknown>>;
  audioMessages: number;
  closeCode?: number;
  socket: WebSocket;
}

const FORMATS: Record<string, AudioFormat> = {
  ulaw_8000: { encoding: 'mulaw', sampleRate: 8000 },
  alaw_8000: { encoding: 'alaw', sampleRate: 8000 },
  pcm_8000: { encoding: 'l16', sampleRate: 8000 },
  pcm_16000: { encoding: 'l16', sampleRate: 16000 },
  pcm_22050: { encoding: 'l16', sampleRate: 22050 },
  pcm_24000: { encoding: 'l16', sampleRate: 24000 },
  pcm_44100: { encoding: 'l16', sampleRate: 44100 },
  pcm_48000: { encoding: 'l16', sampleRate: 48000 },
};

export class FakeElevenLabsServer {
  readonly connections: FakeElevenLabsConnection[] = [];
  private readonly server = http.createServer((_q, s) => s.writeHead(404).end());
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly apiKey: string;

  private constructor(private readonly opts: FakeElevenLabsOptions) {
    this.apiKey = opts.apiKey ?? 'xi-test-key';
    this.server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
  }

  static async start(opts: FakeElevenLabsOptions = {}): Promise<FakeElevenLabsServer> {
    const fake = new FakeElevenLabsServer(opts);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get baseUrl(): string {
    return `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get key(): string {
    return this.apiKey;
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.socket.terminate();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const refuse = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
    };
    const match = /^\/v1\/text-to-speech\/([^/]+)\/stream-input$/.exec(url.pathname);
    if (!match) return refuse(404, { detail: 'Not Found' });
    const key = req.headers['xi-api-key'];
    if (key !== this.apiKey) return refuse(401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
    this.wss.handleUpgrade(req, socket, head, (ws) => this.session(ws, decodeURIComponent(match[1]!), Object.fromEntries(url.searchParams), typeof key === 'string' ? key : undefined));
  }

  private session(ws: WebSocket, voiceId: string, query: Record<string, string>, apiKey: string | undefined): void {
    const conn: FakeElevenLabsConnection = { voiceId, query, apiKey, received: [], audioMessages: 0, socket: ws };
    this.connections.push(conn);
    ws.on('close', (code) => {
      conn.closeCode = code;
      clearTimeout(idle);
    });
    const fail = (error: string, message: string) => {
      ws.send(JSON.stringify({ message, error, code: 1008 }));
      ws.close(1008, message.slice(0, 120));
    };
    let idle: ReturnType<typeof setTimeout> | undefined;
    const touch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => fail('input_timeout_exceeded', 'Have not received new text for the configured time.'), this.opts.inputTimeoutMs ?? 20_000);
    };
    touch();
    const format = FORMATS[query.output_format ?? 'mp3_44100_128'];
    if (!format) return fail('invalid_output_format', `Output format ${query.output_format ?? '(default mp3)'} is not supported by this fake`);
    if (this.opts.voices && !this.opts.voices.includes(voiceId)) return fail('voice_not_found', `A voice with the voice_id ${voiceId} was not found.`);
    const tts = new ScriptedTextToSpeech({ msPerChar: this.opts.msPerChar ?? 60 });
    let buffer = '';
    let started = false;
    let work = Promise.resolve();
    const generate = (text: string) => {
      work = work.then(async () => {
        if (text.trim() === '') return;
        const audio = tts.render(text, format);
        const size = Math.max(2, Math.round(((this.opts.chunkMs ?? 100) * format.sampleRate) / 1000) * (format.encoding === 'l16' ? 2 : 1));
        for (let i = 0; i < audio.length && ws.readyState === ws.OPEN; i += size) {
          if (this.opts.chunkDelayMs && i > 0) await new Promise((r) => setTimeout(r, this.opts.chunkDelayMs));
          const chars = [...text];
          const alignment = { chars, charStartTimesMs: chars.map((_, n) => n * (this.opts.msPerChar ?? 60)), charDurationsMs: chars.map(() => this.opts.msPerChar ?? 60) };
          conn.audioMessages++;
          if (ws.readyState === ws.OPEN) {
            ws.send(JSON.stringify({ audio: Buffer.from(audio.subarray(i, i + size)).toString('base64'), isFinal: false, normalizedAlignment: i === 0 ? alignment : null, alignment: i === 0 ? alignment : null }));
          }
        }
      });
    };
    ws.on('message', (data) => {
      let m: Record<string, unknown>;
      try {
        m = JSON.parse(data.toString()) as Record<string, unknown>;
      } catch {
        return fail('invalid_message', 'Messages must be JSON.');
      }
      conn.received.push(m);
      touch();
      if (typeof m.text !== 'string') return fail('invalid_message', 'Every message needs a text field.');
      if (!started) {
        if (m.text !== ' ') return fail('invalid_message', 'The first message must have text " " (a single space).');
        started = true;
        return;
      }
      if (m.text === '') {
        generate(buffer);
        buffer = '';
        void work.then(() => {
          if (ws.readyState !== ws.OPEN) return;
          ws.send(JSON.stringify({ isFinal: true }));
          ws.close(1000);
        });
        return;
      }
      buffer += m.text;
      if (m.try_trigger_generation === true || m.flush === true) {
        generate(buffer);
        buffer = '';
      }
    });
  }
}
