/**
 * Finds the answering machine's beep in 8 kHz PCM (docs/voicemail.md "What decides"): a Goertzel bank over
 * 400-2000 Hz in 25 Hz steps, run on back-to-back 20 ms windows (a 20 ms window resolves 50 Hz, so a tone
 * half-way between two bins keeps 81 % of its power in the nearer one; a 32 ms window would keep 57 %). A window is tonal when it is loud enough
 * (`minDbfs`) and one bin holds most of its energy (`minTonality`: the bin's power relative to what a pure
 * sine of the window's energy would give, 1.0 for a pure tone). A beep is a run of tonal windows at a stable
 * frequency (peak within `maxDriftHz` of the run's first peak) lasting `minDurationMs`: speech changes pitch and
 * spreads its energy over harmonics, noise has no peak, a click is too short.
 *
 * Streaming and pure: `push(pcm, atMs)` takes any frame size with the time of its first sample and returns the
 * events it caused: `beep` once a run is long enough (`onsetMs` is when the tone began), `beep_end` when it
 * stops (`endMs`). Cost: one Goertzel bank per 20 ms on loud windows only (bench/amd.mjs measures it).
 */
const SAMPLE_RATE = 8000;

export interface BeepDetectorOptions {
  minHz: number;
  maxHz: number;
  stepHz: number;
  windowMs: number;
  hopMs: number;
  /** Windows quieter than this are never tonal. */
  minDbfs: number;
  /** Peak bin power / (the power a pure sine with the window's energy gives): 1 for a pure tone, small for speech and noise. */
  minTonality: number;
  /** How far the peak may wander within one beep. */
  maxDriftHz: number;
  minDurationMs: number;
}

export const BEEP_DEFAULTS: Readonly<BeepDetectorOptions> = Object.freeze({
  minHz: 400,
  maxHz: 2000,
  stepHz: 25,
  windowMs: 20,
  hopMs: 20,
  minDbfs: -45,
  minTonality: 0.6,
  maxDriftHz: 25,
  minDurationMs: 120,
});

export type BeepEvent =
  /** A beep has lasted `minDurationMs`: it began at `onsetMs`; `frequencyHz` is its peak bin. */
  | { type: 'beep'; onsetMs: number; frequencyHz: number; atMs: number }
  /** The beep stopped at `endMs` (the end of its last tonal window's hop). */
  | { type: 'beep_end'; onsetMs: number; endMs: number; frequencyHz: number };

interface Run {
  startMs: number;
  frequencyHz: number;
  lastMs: number;
  reported: boolean;
}

export class BeepDetector {
  private readonly options: BeepDetectorOptions;
  private readonly windowSamples: number;
  private readonly hopSamples: number;
  private readonly frequencies: Float64Array;
  private readonly coefficients: Float64Array;
  /** Ring of the last `windowSamples` samples. */
  private readonly ring: Float64Array;
  private ringPos = 0;
  private filled = 0;
  private sinceHop = 0;
  /** Time (ms) of the sample at `ringPos` minus the window: maintained from the pushes. */
  private sampleTimeMs = 0;
  private started = false;
  private run: Run | null = null;
  /** Minimum sum of squares for a window to be loud enough. */
  private readonly minEnergy: number;
  /** Windows analysed (for the bench's cost figure). */
  windowsAnalysed = 0;

