/**
 * Stateful sample-rate conversion of 16-bit PCM by a rational factor L/M (docs/voice.md "Audio path"): the
 * signal is (conceptually) upsampled by L, low-pass filtered once at the L-times rate, and every M-th sample
 * kept; the filter is applied in its polyphase form so only the products that touch real input samples are
 * computed (K taps per output sample). 8k↔16k are the 2× cases (L/M = 2/1 and 1/2); 24k→8k is 1/3, 24k→16k
 * 2/3 and 22.05k→8k 160/441.
 *
 * The low-pass is a Kaiser-windowed sinc designed for the lower of the two rates (Nyquist B): flat to 0.875·B
 * (3.5 kHz when either side is 8 kHz), at least 70 dB down from 1.075·B (4.3 kHz), so downsampling does not
 * fold out-of-band energy back into the voice band (a 6 kHz tone at 16 kHz does not reappear at 2 kHz) and
 * upsampling leaves no image. Designs are computed once per rate pair and shared.
 *
 * State (the last K-1 input samples and the output clock) carries across `process` calls, so audio cut into
 * chunks of any size gives exactly the samples the whole buffer gives in one call.
 */

const STOPBAND_DB = 70;
const PASS_EDGE = 0.875; // × the lower Nyquist
const STOP_EDGE = 1.075;

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

/** One stream's converter from `fromRate` to `toRate`. Not shared between streams. */
export class Resampler {
  private readonly d: Design;
  /** Input samples before the current chunk that the filter still needs (K-1, oldest first). */
  private readonly history: Float64Array;
  private work = new Float64Array(0);
  /** Time of the next output sample, in upsampled-rate samples, relative to the next chunk's first sample. */
  private t = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    if (!Number.isInteger(fromRate) || !Number.isInteger(toRate) || fromRate <= 0 || toRate <= 0) {
      throw new RangeError(`sample rates must be positive integers (${fromRate} → ${toRate})`);
    }
    this.d = fromRate === toRate ? { L: 1, M: 1, K: 1, phases: Float64Array.of(1), delayInputSamples: 0 } : design(fromRate, toRate);
    this.history = new Float64Array(this.d.K - 1);
  }

  /** How far the output lags the input, in milliseconds (the filter's group delay). */
  get delayMs(): number {
    return (this.d.delayInputSamples / this.fromRate) * 1000;
  }

  /** Converts the next chunk (any length, including 0) and returns the output samples it completes. */
  process(pcm: Int16Array): Int16Array {
    const { L, M, K, phases } = this.d;
    const len = pcm.length;
    const span = len * L;
    const count = this.t < span ? Math.ceil((span - this.t) / M) : 0;
    const out = new Int16Array(count);
    const hist = K - 1;
    if (this.work.length < hist + len) this.work = new Float64Array(hist + len);
    const w = this.work;
    w.set(this.history, 0);
    for (let i = 0; i < len; i++) w[hist + i] = pcm[i];
    // output n sits at upsampled time t = this.t + n·M: input sample `base` = floor(t / L), filter phase t mod L
    let base = Math.floor(this.t / L);
    let p = this.t - base * L;
    for (let n = 0; n < count; n++) {
      const top = base + hist; // index in w of input sample `base`
      const c = p * K;
      let acc = 0;
      for (let i = 0; i < K; i++) acc += phases[c + i] * w[top - i];
      const s = Math.round(acc);
      out[n] = s > 32767 ? 32767 : s < -32768 ? -32768 : s;
      p += M;
      while (p >= L) {
        p -= L;
        base++;
      }
    }
    const t = base * L + p;
    this.t = t - span;
    if (hist > 0) {
      // the last K-1 samples of (history + chunk)
      this.history.set(w.subarray(len, len + hist));
    }
    return out;
  }

  /** Forgets the stream (history and clock), as if newly created. */
  reset(): void {
    this.history.fill(0);
    this.t = 0;
  }
}

/** A converter for one stream. Throws RangeError for rates it cannot relate (a ratio finer than 1024). */
export const createResampler = (fromRate: number, toRate: number): Resampler => new Resampler(fromRate, toRate);
