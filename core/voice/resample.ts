/**
 * Stateful sample-rate conversion of 16-bit PCM by a rational factor L/M (docs/voice.md "Audio path"): the
 * signal is (conceptually) upsampled by L, low-pass filtered once at the L-times rate, and every M-th sample
 * kept; the filter is applied in its polyphase form so only the products that touch real input samples are
 * computed (K taps per output sample). 8k↔16k are the 2× cases (L/M = 2/1 and 1/2); 24k→8k is 1/3, 24k→16k
 * 2/3 and 22.05k→8k 160/441.
 *
 * The low-pass is a Kaiser-windowed sinc designed for the lower of the two rates (Nyquist B): flat to 0.875·B
 * (3.5 kHz when either side is 8 kHz), at least 60 dB down from 1.125·B (4.5 kHz), so downsampling does not
 * fold out-of-band energy back into the voice band (a 6 kHz tone at 16 kHz does not reappear at 2 kHz; what
 * lies between B and 1.125·B can only fold to between 0.875·B and B, above the band kept) and upsampling
 * leaves no image. 60 dB is well below μ-law's own quantization noise (about 38 dB under the signal); each
 * of the 10 dB and the wider transition cost about a fifth of the taps. Designs are computed once per rate
 * pair and shared.
 *
 * State (the last K-1 input samples and the output clock) carries across `process` calls, so audio cut into
 * chunks of any size gives exactly the samples the whole buffer gives in one call.
 */

import { simdDecimator, type SimdDecimator, type SimdTaps } from './resample-simd.js';

const STOPBAND_DB = 60;
const PASS_EDGE = 0.875; // × the lower Nyquist
const STOP_EDGE = 1.125;

interface Design {
  /** Upsampling factor. */
  L: number;
  /** Downsampling factor. */
  M: number;
  /** Taps per phase. */
  K: number;
  /** Phase-major coefficients: phases[p*K + i] = L·h[p + L·i]. */
  phases: Float64Array;
  /** Filter delay in input-rate samples. */
  delayInputSamples: number;
}

const designs = new Map<string, Design>();

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Modified Bessel function of the first kind, order 0 (the Kaiser window's kernel). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const q = (x * x) / 4;
  for (let k = 1; k < 64; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-16) break;
  }
  return sum;
}

function design(fromRate: number, toRate: number): Design {
  const key = `${fromRate}:${toRate}`;
  const cached = designs.get(key);
  if (cached) return cached;
  const g = gcd(fromRate, toRate);
  const L = toRate / g;
  const M = fromRate / g;
  if (L > 1024 || M > 1024) throw new RangeError(`cannot resample ${fromRate} Hz to ${toRate} Hz: ratio ${L}/${M} too fine`);
  const fu = fromRate * L; // rate at which the prototype filter runs
  const nyquist = Math.min(fromRate, toRate) / 2;
  const cutoff = ((PASS_EDGE + STOP_EDGE) / 2) * nyquist;
  const transition = (STOP_EDGE - PASS_EDGE) * nyquist;
  const beta = 0.1102 * (STOPBAND_DB - 8.7);
  const minTaps = Math.ceil((STOPBAND_DB - 8) / (2.285 * 2 * Math.PI * (transition / fu))) + 1;
  const K = Math.ceil(minTaps / L);
  const N = K * L;
  const h = new Float64Array(N);
  const centre = (N - 1) / 2;
  const fc = cutoff / fu; // cycles per sample at the upsampled rate
  const i0beta = besselI0(beta);
  let sum = 0;
  for (let n = 0; n < N; n++) {
    const x = n - centre;
    const sinc = x === 0 ? 2 * fc : Math.sin(2 * Math.PI * fc * x) / (Math.PI * x);
    const r = (2 * n) / (N - 1) - 1;
    const w = besselI0(beta * Math.sqrt(Math.max(0, 1 - r * r))) / i0beta;
    h[n] = sinc * w;
    sum += h[n];
  }
  const phases = new Float64Array(N);
  for (let p = 0; p < L; p++) {
    for (let i = 0; i < K; i++) phases[p * K + i] = (L * h[p + L * i]) / sum;
  }
  const d: Design = { L, M, K, phases, delayInputSamples: centre / L };
  designs.set(key, d);
  return d;
}

/**
 * The polyphase filter a converter from `fromRate` to `toRate` uses (tests and diagnostics): output n of a
 * stream is round(Σ_i phases[p·K + i] · x[b − i]) with b = floor(n·M / L), p = n·M mod L and x[j] = 0 for
 * j < 0. Shared: do not modify it.
 */
export function resamplerFilter(fromRate: number, toRate: number): Readonly<Omit<Design, 'delayInputSamples'>> {
  return design(fromRate, toRate);
}

