/**
 * The audio endpoints of the fake OpenAI server (fake-openai-server.ts routes `/v1/audio/*` here), speaking the
 * real wire format:
 *
 * - `POST /v1/audio/transcriptions`, multipart/form-data with `file` (WAV), `model`, `language`,
 *   `response_format` → `{"text": ...}`: the next scripted transcript (`transcribeAs`) when the audio carries
 *   speech energy, `""` for silence. Audio under 0.1 s answers OpenAI's 400 ("Audio file is too short"); a
 *   file that is no WAV answers 400 "Invalid file format".
 * - `POST /v1/audio/speech {model, voice, input, response_format}` → the audio streamed: `pcm` (16-bit
 *   24 kHz mono, a tone burst per word, `msPerChar` per character) in odd-sized chunks so clients must keep
 *   samples whole; other formats are refused with 400 by this fake.
 *
 * Errors use OpenAI's `{error: {message, type, param, code}}`; `failNext` plans them. Every request is in
 * `requests`.
 */
import type http from 'node:http';
import { L16_24K } from '../../../core/voice/audio-format.js';
import { readWav } from '../../../core/voice/wav.js';
import { sendJson } from '../fake-http-server.js';
import { ScriptedTextToSpeech } from '../scripted-speech.js';

export interface RecordedOpenAiAudioRequest {
  path: string;
  authorization: string | undefined;
  /** Transcriptions: the form fields; speech: the JSON body. */
  fields: Record<string, unknown>;
  /** Transcriptions: what the WAV held. */
  wav?: { formatCode: number; sampleRate: number; bitsPerSample: number; channels: number; durationMs: number; meanAbs: number };
  status: number;
}

export interface FakeOpenAiSpeechOptions {
  /** Speech: audio per character (ms). Default 60. */
  msPerChar?: number;
  /** Transcriptions: delay before answering (ms). Default 0. */
  transcriptionDelayMs?: number;
  /** Transcript when the script runs out. */
  defaultText?: string;
}

export class FakeOpenAiSpeech {
  readonly requests: RecordedOpenAiAudioRequest[] = [];
  private readonly transcripts: string[] = [];
  private readonly failures: Array<{ status: number; message: string }> = [];

  constructor(readonly opts: FakeOpenAiSpeechOptions = {}) {}

  /** The next transcriptions of speech answer these texts, in order. */
  transcribeAs(...texts: string[]): this {
    this.transcripts.push(...texts);
    return this;
  }

  /** The next `count` audio requests fail with `status` and OpenAI's error body. */
  failNext(count: number, status: number, message = 'The server had an error while processing your request.'): void {
    for (let i = 0; i < count; i++) this.failures.push({ status, message });
  }

  static handles(path: string): boolean {
    return path.startsWith('/v1/audio/');
  }

