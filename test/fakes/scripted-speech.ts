/**
 * Scripted speech for the voice session's tests (docs/voice.md, "Testing"), and the test audio the speech
 * provider fakes share:
 *
 * - `ScriptedSpeechToText`: hears "speech" when pushed audio carries energy (mean |sample| above a threshold),
 *   answers `speech_started`, an interim every `interimEveryMs` of speech (growing prefixes of the scripted
 *   text), and the utterance's `final` (speechFinal) `finalDelayMs` after `finalize()` (or after
 *   `endpointingMs` of silence when set); a `finalize()` with no speech heard is answered with an empty final,
 *   as real recognizers answer. `injectUtterance(text)` bypasses audio for engine tests.
 * - `ScriptedTextToSpeech`: deterministic audio of a length proportional to the text (`msPerChar`), a tone
 *   burst per word or silence, after `firstAudioDelayMs`, in chunks of `chunkMs` paced by `realtimeFactor`,
 *   all on an injectable `sleep` (a `VirtualClock`'s makes it instant).
 * - `speechAudio`/`silenceAudio`/`meanAbsSample`: test audio in any `AudioFormat`.
 */
import type { SpeechToText, SttEvent, SttStream, SttStreamOptions } from '../../core/ports/speech-to-text.port.js';
import type { TextToSpeech, TtsAudio, TtsRequest } from '../../core/ports/text-to-speech.port.js';
import { concatBytes, type AudioFormat } from '../../core/voice/audio-format.js';
import { alawDecode, alawEncode, mulawDecode, mulawEncode } from '../../core/voice/g711.js';
import { AsyncQueue } from '../../plugins/async-queue.js';
import type { Sleep } from './scripted-language-model.js';
import { realSleep } from './real-sleep.js';

// ---------------------------------------------------------------------------------------------------------
// Test audio
// ---------------------------------------------------------------------------------------------------------

/** Encodes 16-bit samples in `format`'s encoding (mono). */
export function encodeSamples(samples: Int16Array, format: AudioFormat): Uint8Array {
  if (format.encoding === 'l16') {
    const out = new Uint8Array(samples.length * 2);
    const view = new DataView(out.buffer);
    samples.forEach((s, i) => view.setInt16(i * 2, s, true));
    return out;
  }
  return format.encoding === 'mulaw' ? mulawEncode(samples) : alawEncode(samples);
}

/** Decodes `audio` in `format` to 16-bit samples. */
export function decodeSamples(audio: Uint8Array, format: AudioFormat): Int16Array {
  if (format.encoding === 'l16') {
    const view = new DataView(audio.buffer, audio.byteOffset, audio.byteLength);
    const out = new Int16Array(Math.floor(audio.byteLength / 2));
    for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
    return out;
  }
  return format.encoding === 'mulaw' ? mulawDecode(audio) : alawDecode(audio);
}

/** Mean |sample| of `audio` (0 for digital silence; a speech-level tone is thousands). */
export function meanAbsSample(audio: Uint8Array, format: AudioFormat): number {
  return meanAbs(decodeSamples(audio, format));
}

/** Mean |sample| of decoded samples (0 for none). */
export function meanAbs(s: Int16Array): number {
  if (s.length === 0) return 0;
  let sum = 0;
  for (const x of s) sum += Math.abs(x);
  return sum / s.length;
}

/** `ms` of a speech-level tone (`hz`, amplitude 8000) in `format`. */
export function speechAudio(format: AudioFormat, ms: number, hz = 440): Uint8Array {
  const n = Math.round((format.sampleRate * ms) / 1000);
  const samples = new Int16Array(n);
  for (let i = 0; i < n; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / format.sampleRate));
  return encodeSamples(samples, format);
}

/** `ms` of digital silence in `format` (μ-law 0xFF, A-law 0xD5, l16 zeros). */
export function silenceAudio(format: AudioFormat, ms: number): Uint8Array {
  return encodeSamples(new Int16Array(Math.round((format.sampleRate * ms) / 1000)), format);
}

/** Audio of `format` in 20 ms frames (the carriers' framing). */
export function frames(audio: Uint8Array, format: AudioFormat, ms = 20): Uint8Array[] {
  const size = Math.round((format.sampleRate * ms) / 1000) * (format.encoding === 'l16' ? 2 : 1);
  const out: Uint8Array[] = [];
  for (let i = 0; i < audio.length; i += size) out.push(audio.subarray(i, i + size));
  return out;
}