/** Rounds and clamps a filter sum to a 16-bit sample. */
const toSample = (acc: number): number => {
  const s = Math.round(acc);
  return s > 32767 ? 32767 : s < -32768 ? -32768 : s;
};

/**
 * Integer decimation by M (L = 1: 16k→8k, 24k→8k): only the kept outputs are computed, K taps each; the
 * prototype is linear-phase (symmetric), so each pair of samples equally far from the centre shares one
 * multiply. Output n reads w[top0 + n·M − K + 1 .. top0 + n·M] (top0: the index of its newest input sample).
 * The pairs are summed into four running sums, added at the end: one sum made every add wait for the one
 * before it (~15 % slower for 24k→8k's 44 pairs); the order of the additions is fixed, so the output does not
 * depend on how the stream is chunked.
 */
function decimate(taps: Float64Array, K: number, M: number, w: Float64Array, top0: number, count: number, out: Int16Array): void {
  const half = K >> 1;
  const odd = K & 1;
  const quads = half & ~3;
  let top = top0;
  for (let n = 0; n < count; n++) {
    const lo = top - K + 1;
    let a0 = odd ? taps[half]! * w[top - half]! : 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    let i = 0;
    for (; i < quads; i += 4) {
      a0 += taps[i]! * (w[top - i]! + w[lo + i]!);
      a1 += taps[i + 1]! * (w[top - i - 1]! + w[lo + i + 1]!);
      a2 += taps[i + 2]! * (w[top - i - 2]! + w[lo + i + 2]!);
      a3 += taps[i + 3]! * (w[top - i - 3]! + w[lo + i + 3]!);
    }
    for (; i < half; i++) a0 += taps[i]! * (w[top - i]! + w[lo + i]!);
    out[n] = toSample(a0 + a1 + (a2 + a3));
    top += M;
  }
}

/**
 * Integer interpolation by L with M = 1 (8k→16k): each input sample gives L outputs, one per phase; phase 0
 * and 1 (L = 2) are computed in one pass over the input window so each input sample is read once.
 */
function interpolate2(phases: Float64Array, K: number, w: Float64Array, top0: number, startPhase: number, count: number, out: Int16Array): void {
  let top = top0;
  let n = 0;
  if (startPhase === 1 && count > 0) {
    let acc = 0;
    for (let i = 0; i < K; i++) acc += phases[K + i]! * w[top - i]!;
    out[n++] = toSample(acc);
    top++;
  }
  for (; n + 1 < count; n += 2) {
    let a0 = 0;
    let a1 = 0;
    for (let i = 0; i < K; i++) {
      const x = w[top - i]!;
      a0 += phases[i]! * x;
      a1 += phases[K + i]! * x;
    }
    out[n] = toSample(a0);
    out[n + 1] = toSample(a1);
    top++;
  }
  if (n < count) {
    let acc = 0;
    for (let i = 0; i < K; i++) acc += phases[i]! * w[top - i]!;
    out[n] = toSample(acc);
  }
}

/** Any L/M (24k→16k, 22.05k→8k): output n sits at upsampled time t + n·M, phase (t + n·M) mod L. */
function general(phases: Float64Array, L: number, M: number, K: number, w: Float64Array, hist: number, t: number, count: number, out: Int16Array): number {
  let base = Math.floor(t / L);
  let p = t - base * L;
  for (let n = 0; n < count; n++) {
    const top = base + hist; // index in w of input sample `base`
    const c = p * K;
    let acc = 0;
    for (let i = 0; i < K; i++) acc += phases[c + i]! * w[top - i]!;
    out[n] = toSample(acc);
    p += M;
    while (p >= L) {
      p -= L;
      base++;
    }
  }
  return base * L + p;
}

/** Which integer-decimation kernel a `Resampler` uses: WebAssembly SIMD where available (`auto`), or JavaScript. */
export type ResamplerKernel = 'auto' | 'js';