  /** Answers one `/v1/audio/*` request; `apiKey` is the server's key check (none when undefined). */
  async handle(req: http.IncomingMessage, res: http.ServerResponse, apiKey: string | undefined): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const raw = await readRaw(req);
    const entry: RecordedOpenAiAudioRequest = { path, authorization: req.headers.authorization, fields: {}, status: 0 };
    this.requests.push(entry);
    const reply = (status: number, body: unknown) => {
      entry.status = status;
      sendJson(res, status, body);
    };
    const error = (status: number, message: string, type = 'invalid_request_error', param: string | null = null) => reply(status, { error: { message, type, param, code: null } });
    if (req.method !== 'POST' || (path !== '/v1/audio/transcriptions' && path !== '/v1/audio/speech')) return error(404, `Invalid URL (${req.method} ${path})`);
    if (apiKey !== undefined && entry.authorization !== `Bearer ${apiKey}`) {
      return error(401, `Incorrect API key provided: ${entry.authorization?.replace(/^Bearer /, '') ?? ''}.`, 'invalid_request_error');
    }
    const planned = this.failures.shift();
    if (planned) return error(planned.status, planned.message, planned.status >= 500 ? 'server_error' : 'invalid_request_error');
    if (path === '/v1/audio/transcriptions') return this.transcribe(req, raw, entry, reply, error);
    return this.speak(raw, entry, res, error);
  }

  private async transcribe(
    req: http.IncomingMessage, raw: Buffer, entry: RecordedOpenAiAudioRequest, reply: (s: number, b: unknown) => void,
    error: (s: number, m: string, t?: string, p?: string | null) => void,
  ): Promise<void> {
    const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(req.headers['content-type'] ?? '');
    if (!boundary) return error(400, "Could not parse multipart form: the 'Content-Type' must be multipart/form-data");
    const parts = parseMultipart(raw, boundary[1] ?? boundary[2]!);
    let file: Buffer | undefined;
    for (const p of parts) {
      if (p.filename !== undefined && p.name === 'file') file = p.data;
      else entry.fields[p.name] = p.data.toString('utf8');
    }
    if (!file) return error(400, "you must provide a 'file' field", 'invalid_request_error', 'file');
    if (typeof entry.fields.model !== 'string') return error(400, "you must provide a model parameter", 'invalid_request_error', 'model');
    let wav: ReturnType<typeof readWav>;
    try {
      wav = readWav(new Uint8Array(file));
    } catch {
      return error(400, "Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']", 'invalid_request_error', 'file');
    }
    const durationMs = (wav.samples.length / wav.channels / wav.sampleRate) * 1000;
    let sum = 0;
    for (const s of wav.samples) sum += Math.abs(s);
    const meanAbs = wav.samples.length ? sum / wav.samples.length : 0;
    entry.wav = { formatCode: wav.formatCode, sampleRate: wav.sampleRate, bitsPerSample: wav.bitsPerSample, channels: wav.channels, durationMs, meanAbs };
    if (durationMs < 100) return error(400, 'Audio file is too short. Minimum audio length is 0.1 seconds.', 'invalid_request_error', 'file');
    if (this.opts.transcriptionDelayMs) await new Promise((r) => setTimeout(r, this.opts.transcriptionDelayMs));
    const text = meanAbs > 500 ? (this.transcripts.shift() ?? this.opts.defaultText ?? 'hello from the fake caller') : '';
    reply(200, { text });
  }

  private async speak(raw: Buffer, entry: RecordedOpenAiAudioRequest, res: http.ServerResponse, error: (s: number, m: string, t?: string, p?: string | null) => void): Promise<void> {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      return error(400, 'We could not parse the JSON body of your request.');
    }
    entry.fields = body;
    if (typeof body.model !== 'string') return error(400, "you must provide a model parameter", 'invalid_request_error', 'model');
    if (typeof body.input !== 'string' || body.input === '') return error(400, "[{'type': 'string_too_short', 'loc': ('body', 'input')}]", 'invalid_request_error', 'input');
    if (typeof body.voice !== 'string') return error(400, "you must provide a voice parameter", 'invalid_request_error', 'voice');
    if ((body.response_format ?? 'mp3') !== 'pcm') return error(400, `This fake only produces response_format 'pcm' (got ${String(body.response_format ?? 'mp3')})`, 'invalid_request_error', 'response_format');
    const audio = new ScriptedTextToSpeech({ msPerChar: this.opts.msPerChar ?? 60 }).render(body.input, L16_24K);
    entry.status = 200;
    res.writeHead(200, { 'Content-Type': 'audio/pcm', 'Transfer-Encoding': 'chunked' });
    const size = 4801; // odd on purpose: samples straddle chunks
    for (let i = 0; i < audio.length && !res.destroyed; i += size) {
      await new Promise<void>((resolve) => res.write(audio.subarray(i, i + size), () => resolve()));
    }
    res.end();
  }
}

function readRaw(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The parts of a multipart/form-data body. */
export function parseMultipart(body: Buffer, boundary: string): Array<{ name: string; filename?: string; data: Buffer }> {
  const delimiter = Buffer.from(`--${boundary}`);
  const out: Array<{ name: string; filename?: string; data: Buffer }> = [];
  let at = body.indexOf(delimiter);
  while (at >= 0) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delimiter, start);
    if (next < 0) break;
    const part = body.subarray(start + 2, next - 2); // after CRLF, before CRLF
    const headerEnd = part.indexOf('\r\n\r\n');
    const headers = part.subarray(0, headerEnd).toString('utf8');
    const name = /name="([^"]*)"/.exec(headers)?.[1] ?? '';
    const filename = /filename="([^"]*)"/.exec(headers)?.[1];
    out.push({ name, filename, data: part.subarray(headerEnd + 4) });
    at = next;
  }
  return out;
}