export const durationMs = (audio: Uint8Array | number, format: AudioFormat): number =>
  ((typeof audio === 'number' ? audio : audio.byteLength) / (format.encoding === 'l16' ? 2 : 1) / format.sampleRate) * 1000;

// ---------------------------------------------------------------------------------------------------------
// Scripted speech-to-text
// ---------------------------------------------------------------------------------------------------------

export interface ScriptedSttOptions {
  /** Transcripts of the caller's successive utterances; the default text when the script runs out. */
  utterances?: string[];
  defaultText?: string;
  /** Mean |sample| above which pushed audio counts as speech. Default 500. */
  energyThreshold?: number;
  /** An interim per this much speech (ms). Default 200; 0: no interims. */
  interimEveryMs?: number;
  /** From `finalize()` (or the endpointing silence) to the `final` (ms). Default 0. */
  finalDelayMs?: number;
  /** When set, this much silence after speech ends the utterance without `finalize()` (provider endpointing). */
  endpointingMs?: number;
  /** Time (a VirtualClock's sleep makes delays instant). */
  sleep?: Sleep;
  /** `open` fails with this (then the option is cleared). */
  failNextOpen?: Error;
}

export class ScriptedSpeechToText implements SpeechToText {
  readonly streams: ScriptedSttStream[] = [];
  private readonly script: string[];

  constructor(private readonly opts: ScriptedSttOptions = {}) {
    this.script = [...(opts.utterances ?? [])];
  }

  /** Queues the transcripts of further utterances. */
  say(...texts: string[]): this {
    this.script.push(...texts);
    return this;
  }

  /** The next utterance's transcript (the script's head, else the default). */
  nextTranscript(): string {
    return this.script.shift() ?? this.opts.defaultText ?? 'hello';
  }

  async open(options: SttStreamOptions): Promise<SttStream> {
    options.signal?.throwIfAborted();
    const failure = this.opts.failNextOpen;
    if (failure) {
      this.opts.failNextOpen = undefined;
      throw failure;
    }
    const stream = new ScriptedSttStream(this, this.opts, options);
    this.streams.push(stream);
    return stream;
  }

  /** The last opened stream. */
  get current(): ScriptedSttStream | undefined {
    return this.streams[this.streams.length - 1];
  }
}

export class ScriptedSttStream implements SttStream {
  readonly events = new AsyncQueue<SttEvent>();
  readonly interimResults: boolean;
  pushedBytes = 0;
  finalizeCalls = 0;
  closed = false;
  private speech: { text: string; voicedMs: number; interims: number } | undefined;
  private silenceMs = 0;
  private readonly sleep: Sleep;

  constructor(
    private readonly owner: ScriptedSpeechToText,
    private readonly opts: ScriptedSttOptions,
    readonly options: SttStreamOptions,
  ) {
    this.sleep = opts.sleep ?? realSleep;
    this.interimResults = (opts.interimEveryMs ?? 200) > 0;
    options.signal?.addEventListener('abort', () => void this.close(), { once: true });
  }

  push(audio: Uint8Array): void {
    if (this.closed || audio.byteLength === 0) return;
    this.pushedBytes += audio.byteLength;
    // judged per 20 ms, whatever the chunking: a real recognizer does not hear chunk boundaries
    const step = Math.max(1, Math.round(audio.byteLength / Math.max(1, durationMs(audio, this.options.format) / 20)));
    for (let at = 0; at < audio.byteLength; at += step) this.hear(audio.subarray(at, Math.min(audio.byteLength, at + step)));
  }

  private hear(audio: Uint8Array): void {
    const ms = durationMs(audio, this.options.format);
    if (meanAbsSample(audio, this.options.format) > (this.opts.energyThreshold ?? 500)) {
      this.silenceMs = 0;
      if (!this.speech) {
        this.speech = { text: this.owner.nextTranscript(), voicedMs: 0, interims: 0 };
        this.events.push({ type: 'speech_started' });
      }
      this.speech.voicedMs += ms;
      const every = this.opts.interimEveryMs ?? 200;
      if (every > 0 && this.speech.voicedMs >= every * (this.speech.interims + 1)) {
        this.speech.interims++;
        const words = this.speech.text.split(/\s+/).filter(Boolean);
        this.events.push({ type: 'interim', text: words.slice(0, Math.max(1, Math.min(words.length, this.speech.interims))).join(' ') });
      }
    } else if (this.speech && this.opts.endpointingMs !== undefined) {
      this.silenceMs += ms;
      if (this.silenceMs >= this.opts.endpointingMs) this.endUtterance();
    }
  }

