/**
 * The only code that speaks OpenAI's audio endpoints (docs/providers.md, "OpenAI speech"); any compatible
 * server works (self-hosted whisper servers for transcription):
 *
 * - Speech-to-text, per endpointed utterance: `push` buffers the utterance's audio; `finalize()` (the VAD's
 *   end of speech) sends it as `POST <base_url>/audio/transcriptions`, multipart with `file` (a WAV of 16-bit
 *   PCM at the pushed rate, μ-law/A-law decoded), `model` (default `whisper-1`), `language` and
 *   `response_format=json`, and emits one `final` (speechFinal) with the answer's `text`. Utterances shorter
 *   than `minUtteranceMs` are not sent (OpenAI refuses audio under 0.1 s): their final is empty. Requests are
 *   answered in the order the utterances ended. No interim results.
 * - Text-to-speech: `POST <base_url>/audio/speech {model, voice, input, response_format: "pcm"}`, the body
 *   streamed as 16-bit PCM at 24 kHz (`L16_24K`, whole samples per chunk; the pipeline resamples).
 *
 * Every request goes through the host's policy fetch; a redirect is an error, never followed. 429/5xx are
 * retried (`maxRetries`) with backoff or the server's Retry-After. Errors are `ProviderApiError('openai',
 * <the server's error.message>)` without the key; a transcription that fails for good fails the stream.
 */
import type { SpeechToText, SttEvent, SttStream, SttStreamOptions, TextToSpeech, TtsAudio, TtsRequest } from '../../plugins/sdk.js';
import { abortError, AsyncQueue, audioBodyChunks, NetworkPolicyError, ProviderApiError, retryDelayMs } from '../../plugins/sdk.js';
import { L16_24K, type AudioFormat } from '../../core/voice/audio-format.js';
import { alawDecode, mulawDecode } from '../../core/voice/g711.js';
import { encodePcmWav } from '../../core/voice/wav.js';

const OPENAI = 'openai';
export const OPENAI_DEFAULT_STT_MODEL = 'whisper-1';
export const OPENAI_DEFAULT_TTS_MODEL = 'gpt-4o-mini-tts';
export const OPENAI_DEFAULT_TTS_VOICE = 'alloy';

export interface OpenAiSpeechOptions {
  /** Bearer token; local servers often need none. */
  apiKey?: string;
  /** `https://api.openai.com/v1` or a compatible root. */
  baseUrl: string;
  fetch: typeof fetch;
  /** Retries of a 429/5xx answer. Default 2. */
  maxRetries?: number;
  /** First backoff delay (ms). Default 300. */
  retryBaseDelayMs?: number;
  /** Bound of one transcription request, retries included (ms). Default 30 000. */
  timeoutMs?: number;
  /** Shorter utterances are not transcribed (ms). Default 100. */
  minUtteranceMs?: number;
  /** Audio kept per utterance (ms); older audio of a longer utterance is dropped. Default 120 000. */
  maxUtteranceMs?: number;
}

/** 16-bit samples of `audio` in `format`. */
function toPcm(audio: Uint8Array, format: AudioFormat): Int16Array {
  if (format.encoding === 'mulaw') return mulawDecode(audio);
  if (format.encoding === 'alaw') return alawDecode(audio);
  const n = audio.byteLength >> 1;
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const v = audio[2 * i]! | (audio[2 * i + 1]! << 8);
    out[i] = v >= 0x8000 ? v - 0x10000 : v;
  }
  return out;
}

/** A multipart/form-data body of text fields and one file (built here: the policy fetch sends bytes). */
export function multipartBody(fields: Record<string, string>, file: { name: string; filename: string; type: string; data: Uint8Array }): { body: Uint8Array; contentType: string } {
  const boundary = `----callplane${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(enc.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`));
  parts.push(file.data);
  parts.push(enc.encode(`\r\n--${boundary}--\r\n`));
  const body = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    body.set(p, at);
    at += p.byteLength;
  }
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The shared HTTP rules of both endpoints. */
class OpenAiAudioHttp {
  constructor(private readonly opts: OpenAiSpeechOptions) {}

  url(path: string): string {
    return `${this.opts.baseUrl.replace(/\/+$/, '')}${path}`;
  }

