/**
 * The only code that speaks Deepgram's Aura text-to-speech (docs/providers.md, "Deepgram"):
 * `POST <https base>/v1/speak?model=aura-2-…&encoding=mulaw&sample_rate=8000&container=none` with
 * `{"text": ...}` and `Authorization: Token <api_key>`, the audio streamed back raw (no container).
 *
 * - The https base is derived from the service's WebSocket `base_url` (wss → https, ws → http).
 * - Formats: μ-law/A-law at 8 kHz and linear16 at 8/16/24/48 kHz pass straight through; any other preference is
 *   answered as linear16 24 kHz (the pipeline converts).
 * - Every request goes through the host's policy fetch; a redirect is an error, never followed.
 * - Errors: `ProviderApiError('deepgram', <err_msg>)` (429/5xx retryable); the key never appears in one.
 *   Aborting ends the chunks with an `AbortError`.
 */
import { abortError, audioBodyChunks, NetworkPolicyError, ProviderApiError, type AudioFormat, type TextToSpeech, type TtsAudio, type TtsRequest } from '../../plugins/sdk.js';

const DEEPGRAM = 'deepgram';
export const DEEPGRAM_DEFAULT_TTS_MODEL = 'aura-2-thalia-en';

export interface DeepgramTtsOptions {
  apiKey: string;
  /** The service's `base_url` (`wss://api.deepgram.com`); its https form is used. */
  baseUrl: string;
  fetch: typeof fetch;
  /** When the request names neither a model nor a voice. Default `aura-2-thalia-en`. */
  model?: string;
}

/** `wss://api.deepgram.com/x` → `https://api.deepgram.com/x` (ws → http). */
export function deepgramHttpBase(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/^wss:/i, 'https:').replace(/^ws:/i, 'http:');
}

/** What Aura is asked for given the caller's preference (and what it will answer). */
export function auraFormat(preferred: AudioFormat): { format: AudioFormat; encoding: string } {
  if ((preferred.encoding === 'mulaw' || preferred.encoding === 'alaw') && preferred.sampleRate === 8000) {
    return { format: preferred, encoding: preferred.encoding };
  }
  if (preferred.encoding === 'l16' && [8000, 16000, 24000, 48000].includes(preferred.sampleRate)) return { format: preferred, encoding: 'linear16' };
  return { format: { encoding: 'l16', sampleRate: 24000 }, encoding: 'linear16' };
}

export class DeepgramTextToSpeech implements TextToSpeech {
  constructor(private readonly opts: DeepgramTtsOptions) {}

  async synthesize(request: TtsRequest): Promise<TtsAudio> {
    request.signal?.throwIfAborted();
    const { format, encoding } = auraFormat(request.preferredFormat);
    const url = new URL(`${deepgramHttpBase(this.opts.baseUrl)}/v1/speak`);
    // A Deepgram voice is a model (aura-2-<voice>-<lang>): the workflow's `voice` wins over its `model`.
    url.searchParams.set('model', request.voice || request.model || this.opts.model || DEEPGRAM_DEFAULT_TTS_MODEL);
    url.searchParams.set('encoding', encoding);
    url.searchParams.set('sample_rate', String(format.sampleRate));
    url.searchParams.set('container', 'none');
    let res: Response;
    try {
      res = await this.opts.fetch(url.href, {
        method: 'POST',
        headers: { authorization: `Token ${this.opts.apiKey}`, 'content-type': 'application/json', accept: 'audio/*' },
        body: JSON.stringify({ text: request.text }),
        redirect: 'manual',
        signal: request.signal,
      });
    } catch (err) {
      throw this.failure(err, request.signal);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => undefined);
      throw new ProviderApiError(DEEPGRAM, `Deepgram answered a redirect (HTTP ${res.status}), which is not followed; check base_url`, false);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      let detail = '';
      try {
        const parsed = JSON.parse(text) as { err_msg?: unknown; reason?: unknown; message?: unknown };
        detail = [parsed.err_msg, parsed.reason, parsed.message].find((x): x is string => typeof x === 'string' && x !== '') ?? '';
      } catch {
        detail = '';
      }
      throw new ProviderApiError(DEEPGRAM, this.redact(`Deepgram speak failed (HTTP ${res.status})${detail ? `: ${detail}` : ''}`), res.status === 429 || res.status >= 500);
    }
    const reader = res.body?.getReader();
    if (!reader) throw new ProviderApiError(DEEPGRAM, 'Deepgram answered without audio', true);
    const signal = request.signal;
    return { format, chunks: audioBodyChunks(reader, format, { signal, failure: (err) => this.failure(err, signal) }) };
  }

  private failure(err: unknown, signal?: AbortSignal): Error {
    if (signal?.aborted) return abortError(signal.reason);
    if (err instanceof ProviderApiError) return err;
    if (err instanceof NetworkPolicyError) return new ProviderApiError(DEEPGRAM, err.message, false);
    const e = err as { code?: unknown; message?: unknown };
    return new ProviderApiError(DEEPGRAM, this.redact(`Deepgram could not be reached (${typeof e?.code === 'string' ? e.code : String(e?.message ?? 'network error')})`), true);
  }

  private redact(text: string): string {
    return this.opts.apiKey ? text.split(this.opts.apiKey).join('***') : text;
  }
}