  finalize(): void {
    if (this.closed) return;
    this.finalizeCalls++;
    // a recognizer answers every finalize, with an empty final when it heard no words (Deepgram's from_finalize
    // result, an upload's empty text): noise the VAD took for speech is judged then, not at maxDelayMs
    if (!this.speech) {
      void this.sleep(this.opts.finalDelayMs ?? 0).then(() => {
        if (!this.closed) this.events.push({ type: 'final', text: '', speechFinal: true });
      });
      return;
    }
    this.endUtterance();
  }

  /** Ends an utterance heard from no audio at all (pure-text mode): interims skipped, the final as scripted. */
  injectUtterance(text: string): void {
    if (this.closed) return;
    this.events.push({ type: 'speech_started' });
    this.speech = { text, voicedMs: 0, interims: 0 };
    this.endUtterance();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.events.end();
  }

  private endUtterance(): void {
    const speech = this.speech;
    if (!speech) return;
    this.speech = undefined;
    this.silenceMs = 0;
    void this.sleep(this.opts.finalDelayMs ?? 0).then(() => {
      this.events.push({ type: 'final', text: speech.text, speechFinal: true });
    });
  }
}

/** A ScriptedSpeechToText fed by audio only through `injectUtterance`, for engine tests. */
export function injectUserText(stt: ScriptedSpeechToText, text: string): void {
  const stream = stt.current;
  if (!stream) throw new Error('no open scripted STT stream');
  stream.injectUtterance(text);
}

// ---------------------------------------------------------------------------------------------------------
// Scripted text-to-speech
// ---------------------------------------------------------------------------------------------------------

export interface ScriptedTtsOptions {
  /** Audio per character of text (ms). Default 60. */
  msPerChar?: number;
  /** From the request to the first chunk (ms). Default 0. */
  firstAudioDelayMs?: number;
  /** Chunk length (ms of audio). Default 20. */
  chunkMs?: number;
  /** Audio ms produced per ms of (slept) time; 0: no pacing. Default 0. */
  realtimeFactor?: number;
  /** `tone` (a burst per word, a gap between words) or `silence`. Default tone. */
  audio?: 'tone' | 'silence';
  /** The format it always answers in; default: the request's preferred format. */
  format?: AudioFormat;
  sleep?: Sleep;
  /** `synthesize` fails with this for texts it matches. */
  failOn?: { match: RegExp; error: Error };
}

export class ScriptedTextToSpeech implements TextToSpeech {
  readonly requests: TtsRequest[] = [];
  private readonly sleep: Sleep;

  constructor(private readonly opts: ScriptedTtsOptions = {}) {
    this.sleep = opts.sleep ?? realSleep;
  }

  /** The audio length `text` gets (ms). */
  durationMsOf(text: string): number {
    return text.length * (this.opts.msPerChar ?? 60);
  }

  /** The whole audio `text` gets in `format` (what the chunks concatenate to). */
  render(text: string, format: AudioFormat): Uint8Array {
    const perChar = this.opts.msPerChar ?? 60;
    if (this.opts.audio === 'silence') return silenceAudio(format, this.durationMsOf(text));
    const parts = (text.match(/\S+\s*|\s+/g) ?? []).map((w) => {
      const word = w.trimEnd();
      return [speechAudio(format, word.length * perChar), silenceAudio(format, (w.length - word.length) * perChar)];
    });
    return concatBytes(parts.flat());
  }

  async synthesize(request: TtsRequest): Promise<TtsAudio> {
    request.signal?.throwIfAborted();
    this.requests.push(request);
    if (this.opts.failOn?.match.test(request.text)) throw this.opts.failOn.error;
    const format = this.opts.format ?? request.preferredFormat;
    const audio = this.render(request.text, format);
    const chunk = Math.max(1, Math.round(((this.opts.chunkMs ?? 20) * format.sampleRate) / 1000) * (format.encoding === 'l16' ? 2 : 1));
    const { sleep, opts } = this;
    async function* chunks(): AsyncGenerator<Uint8Array> {
      if (opts.firstAudioDelayMs) await sleep(opts.firstAudioDelayMs, request.signal);
      for (let i = 0; i < audio.length; i += chunk) {
        request.signal?.throwIfAborted();
        if (i > 0 && opts.realtimeFactor) await sleep((opts.chunkMs ?? 20) / opts.realtimeFactor, request.signal);
        yield audio.slice(i, i + chunk);
      }
      request.signal?.throwIfAborted();
    }
    return { format, chunks: chunks() };
  }
}