  /** POSTs, retrying 429/5xx; resolves with a 2xx response or throws ProviderApiError / AbortError. */
  async post(path: string, body: Uint8Array | string, contentType: string, signal: AbortSignal | undefined, accept: string): Promise<Response> {
    const headers: Record<string, string> = { 'content-type': contentType, accept };
    if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
    const maxRetries = this.opts.maxRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.opts.fetch(this.url(path), { method: 'POST', headers, body, redirect: 'manual', signal });
      } catch (err) {
        throw this.failure(err, signal);
      }
      if (res.ok) return res;
      const text = await res.text().catch(() => '');
      if (res.status >= 300 && res.status < 400) {
        throw new ProviderApiError(OPENAI, `The OpenAI-compatible server answered a redirect (HTTP ${res.status}), which is not followed; check base_url`, false);
      }
      const retryable = res.status === 429 || res.status >= 500;
      if (retryable && attempt < maxRetries) {
        const wait = retryDelayMs(attempt, res.headers.get('retry-after'), { retryBaseDelayMs: this.opts.retryBaseDelayMs ?? 300 });
        await sleep(wait, signal).catch((err: unknown) => {
          throw this.failure(err, signal);
        });
        continue;
      }
      let detail = '';
      try {
        const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; detail?: unknown };
        const e = parsed.error;
        detail = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : typeof parsed.detail === 'string' ? parsed.detail : '';
      } catch {
        detail = '';
      }
      throw new ProviderApiError(OPENAI, this.redact(detail || `The OpenAI-compatible server answered HTTP ${res.status}`), retryable);
    }
  }

  failure(err: unknown, signal?: AbortSignal): Error {
    if (signal?.aborted && (signal.reason as { name?: unknown } | undefined)?.name === 'TimeoutError') {
      return new ProviderApiError(OPENAI, 'The OpenAI-compatible server did not answer in time', true);
    }
    if (signal?.aborted) return abortError(signal.reason);
    if (err instanceof ProviderApiError) return err;
    if (err instanceof NetworkPolicyError) return new ProviderApiError(OPENAI, err.message, false);
    const e = err as { code?: unknown; message?: unknown };
    const why = typeof e?.code === 'string' ? e.code : typeof e?.message === 'string' ? e.message : 'network error';
    return new ProviderApiError(OPENAI, this.redact(`The OpenAI-compatible server could not be reached (${why})`), true);
  }

  redact(text: string): string {
    return this.opts.apiKey ? text.split(this.opts.apiKey).join('***') : text;
  }
}

export class OpenAiSpeechToText implements SpeechToText {
  private readonly http: OpenAiAudioHttp;
  constructor(private readonly opts: OpenAiSpeechOptions) {
    this.http = new OpenAiAudioHttp(opts);
  }

  async open(options: SttStreamOptions): Promise<SttStream> {
    options.signal?.throwIfAborted();
    return new OpenAiUtteranceStream(this.http, this.opts, options);
  }
}

class OpenAiUtteranceStream implements SttStream {
  readonly events: AsyncQueue<SttEvent>;
  /** Text comes per utterance, after `finalize`. */
  readonly interimResults = false;
  /**
   * The utterance's audio so far, `bytes` of it, in one buffer that grows by doubling: a call pushes 50 frames a
   * second and keeps them until the VAD's stop (a talking call gives it its speech only:
   * core/voice/utterance-gate.ts), and one object per frame kept for seconds was promoted to the old generation
   * (docs/benchmarks.md section 10: at 50 calls the service ran a full collection every 1-2 s).
   */
  private audio: Uint8Array | null = null;
  private bytes = 0;
  private capacity = 16_000;
  private finalizedSinceAudio = false;
  private closed = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly controller = new AbortController();
  private readonly bytesPerMs: number;

  constructor(
    private readonly http: OpenAiAudioHttp,
    private readonly opts: OpenAiSpeechOptions,
    private readonly options: SttStreamOptions,
  ) {
    this.bytesPerMs = (options.format.sampleRate / 1000) * (options.format.encoding === 'l16' ? 2 : 1);
    this.events = new AsyncQueue<SttEvent>(() => void this.close());
    options.signal?.addEventListener('abort', () => void this.close(), { once: true });
  }

