import type { VadEvent, VadOptions, VoiceActivityDetector } from '../ports/voice-activity-detector.port.js';

/**
 * The part every voice activity detector shares (docs/voice.md "Audio path"): PCM is cut into 32 ms windows
 * (256 samples at 8 kHz, 512 at 16 kHz, Silero's native sizes) whatever the push sizes, each window is scored
 * as a speech probability by the concrete detector, and hysteresis turns scores into events:
 * - speech starts once consecutive windows scoring ≥ `threshold` add up to `minSpeechMs`; `atMs` is the start
 *   of the first of them (the onset);
 * - speech stops once `minSilenceMs` of the audio after its end is judged silent (consecutive windows scoring
 *   below `threshold - 0.15`); `atMs` is where the speech ended. That end is found at 8 ms resolution: the end of
 *   the last 8 ms block, in the last window still judged speech, loud enough for the detector to call it sound
 *   (`soundDbfs`: Silero's gate, the energy detector's speech level). A 32 ms window scored as speech is often
 *   sound for only its first part; counting the silence from the window's end instead held every stop back by
 *   up to a window (16 ms on average) and, through the whole-window count (ceil(300 / 32) = 10 windows =
 *   320 ms), by another 20 ms. The stop does not wait for a window's end either: once every window is scored and
 *   the part of the window being filled holds no sound, the push that completes `minSilenceMs` stops speech.
 *   The silence counted is never less than `minSilenceMs` and the end never moves back by a window or more.
 * Times are stream time: samples pushed since the detector was created, in milliseconds. A window's score may
 * come after `push` returned (Silero scores windows in batches): the event then goes to `onEvent`.
 */

export const VAD_DEFAULTS = Object.freeze({ threshold: 0.5, minSpeechMs: 64, minSilenceMs: 300 });
/** How far below `threshold` a score must fall to count as silence once inside speech. */
export const VAD_RELEASE_MARGIN = 0.15;
export const VAD_WINDOW_MS = 32;
/** The resolution of the end of speech inside a window. */
export const VAD_BLOCK_MS = 8;

export type ResolvedVadOptions = Required<Omit<VadOptions, 'onEvent' | 'onWindow'>> & { windowSamples: number };

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

/**
 * Windowing, hysteresis and event delivery for a detector whose scores may come later than its audio (the
 * VoiceActivityDetector port's timing contract): each full window goes to `acceptWindow`, and the subclass
 * calls `settle(p)` once per accepted window, in the order they were accepted, now or later. A score given
 * during `push` is returned by it; a later one goes to `options.onEvent` (or, without a listener, to the
 * next `push`). Event times are the stream time of the window, however late its score.
 */
export abstract class DeferredScoreVoiceActivityDetector implements VoiceActivityDetector {
  protected readonly options: ResolvedVadOptions;
  private readonly onEvent: ((event: VadEvent) => void) | undefined;
  private readonly onWindow: ((speech: boolean, endMs: number) => void) | undefined;
  private readonly window: Int16Array;
  private filled = 0;
  /** Stream time (samples pushed since creation) at the start of the window being filled. */
  private clock = 0;
  /** Start (in samples) of each accepted window still waiting for its score, oldest first. */
  private readonly waiting: number[] = [];
  /** For each waiting window, where its sound ends (samples from its start; 0: no block loud enough). */
  private readonly waitingSoundEnd: number[] = [];
  /** Events of the `push` under way (scores given synchronously). */
  private collecting: VadEvent[] | null = null;
  /** Events scored later with no listener: the next `push` returns them. */
  private readonly undelivered: VadEvent[] = [];
  private closed = false;
  private inSpeech = false;
  private run = 0;
  private runStart = 0;
  /** In speech: where the sound of the last window judged speech ended (stream samples). */
  private speechSoundEnd = 0;
  private readonly speechWindows: number;
  /** `minSilenceMs` in samples (at least one window). */
  private readonly silenceSamples: number;
  private readonly release: number;
  private readonly blockSamples: number;
  /** Mean square (of int16 samples) at `soundDbfs`: a block at least this loud is sound. */
  private readonly soundPower: number;

  /** `soundDbfs`: the level (RMS dBFS) from which the concrete detector calls a stretch of audio sound. */
  protected constructor(options: VadOptions, soundDbfs: number) {
    this.options = resolveVadOptions(options);
    this.onEvent = options.onEvent;
    this.onWindow = options.onWindow;
    this.window = new Int16Array(this.options.windowSamples);
    this.speechWindows = Math.max(1, Math.ceil(this.options.minSpeechMs / VAD_WINDOW_MS));
    this.silenceSamples = Math.max(this.options.windowSamples, Math.round((this.options.minSilenceMs * this.options.sampleRate) / 1000));
    this.release = Math.max(0.01, this.options.threshold - VAD_RELEASE_MARGIN);
    this.blockSamples = (this.options.sampleRate / 1000) * VAD_BLOCK_MS;
    const amplitude = 32768 * 10 ** (soundDbfs / 20);
    this.soundPower = amplitude * amplitude;
  }

