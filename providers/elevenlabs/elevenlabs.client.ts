/**
 * The only code that speaks ElevenLabs' stream-input protocol (docs/providers.md, "ElevenLabs"): one WebSocket
 * per synthesis, `<base_url>/v1/text-to-speech/{voice_id}/stream-input?model_id=…&output_format=ulaw_8000`
 * with the `xi-api-key` header.
 *
 * - Client → server: `{"text":" ", "voice_settings"}` opens the input, `{"text":"<text> ",
 *   "try_trigger_generation":true}` carries the sentence, `{"text":""}` ends the input (the server generates
 *   what is left, sends `isFinal` and closes).
 * - Server → client: `{"audio": <base64>, "isFinal", "alignment", "normalizedAlignment"}`; an error arrives as
 *   `{"error"|"message"}` and/or a close with a reason.
 * - Formats: μ-law/A-law 8 kHz straight through (`ulaw_8000`, `alaw_8000`), `pcm_<rate>` for L16 at a rate
 *   ElevenLabs offers; anything else is answered as `ulaw_8000`.
 * - The URL passes the host's network policy right before connecting (pinned address, no redirects).
 * - Errors: `ProviderApiError('elevenlabs', message)` without the key; an abort terminates the socket and the
 *   chunks end with an `AbortError`.
 */
import type { LookupFunction } from 'node:net';
import WebSocket from 'ws';
import { abortError, AsyncQueue, NetworkPolicyError, ProviderApiError, type AudioFormat, type ConnectPermit, type TextToSpeech, type TtsAudio, type TtsRequest } from '../../plugins/sdk.js';

const ELEVENLABS = 'elevenlabs';
/** A premade voice every account has ("Rachel"), used when the workflow names none. */
export const ELEVENLABS_DEFAULT_VOICE = '21m00Tcm4TlvDq8ikWAM';
export const ELEVENLABS_DEFAULT_MODEL = 'eleven_flash_v2_5';

export interface ElevenLabsTtsOptions {
  apiKey: string;
  /** `wss://api.elevenlabs.io` or a compatible root. */
  baseUrl: string;
  checkConnect: (url: string) => Promise<ConnectPermit>;
  /** Handshake bound (ms). Default 5000. */
  connectTimeoutMs?: number;
  voiceSettings?: { stability: number; similarity_boost: number };
}

const PCM_RATES = [8000, 16000, 22050, 24000, 44100, 48000];

/** The `output_format` asked for given the caller's preference, and the format it yields. */
export function elevenLabsFormat(preferred: AudioFormat): { outputFormat: string; format: AudioFormat } {
  if (preferred.encoding === 'mulaw' && preferred.sampleRate === 8000) return { outputFormat: 'ulaw_8000', format: preferred };
  if (preferred.encoding === 'alaw' && preferred.sampleRate === 8000) return { outputFormat: 'alaw_8000', format: preferred };
  if (preferred.encoding === 'l16' && PCM_RATES.includes(preferred.sampleRate)) return { outputFormat: `pcm_${preferred.sampleRate}`, format: preferred };
  return { outputFormat: 'ulaw_8000', format: { encoding: 'mulaw', sampleRate: 8000 } };
}

interface ServerMessage {
  audio?: string | null;
  isFinal?: boolean | null;
  error?: unknown;
  message?: unknown;
}

export class ElevenLabsTextToSpeech implements TextToSpeech {
  constructor(private readonly opts: ElevenLabsTtsOptions) {}

