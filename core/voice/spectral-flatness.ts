/**
 * How noise-like a window of audio is (docs/voice.md "Audio path"): the spectral flatness (Wiener entropy) of
 * its power spectrum over the telephone band, the geometric mean of the band powers divided by their
 * arithmetic mean. 1 is perfectly flat (white noise: hiss, line static), near 0 is peaked (a tone, voiced
 * speech: harmonics under formants). The energy-only VAD uses it to reject steady broadband noise that is as
 * loud as speech.
 *
 * Cost per 256-sample window (32 ms at 8 kHz): one Hann-windowed radix-2 FFT plus 28 logarithms, a few
 * microseconds. The periodogram is smoothed by summing it into bands of `BAND_HZ` (4 bins at 8 kHz), so white
 * noise scores about 0.85 rather than the ~0.56 a raw periodogram's scatter gives it. Pure.
 */

/** Width of the bands the spectrum is summed into. */
const BAND_HZ = 125;
/** The band measured: the telephone band (300-3400 Hz) widened to whole bands. */
const LOW_HZ = 250;
const HIGH_HZ = 3750;
/** Below this share of the window's power up to 4 kHz inside the band, the sound is not broadband: it scores 0. */
const MIN_IN_BAND_SHARE = 0.5;
/** A floor under each band's power so digital silence in a band is not log(0). */
const POWER_FLOOR = 1e-3;

interface Plan {
  n: number;
  hann: Float64Array;
  cos: Float64Array;
  sin: Float64Array;
  bitrev: Uint32Array;
  re: Float64Array;
  im: Float64Array;
}

const plans = new Map<number, Plan>();

function planFor(n: number): Plan {
  let plan = plans.get(n);
  if (plan) return plan;
  if (n < 16 || (n & (n - 1)) !== 0) throw new RangeError(`spectral flatness needs a power-of-two window ≥ 16 samples, got ${n}`);
  const hann = new Float64Array(n);
  for (let i = 0; i < n; i++) hann[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n);
  const cos = new Float64Array(n / 2);
  const sin = new Float64Array(n / 2);
  for (let i = 0; i < n / 2; i++) {
    cos[i] = Math.cos((2 * Math.PI * i) / n);
    sin[i] = -Math.sin((2 * Math.PI * i) / n);
  }
  const bits = Math.log2(n);
  const bitrev = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    let r = 0;
    for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
    bitrev[i] = r;
  }
  plan = { n, hann, cos, sin, bitrev, re: new Float64Array(n), im: new Float64Array(n) };
  plans.set(n, plan);
  return plan;
}

/**
 * Spectral flatness (0..1) of `window` (PCM at `sampleRate`, a power-of-two length of at least 16 samples)
 * over 250-3750 Hz. A window whose power lies mostly outside that band (a hum, a tone near Nyquist) is not
 * broadband and scores 0. A window of digital silence scores 1 (nothing peaked in it); callers gate on loudness
 * first. Throws RangeError on a window length that is not a power of two.
 */
export function spectralFlatness(window: Int16Array, sampleRate: number): number {
  const p = planFor(window.length);
  const { n, re, im } = p;
  for (let i = 0; i < n; i++) {
    re[p.bitrev[i]] = window[i] * p.hann[i];
    im[i] = 0;
  }
  for (let size = 2; size <= n; size <<= 1) {
    const half = size >> 1;
    const step = n / size;
    for (let start = 0; start < n; start += size) {
      for (let k = 0; k < half; k++) {
        const c = p.cos[k * step];
        const s = p.sin[k * step];
        const a = start + k;
        const b = a + half;
        const tr = re[b] * c - im[b] * s;
        const ti = re[b] * s + im[b] * c;
        re[b] = re[a] - tr;
        im[b] = im[a] - ti;
        re[a] += tr;
        im[a] += ti;
      }
    }
  }
  const binHz = sampleRate / n;
  const perBand = Math.max(1, Math.round(BAND_HZ / binHz));
  const first = Math.round(LOW_HZ / binHz);
  const last = Math.min(n / 2, Math.round(HIGH_HZ / binHz));
  // the power a telephone line could carry (up to 4 kHz), whatever the rate
  const top = Math.min(n / 2, Math.round(4000 / binHz));
  let total = 0;
  for (let k = 0; k <= top; k++) total += re[k] * re[k] + im[k] * im[k];
  let logSum = 0;
  let sum = 0;
  let bands = 0;
  for (let bin = first; bin + perBand <= last; bin += perBand) {
    let power = POWER_FLOOR;
    for (let k = bin; k < bin + perBand; k++) power += re[k] * re[k] + im[k] * im[k];
    logSum += Math.log(power);
    sum += power;
    bands++;
  }
  if (bands === 0) return 1;
  if (total > 0 && sum - bands * POWER_FLOOR < MIN_IN_BAND_SHARE * total) return 0;
  return Math.exp(logSum / bands) / (sum / bands);
}