  push(audio: Uint8Array): void {
    if (this.closed || audio.byteLength === 0) return;
    this.finalizedSinceAudio = false;
    const max = (this.opts.maxUtteranceMs ?? 120_000) * this.bytesPerMs;
    if (audio.byteLength >= max) {
      // longer than the limit by itself: its newest `max` bytes are the utterance
      this.bytes = 0;
      audio = audio.subarray(audio.byteLength - max);
    } else if (this.bytes + audio.byteLength > max) {
      // the oldest audio goes (whole samples: `max` and the frames are)
      const keep = max - audio.byteLength;
      this.audio!.copyWithin(0, this.bytes - keep, this.bytes);
      this.bytes = keep;
    }
    if (!this.audio || this.audio.byteLength < this.bytes + audio.byteLength) {
      while (this.capacity < this.bytes + audio.byteLength) this.capacity *= 2;
      const grown = new Uint8Array(this.capacity);
      if (this.audio) grown.set(this.audio.subarray(0, this.bytes));
      this.audio = grown;
    }
    this.audio.set(audio, this.bytes);
    this.bytes += audio.byteLength;
  }

  finalize(): void {
    if (this.closed || this.finalizedSinceAudio) return;
    this.finalizedSinceAudio = true;
    // the buffer goes with the request; the next utterance starts a new one
    const audio = this.audio ? this.audio.subarray(0, this.bytes) : new Uint8Array(0);
    this.audio = null;
    this.bytes = 0;
    this.chain = this.chain.then(async () => {
      if (this.closed) return;
      if (audio.byteLength / this.bytesPerMs < (this.opts.minUtteranceMs ?? 100)) {
        this.events.push({ type: 'final', text: '', speechFinal: true });
        return;
      }
      try {
        const text = await this.transcribe(audio);
        if (!this.closed) this.events.push({ type: 'final', text, speechFinal: true });
      } catch (err) {
        if (this.closed) return;
        this.closed = true;
        this.events.fail(err instanceof ProviderApiError ? err : this.http.failure(err));
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.audio = null;
    this.bytes = 0;
    this.controller.abort();
    this.events.end();
  }

  private async transcribe(audio: Uint8Array): Promise<string> {
    const wav = encodePcmWav(toPcm(audio, this.options.format), this.options.format.sampleRate);
    const fields: Record<string, string> = { model: this.options.model || OPENAI_DEFAULT_STT_MODEL, response_format: 'json' };
    if (this.options.language) fields.language = this.options.language;
    const { body, contentType } = multipartBody(fields, { name: 'file', filename: 'utterance.wav', type: 'audio/wav', data: wav });
    const signal = AbortSignal.any([this.controller.signal, AbortSignal.timeout(this.opts.timeoutMs ?? 30_000)]);
    const res = await this.http.post('/audio/transcriptions', body, contentType, signal, 'application/json');
    const text = await res.text().catch((err: unknown) => {
      throw this.http.failure(err, signal);
    });
    let parsed: { text?: unknown } | undefined;
    try {
      parsed = JSON.parse(text) as { text?: unknown };
    } catch {
      parsed = undefined;
    }
    if (typeof parsed?.text !== 'string') throw new ProviderApiError(OPENAI, 'The OpenAI-compatible server answered a transcription without text', true);
    return parsed.text.trim();
  }
}

export class OpenAiTextToSpeech implements TextToSpeech {
  private readonly http: OpenAiAudioHttp;
  constructor(opts: OpenAiSpeechOptions) {
    this.http = new OpenAiAudioHttp(opts);
  }

  async synthesize(request: TtsRequest): Promise<TtsAudio> {
    request.signal?.throwIfAborted();
    const body = JSON.stringify({
      model: request.model || OPENAI_DEFAULT_TTS_MODEL,
      voice: request.voice || OPENAI_DEFAULT_TTS_VOICE,
      input: request.text,
      response_format: 'pcm',
    });
    const res = await this.http.post('/audio/speech', body, 'application/json', request.signal, 'audio/pcm');
    const reader = res.body?.getReader();
    if (!reader) throw new ProviderApiError(OPENAI, 'The OpenAI-compatible server answered without audio', true);
    const signal = request.signal;
    return { format: L16_24K, chunks: audioBodyChunks(reader, L16_24K, { signal, failure: (err) => this.http.failure(err, signal) }) };
  }
}


function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
