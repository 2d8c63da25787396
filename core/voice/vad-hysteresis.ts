import type { VadEvent, VadOptions, VoiceActivityDetector } from '../ports/voice-activity-detector.port.js';

/**
 * The part every voice activity detector shares (docs/voice.md "Audio path"): PCM is cut into 32 ms windows
 * (256 samples at 8 kHz, 512 at 16 kHz, Silero's native sizes) whatever the push sizes, each window is scored
 * as a speech probability by the concrete detector, and hysteresis turns scores into events:
 * - speech starts once consecutive windows scoring ≥ `threshold` add up to `minSpeechMs`; `atMs` is the start
 *   of the first of them (the onset);
 * - speech stops once consecutive windows scoring below `threshold - 0.15` add up to `minSilenceMs`; `atMs` is
 *   the start of the first silent one (where the speech ended).
 * Times are stream time: samples pushed since the detector was created, in milliseconds.
 */

export const VAD_DEFAULTS = Object.freeze({ threshold: 0.5, minSpeechMs: 64, minSilenceMs: 300 });
/** How far below `threshold` a score must fall to count as silence once inside speech. */
export const VAD_RELEASE_MARGIN = 0.15;
export const VAD_WINDOW_MS = 32;

export type ResolvedVadOptions = Required<VadOptions> & { windowSamples: number };

/** Options with defaults filled in. Throws RangeError on a rate other than 8000/16000 or out-of-range values. */
export function resolveVadOptions(options: VadOptions): ResolvedVadOptions {
  const { sampleRate } = options;
  if (sampleRate !== 8000 && sampleRate !== 16000) throw new RangeError(`VAD sample rate must be 8000 or 16000, got ${String(sampleRate)}`);
  const threshold = options.threshold ?? VAD_DEFAULTS.threshold;
  const minSpeechMs = options.minSpeechMs ?? VAD_DEFAULTS.minSpeechMs;
  const minSilenceMs = options.minSilenceMs ?? VAD_DEFAULTS.minSilenceMs;
  if (!(threshold > 0 && threshold < 1)) throw new RangeError(`VAD threshold must be between 0 and 1, got ${threshold}`);
  if (!(minSpeechMs >= 0) || !(minSilenceMs >= 0)) throw new RangeError('VAD minSpeechMs and minSilenceMs must be ≥ 0');
  return { sampleRate, threshold, minSpeechMs, minSilenceMs, windowSamples: (sampleRate / 1000) * VAD_WINDOW_MS };
}

export abstract class WindowedVoiceActivityDetector implements VoiceActivityDetector {
  protected readonly options: ResolvedVadOptions;
  private readonly window: Int16Array;
  private filled = 0;
  /** Stream time (samples pushed since creation) at the start of the window being filled. */
  private clock = 0;
  private inSpeech = false;
  private readonly verdict = { speech: false, endMs: 0 };
  private run = 0;
  private runStart = 0;
  private readonly speechWindows: number;
  private readonly silenceWindows: number;
  private readonly release: number;

  protected constructor(options: VadOptions) {
    this.options = resolveVadOptions(options);
    this.window = new Int16Array(this.options.windowSamples);
    this.speechWindows = Math.max(1, Math.ceil(this.options.minSpeechMs / VAD_WINDOW_MS));
    this.silenceWindows = Math.max(1, Math.ceil(this.options.minSilenceMs / VAD_WINDOW_MS));
    this.release = Math.max(0.01, this.options.threshold - VAD_RELEASE_MARGIN);
  }

  /** The speech probability (0..1) of one full window. Must not throw (score 0 when unsure). */
  protected abstract score(window: Int16Array): number;
  /** Forgets model state carried between windows. */
  protected abstract resetModel(): void;

  get speaking(): boolean {
    return this.inSpeech;
  }

  get lastWindow(): { readonly speech: boolean; readonly endMs: number } {
    return this.verdict;
  }

  push(pcm: Int16Array): VadEvent[] {
    const events: VadEvent[] = [];
    const size = this.window.length;
    let offset = 0;
    while (offset < pcm.length) {
      const take = Math.min(size - this.filled, pcm.length - offset);
      this.window.set(pcm.subarray(offset, offset + take), this.filled);
      this.filled += take;
      offset += take;
      if (this.filled < size) break;
      this.filled = 0;
      const start = this.clock;
      this.clock += size;
      const p = this.score(this.window);
      this.verdict.speech = p >= this.options.threshold;
      this.verdict.endMs = (this.clock * 1000) / this.options.sampleRate;
      const event = this.step(p, start);
      if (event) events.push(event);
    }
    return events;
  }

  reset(): void {
    this.clock += this.filled; // the dropped partial window still happened
    this.filled = 0;
    this.inSpeech = false;
    this.run = 0;
    this.resetModel();
  }

  private step(p: number, start: number): VadEvent | null {
    const atMs = (sample: number) => (sample * 1000) / this.options.sampleRate;
    if (!this.inSpeech) {
      if (p >= this.options.threshold) {
        if (this.run === 0) this.runStart = start;
        if (++this.run >= this.speechWindows) {
          this.inSpeech = true;
          this.run = 0;
          return { type: 'speech_start', atMs: atMs(this.runStart) };
        }
      } else this.run = 0;
      return null;
    }
    if (p < this.release) {
      if (this.run === 0) this.runStart = start;
      if (++this.run >= this.silenceWindows) {
        this.inSpeech = false;
        this.run = 0;
        return { type: 'speech_stop', atMs: atMs(this.runStart) };
      }
    } else this.run = 0;
    return null;
  }
}