/** One stream's converter from `fromRate` to `toRate`. Not shared between streams. */
export class Resampler {
  private readonly d: Design;
  /** Input samples before the current chunk that the filter still needs (K-1, oldest first). */
  private readonly history: Float64Array;
  /** History + the current chunk as doubles (JavaScript kernels); grows to the largest chunk seen, then is reused. */
  private work = new Float64Array(0);
  /** Integer decimation in WebAssembly SIMD (resample-simd.ts): the kernel and this design's taps in its memory. */
  private readonly simd: { kernel: SimdDecimator; taps: SimdTaps } | null;
  /** The window of the chunk being converted: `work`, or the SIMD kernel's memory. */
  private w: Float32Array | Float64Array = this.work;
  /** Time of the next output sample, in upsampled-rate samples, relative to the next chunk's first sample. */
  private t = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
    kernel: ResamplerKernel = 'auto',
  ) {
    if (!Number.isInteger(fromRate) || !Number.isInteger(toRate) || fromRate <= 0 || toRate <= 0) {
      throw new RangeError(`sample rates must be positive integers (${fromRate} → ${toRate})`);
    }
    this.d = fromRate === toRate ? { L: 1, M: 1, K: 1, phases: Float64Array.of(1), delayInputSamples: 0 } : design(fromRate, toRate);
    this.history = new Float64Array(this.d.K - 1);
    const simd = kernel === 'auto' && this.d.L === 1 && this.d.M > 1 ? simdDecimator() : null;
    const taps = simd?.place(this.d.phases, this.d.K) ?? null;
    this.simd = simd && taps ? { kernel: simd, taps } : null;
  }

  /** Whether this stream's conversion runs in the WebAssembly SIMD kernel. */
  get usesSimd(): boolean {
    return this.simd !== null;
  }

  /** How far the output lags the input, in milliseconds (the filter's group delay). */
  get delayMs(): number {
    return (this.d.delayInputSamples / this.fromRate) * 1000;
  }

  /** How many output samples the next `inputSamples` input samples complete. */
  outputLength(inputSamples: number): number {
    const span = inputSamples * this.d.L;
    return this.t < span ? Math.ceil((span - this.t) / this.d.M) : 0;
  }

  /**
   * Converts the next chunk (any length, including 0) and returns the output samples it completes: a new
   * array, or `out` (its first `outputLength(pcm.length)` samples) when given one at least that long.
   */
  process(pcm: Int16Array, out?: Int16Array): Int16Array {
    const len = pcm.length;
    const w = this.window(len);
    const hist = this.d.K - 1;
    for (let i = 0; i < len; i++) w[hist + i] = pcm[i]!;
    return this.filter(len, out);
  }

  /**
   * `process` for 16-bit little-endian bytes (L16, e.g. a TTS answer; an odd last byte is ignored): the same
   * samples, read straight from the bytes, so the caller needs no aligned copy of them first.
   */
  processL16(bytes: Uint8Array, out?: Int16Array): Int16Array {
    const len = bytes.length >> 1;
    const w = this.window(len);
    const hist = this.d.K - 1;
    for (let i = 0; i < len; i++) w[hist + i] = ((bytes[2 * i]! | (bytes[2 * i + 1]! << 8)) << 16) >> 16;
    return this.filter(len, out);
  }

  /** The work buffer for a chunk of `len` samples, with the history in front (the chunk goes after it). */
  private window(len: number): Float32Array | Float64Array {
    const hist = this.d.K - 1;
    if (this.simd) this.w = this.simd.kernel.window(hist + len);
    else {
      if (this.work.length < hist + len) this.work = new Float64Array(Math.max(hist + len, this.work.length * 2));
      this.w = this.work;
    }
    this.w.set(this.history, 0);
    return this.w;
  }

  /** Filters the chunk of `len` samples the work buffer holds after the history. */
  private filter(len: number, out: Int16Array | undefined): Int16Array {
    const { L, M, K, phases } = this.d;
    const span = len * L;
    const count = this.outputLength(len);
    const result = out && out.length >= count ? out.subarray(0, count) : new Int16Array(count);
    const hist = K - 1;
    const w = this.work; // the JavaScript kernels' window (the SIMD kernel reads its own memory)
    let t: number;
    if (this.simd) {
      // output n's oldest input is w[hist + t + n·M - (K-1)] = w[t + n·M]
      this.simd.kernel.decimate(this.simd.taps, M, hist + len, this.t, count, result);
      t = this.t + count * M;
    } else if (L === 1) {
      // output n reads input sample t + n·M (its newest), i.e. w[hist + t + n·M]
      decimate(phases, K, M, w, hist + this.t, count, result);
      t = this.t + count * M;
    } else if (L === 2 && M === 1) {
      const base = this.t >> 1;
      interpolate2(phases, K, w, hist + base, this.t & 1, count, result);
      t = this.t + count;
    } else {
      t = general(phases, L, M, K, w, hist, this.t, count, result);
    }
    this.t = t - span;
    if (hist > 0) {
      // the last K-1 samples of (history + chunk)
      this.history.set(this.w.subarray(len, len + hist));
    }
    return result;
  }

  /** Forgets the stream (history and clock), as if newly created. */
  reset(): void {
    this.history.fill(0);
    this.t = 0;
  }
}

/**
 * A converter for one stream (`kernel` 'js' keeps the JavaScript kernel, for tests and comparisons). Throws
 * RangeError for rates it cannot relate (a ratio finer than 1024).
 */
export const createResampler = (fromRate: number, toRate: number, kernel: ResamplerKernel = 'auto'): Resampler => new Resampler(fromRate, toRate, kernel);