  constructor(options: Partial<BeepDetectorOptions> = {}) {
    this.options = { ...BEEP_DEFAULTS, ...options };
    this.windowSamples = Math.round((this.options.windowMs * SAMPLE_RATE) / 1000);
    this.hopSamples = Math.round((this.options.hopMs * SAMPLE_RATE) / 1000);
    const count = Math.floor((this.options.maxHz - this.options.minHz) / this.options.stepHz) + 1;
    this.frequencies = new Float64Array(count);
    this.coefficients = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const f = this.options.minHz + i * this.options.stepHz;
      this.frequencies[i] = f;
      this.coefficients[i] = 2 * Math.cos((2 * Math.PI * f) / SAMPLE_RATE);
    }
    this.ring = new Float64Array(this.windowSamples);
    const fullScale = 32768;
    this.minEnergy = this.windowSamples * (fullScale * 10 ** (this.options.minDbfs / 20)) ** 2;
  }

  /** True while a reported beep is still sounding. */
  get inBeep(): boolean {
    return this.run?.reported === true;
  }

  /** Feeds 8 kHz PCM whose first sample is at `atMs`; returns the events it caused, in order. */
  push(pcm: Int16Array, atMs: number): BeepEvent[] {
    const events: BeepEvent[] = [];
    if (!this.started) {
      this.started = true;
      this.sampleTimeMs = atMs;
    } else {
      // trust the caller's clock for gaps, never go back in time
      this.sampleTimeMs = Math.max(this.sampleTimeMs, atMs);
    }
    const msPerSample = 1000 / SAMPLE_RATE;
    for (let i = 0; i < pcm.length; i++) {
      this.ring[this.ringPos] = pcm[i]!;
      this.ringPos = (this.ringPos + 1) % this.windowSamples;
      if (this.filled < this.windowSamples) this.filled++;
      this.sampleTimeMs += msPerSample;
      if (++this.sinceHop >= this.hopSamples && this.filled === this.windowSamples) {
        this.sinceHop = 0;
        // the window just completed spans [end - windowMs, end)
        this.analyse(this.sampleTimeMs - this.options.windowMs, this.sampleTimeMs, events);
      }
    }
    return events;
  }

  /** Forgets everything (a new call). */
  reset(): void {
    this.ring.fill(0);
    this.ringPos = 0;
    this.filled = 0;
    this.sinceHop = 0;
    this.started = false;
    this.run = null;
  }

  private analyse(startMs: number, endMs: number, events: BeepEvent[]): void {
    const tone = this.tonalPeak();
    if (tone === null) {
      this.endRun(events);
      return;
    }
    const run = this.run;
    if (run && Math.abs(tone - run.frequencyHz) <= this.options.maxDriftHz) {
      run.lastMs = endMs;
    } else {
      this.endRun(events);
      // a window only partly inside the tone can already pass: the tone began at most a hop before the
      // window's end minus the part the threshold needs; the window's start is the honest lower bound
      this.run = { startMs: this.onsetEstimate(startMs, endMs), frequencyHz: tone, lastMs: endMs, reported: false };
    }
    const current = this.run!;
    if (!current.reported && current.lastMs - current.startMs >= this.options.minDurationMs) {
      current.reported = true;
      events.push({ type: 'beep', onsetMs: current.startMs, frequencyHz: current.frequencyHz, atMs: endMs });
    }
  }

  /**
   * The first tonal window of a run covers the tone only partly (tonality grows with the covered share); the
   * tone's onset is estimated as the point where the covered share reaches the threshold.
   */
  private onsetEstimate(startMs: number, endMs: number): number {
    return endMs - this.options.windowMs * Math.min(1, this.options.minTonality + (1 - this.options.minTonality) / 2);
  }

  private endRun(events: BeepEvent[]): void {
    const run = this.run;
    this.run = null;
    if (run?.reported) events.push({ type: 'beep_end', onsetMs: run.startMs, endMs: run.lastMs, frequencyHz: run.frequencyHz });
  }

  /** The peak frequency when the current window is tonal, else null. */
  private tonalPeak(): number | null {
    const n = this.windowSamples;
    const ring = this.ring;
    let energy = 0;
    for (let i = 0; i < n; i++) energy += ring[i]! * ring[i]!;
    if (energy < this.minEnergy) return null;
    this.windowsAnalysed++;
    let bestPower = 0;
    let best = -1;
    const start = this.ringPos;
    for (let b = 0; b < this.coefficients.length; b++) {
      const c = this.coefficients[b]!;
      let s1 = 0;
      let s2 = 0;
      for (let i = start; i < n; i++) {
        const s0 = ring[i]! + c * s1 - s2;
        s2 = s1;
        s1 = s0;
      }
      for (let i = 0; i < start; i++) {
        const s0 = ring[i]! + c * s1 - s2;
        s2 = s1;
        s1 = s0;
      }
      const power = s1 * s1 + s2 * s2 - c * s1 * s2;
      if (power > bestPower) {
        bestPower = power;
        best = b;
      }
    }
    // A sine of amplitude A over n samples: |X|² = (A·n/2)², energy = A²·n/2, so |X|² = energy·n/2.
    const tonality = bestPower / ((energy * n) / 2);
    return tonality >= this.options.minTonality ? this.frequencies[best]! : null;
  }
}