  async synthesize(request: TtsRequest): Promise<TtsAudio> {
    const signal = request.signal;
    signal?.throwIfAborted();
    const { outputFormat, format } = elevenLabsFormat(request.preferredFormat);
    const voice = encodeURIComponent(request.voice || ELEVENLABS_DEFAULT_VOICE);
    const url = new URL(`${this.opts.baseUrl.replace(/\/+$/, '')}/v1/text-to-speech/${voice}/stream-input`);
    url.searchParams.set('model_id', request.model || ELEVENLABS_DEFAULT_MODEL);
    url.searchParams.set('output_format', outputFormat);
    let permit: ConnectPermit;
    try {
      permit = await this.opts.checkConnect(url.href);
    } catch (err) {
      if (err instanceof NetworkPolicyError) throw new ProviderApiError(ELEVENLABS, err.message, false);
      throw err;
    }
    signal?.throwIfAborted();
    const ws = new WebSocket(url.href, {
      headers: { 'xi-api-key': this.opts.apiKey },
      lookup: permit.lookup as unknown as LookupFunction,
      handshakeTimeout: this.opts.connectTimeoutMs ?? 5000,
      followRedirects: false,
      perMessageDeflate: false,
    });
    // Handlers first: the server may answer (an error, even audio) in the same packet as the handshake.
    const queue = new AsyncQueue<Uint8Array>(() => ws.terminate());
    let finished = false;
    let serverError: string | undefined;
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let m: ServerMessage;
      try {
        m = JSON.parse(data.toString()) as ServerMessage;
      } catch {
        return;
      }
      if (typeof m.audio === 'string' && m.audio !== '') queue.push(new Uint8Array(Buffer.from(m.audio, 'base64')));
      const error = errorText(m);
      if (error) serverError = error;
      if (m.isFinal === true) {
        finished = true;
        queue.end();
        ws.close(1000);
      }
    });
    const onAbort = () => ws.terminate();
    let opened = false;
    let rejectOpening: ((err: Error) => void) | undefined;
    ws.once('close', (code, reason) => {
      signal?.removeEventListener('abort', onAbort);
      if (!opened) {
        rejectOpening?.(signal?.aborted ? abortError(signal.reason) : new ProviderApiError(ELEVENLABS, 'ElevenLabs closed the connection during the handshake', true));
        return;
      }
      if (signal?.aborted) return queue.fail(abortError(signal.reason));
      if (finished) return queue.end();
      const why = [serverError, reason.toString()].filter(Boolean).join('; ') || `code ${code}`;
      queue.fail(new ProviderApiError(ELEVENLABS, this.redact(`ElevenLabs ended the synthesis early: ${why}`), code !== 1008));
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => {
          opened = true;
          resolve();
        });
        ws.once('unexpected-response', (req, res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.length < 16 && chunks.push(c));
          res.on('end', () => {
            req.destroy();
            reject(this.handshakeError(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
          });
          res.on('error', () => reject(this.handshakeError(res.statusCode ?? 0, '')));
        });
        ws.once('error', (err) => reject(signal?.aborted ? abortError(signal.reason) : new ProviderApiError(ELEVENLABS, this.redact(`ElevenLabs could not be reached: ${messageOf(err)}`), true)));
        rejectOpening = reject;
      });
    } catch (err) {
      signal?.removeEventListener('abort', onAbort);
      ws.terminate();
      throw err;
    }
    ws.removeAllListeners('error');
    ws.on('error', () => undefined); // reported through the close that follows
    ws.send(JSON.stringify({ text: ' ', voice_settings: this.opts.voiceSettings ?? { stability: 0.5, similarity_boost: 0.8 } }));
    ws.send(JSON.stringify({ text: `${request.text.trim()} `, try_trigger_generation: true }));
    ws.send(JSON.stringify({ text: '' }));
    return { format, chunks: withAbort(queue, signal) };
  }

  private handshakeError(status: number, body: string): ProviderApiError {
    if (status >= 300 && status < 400) {
      return new ProviderApiError(ELEVENLABS, `ElevenLabs answered a redirect (HTTP ${status}), which is not followed; check base_url`, false);
    }
    let detail = '';
    try {
      const parsed = JSON.parse(body) as { detail?: unknown; message?: unknown };
      const d = parsed.detail;
      detail = typeof d === 'string' ? d : typeof (d as { message?: unknown })?.message === 'string' ? String((d as { message: string }).message) : typeof parsed.message === 'string' ? parsed.message : '';
    } catch {
      detail = '';
    }
    return new ProviderApiError(ELEVENLABS, this.redact(`ElevenLabs refused the connection (HTTP ${status})${detail ? `: ${detail}` : ''}`), status === 429 || status >= 500);
  }

  private redact(text: string): string {
    return this.opts.apiKey ? text.split(this.opts.apiKey).join('***') : text;
  }
}

/** The chunks, ending with an AbortError as soon as `signal` aborts (even between chunks). */
async function* withAbort(queue: AsyncQueue<Uint8Array>, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  for await (const chunk of queue) {
    if (signal?.aborted) throw abortError(signal.reason);
    yield chunk;
    if (signal?.aborted) throw abortError(signal.reason);
  }
}

function errorText(m: ServerMessage): string | undefined {
  const e = m.error;
  if (typeof e === 'string' && e !== '') return typeof m.message === 'string' && m.message !== '' ? `${e}: ${m.message}` : e;
  if (typeof m.message === 'string' && m.message !== '' && m.audio === undefined) return m.message;
  return undefined;
}

function messageOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  return typeof e?.code === 'string' ? e.code : typeof e?.message === 'string' ? e.message : 'network error';
}