  /**
   * Where the sound in `pcm[0, length)` ends: the end of its last block at least `soundDbfs` loud (0: none is).
   * Blocks are counted from the start; a partial last block is judged on its own length.
   */
  private soundEnd(pcm: Int16Array, length = pcm.length): number {
    const block = this.blockSamples;
    for (let end = length; end > 0; ) {
      const from = end - (end % block || block);
      let sum = 0;
      for (let i = from; i < end; i++) sum += pcm[i] * pcm[i];
      if (sum >= this.soundPower * (end - from)) return end;
      end = from;
    }
    return 0;
  }

  /**
   * One full window, in stream order. The array is reused for the next window: copy what is needed before
   * returning. The subclass must call `settle` once for it, after the windows before it (not after `reset`
   * or `close`, which drop the windows still waiting).
   */
  protected abstract acceptWindow(window: Int16Array): void;
  /** Forgets model state carried between windows and any window still waiting for its score. */
  protected abstract resetModel(): void;
  /** The detector is closed: release what it holds. */
  protected closeModel(): void {
    // nothing by default
  }

  get speaking(): boolean {
    return this.inSpeech;
  }

  /** Windows accepted whose score has not come yet. */
  protected get unscoredWindows(): number {
    return this.waiting.length;
  }

  push(pcm: Int16Array): VadEvent[] {
    const events = this.undelivered.length > 0 ? this.undelivered.splice(0) : [];
    if (this.closed) return events;
    const size = this.window.length;
    let offset = 0;
    this.collecting = events;
    try {
      while (offset < pcm.length) {
        const take = Math.min(size - this.filled, pcm.length - offset);
        this.window.set(pcm.subarray(offset, offset + take), this.filled);
        this.filled += take;
        offset += take;
        if (this.filled < size) {
          this.stopInsideWindow();
          break;
        }
        this.filled = 0;
        this.waiting.push(this.clock);
        this.waitingSoundEnd.push(this.soundEnd(this.window));
        this.clock += size;
        this.acceptWindow(this.window);
      }
    } finally {
      this.collecting = null;
    }
    return events;
  }

  /**
   * The silence can be long enough before the window being filled is complete: with every window before it
   * scored, speech in progress and its silence under way, speech stops as soon as `minSilenceMs` have passed
   * since it ended and the part of the window filled so far holds no sound. A 32 ms window boundary is not the
   * caller's: waiting for it held the stop back by up to a window.
   */
  private stopInsideWindow(): void {
    if (!this.inSpeech || this.run === 0 || this.waiting.length > 0) return;
    if (this.clock + this.filled - this.runStart < this.silenceSamples) return;
    if (this.soundEnd(this.window, this.filled) > 0) return;
    this.inSpeech = false;
    this.run = 0;
    this.deliver({ type: 'speech_stop', atMs: (this.runStart * 1000) / this.options.sampleRate });
  }

  private deliver(event: VadEvent): void {
    if (this.collecting) this.collecting.push(event);
    else if (this.onEvent) this.onEvent(event);
    else this.undelivered.push(event);
  }

  /** The score (0..1) of the oldest window still waiting; steps the hysteresis and delivers its event. */
  protected settle(p: number): void {
    const start = this.waiting.shift();
    if (start === undefined) return; // dropped by reset or close
    const soundEnd = this.waitingSoundEnd.shift()!;
    const event = this.step(p, start, soundEnd);
    this.onWindow?.(p >= this.options.threshold, ((start + this.window.length) * 1000) / this.options.sampleRate);
    if (event) this.deliver(event);
  }

  reset(): void {
    this.clock += this.filled; // the dropped partial window still happened
    this.filled = 0;
    this.waiting.length = 0;
    this.waitingSoundEnd.length = 0;
    this.inSpeech = false;
    this.run = 0;
    this.resetModel();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.waiting.length = 0;
    this.waitingSoundEnd.length = 0;
    this.closeModel();
  }

  private step(p: number, start: number, soundEnd: number): VadEvent | null {
    const atMs = (sample: number) => (sample * 1000) / this.options.sampleRate;
    if (!this.inSpeech) {
      if (p >= this.options.threshold) {
        if (this.run === 0) this.runStart = start;
        if (++this.run >= this.speechWindows) {
          this.inSpeech = true;
          this.run = 0;
          this.speechSoundEnd = start + (soundEnd > 0 ? soundEnd : this.window.length);
          return { type: 'speech_start', atMs: atMs(this.runStart) };
        }
      } else this.run = 0;
      return null;
    }
    if (p < this.release) {
      // the silence began where the last window judged speech stopped sounding (never before that window)
      if (this.run === 0) this.runStart = Math.min(start, this.speechSoundEnd);
      this.run++;
      if (start + this.window.length - this.runStart >= this.silenceSamples) {
        this.inSpeech = false;
        this.run = 0;
        return { type: 'speech_stop', atMs: atMs(this.runStart) };
      }
    } else {
      this.run = 0;
      this.speechSoundEnd = start + (soundEnd > 0 ? soundEnd : this.window.length);
    }
    return null;
  }
}

/** A detector that scores each window synchronously, as it is cut (the energy detector). */
export abstract class WindowedVoiceActivityDetector extends DeferredScoreVoiceActivityDetector {
  protected constructor(options: VadOptions, soundDbfs: number) {
    super(options, soundDbfs);
  }

  /** The speech probability (0..1) of one full window. Must not throw (score 0 when unsure). */
  protected abstract score(window: Int16Array): number;

  protected acceptWindow(window: Int16Array): void {
    this.settle(this.score(window));
  }
}
