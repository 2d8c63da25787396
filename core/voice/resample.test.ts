import { describe, expect, it } from '@jest/globals';
import { rmsDbfs } from './energy.js';
import { Resampler, createResampler, resamplerFilter } from './resample.js';
import { simdDecimator } from './resample-simd.js';
import { concatPcm } from '../../test/support/pcm.js';

const tone = (hz: number, rate: number, seconds: number, amplitude = 10000): Int16Array =>
  Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)));

/** Power of `pcm` at `hz` (Goertzel), as dBFS of a sine's RMS. */
function toneDbfs(pcm: Int16Array, rate: number, hz: number): number {
  const w = (2 * Math.PI * hz) / rate;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (const x of pcm) {
    const s = x + coeff * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  const amplitude = (2 * Math.sqrt(power)) / pcm.length;
  return 20 * Math.log10(amplitude / Math.SQRT2 / 32768);
}

/** Skips the filter's start-up transient. */
const steady = (pcm: Int16Array, rate: number): Int16Array => pcm.subarray(Math.round(rate * 0.05));

function chunked(r: Resampler, input: Int16Array, sizes: number[]): Int16Array {
  const parts: Int16Array[] = [];
  let offset = 0;
  for (let k = 0; offset < input.length; k++) {
    const n = sizes[k % sizes.length];
    parts.push(r.process(input.subarray(offset, offset + n)));
    offset += n;
  }
  return concatPcm(parts);
}

describe('Resampler 16 kHz → 8 kHz', () => {
  it('keeps a 3.5 kHz tone (within 0.5 dB)', () => {
    const input = tone(3500, 16000, 1);
    const out = steady(createResampler(16000, 8000).process(input), 8000);
    expect(Math.abs(toneDbfs(out, 8000, 3500) - toneDbfs(steady(input, 16000), 16000, 3500))).toBeLessThan(0.5);
  });

  it('attenuates a 6 kHz tone by at least 40 dB instead of folding it to 2 kHz', () => {
    const input = tone(6000, 16000, 1);
    const out = steady(createResampler(16000, 8000).process(input), 8000);
    const before = rmsDbfs(steady(input, 16000));
    expect(before - rmsDbfs(out)).toBeGreaterThanOrEqual(40);
    expect(before - toneDbfs(out, 8000, 2000)).toBeGreaterThanOrEqual(40);
  });

  it('a naive decimation (every other sample) does fold it: the test would catch a missing filter', () => {
    const input = tone(6000, 16000, 1);
    const naive = Int16Array.from({ length: input.length / 2 }, (_, i) => input[2 * i]);
    expect(rmsDbfs(steady(input, 16000)) - toneDbfs(naive, 8000, 2000)).toBeLessThan(1);
  });

  it('gives the same samples in chunks of any size as in one call', () => {
    const input = Int16Array.from({ length: 16000 }, (_, i) => Math.round(8000 * Math.sin(i * 0.37) + 5000 * Math.sin(i * 1.9) + ((i * 7919) % 2001) - 1000));
    const whole = createResampler(16000, 8000).process(input);
    expect(whole.length).toBe(8000);
    for (const sizes of [[320], [1], [3, 7, 640, 1], [5000, 11000]]) {
      expect(Array.from(chunked(createResampler(16000, 8000), input, sizes))).toEqual(Array.from(whole));
    }
  });
});

describe('Resampler 8 kHz → 16 kHz', () => {
  it('keeps a 3.5 kHz tone and leaves no image at 4.5 kHz', () => {
    const input = tone(3500, 8000, 1);
    const out = steady(createResampler(8000, 16000).process(input), 16000);
    expect(out.length).toBeGreaterThan(15000);
    expect(Math.abs(toneDbfs(out, 16000, 3500) - toneDbfs(steady(input, 8000), 8000, 3500))).toBeLessThan(0.5);
    expect(toneDbfs(out, 16000, 3500) - toneDbfs(out, 16000, 4500)).toBeGreaterThanOrEqual(40);
  });

  it('chunked equals one-shot, and 8k → 16k → 8k returns a voice-band tone', () => {
    const input = tone(1000, 8000, 0.5);
    const up = createResampler(8000, 16000).process(input);
    expect(Array.from(chunked(createResampler(8000, 16000), input, [160, 1, 33]))).toEqual(Array.from(up));
    const back = createResampler(16000, 8000).process(up);
    expect(back.length).toBe(input.length);
    expect(Math.abs(toneDbfs(steady(back, 8000), 8000, 1000) - toneDbfs(input, 8000, 1000))).toBeLessThan(0.2);
  });
});

describe('Resampler from TTS rates', () => {
  for (const [from, to] of [[24000, 8000], [24000, 16000], [22050, 8000]] as const) {
    it(`${from} → ${to}: the right length, the voice band kept, out-of-band energy removed, chunk-exact`, () => {
      const seconds = 0.5;
      const keep = tone(1000, from, seconds);
      const r = createResampler(from, to);
      const out = r.process(keep);
      expect(Math.abs(out.length - to * seconds)).toBeLessThanOrEqual(1);
      expect(Math.abs(toneDbfs(steady(out, to), to, 1000) - toneDbfs(keep, from, 1000))).toBeLessThan(0.5);
      const alias = tone(to * 0.5 + 2500, from, seconds); // folds to to/2 - 2500 without a filter
      expect(rmsDbfs(steady(alias, from)) - rmsDbfs(steady(createResampler(from, to).process(alias), to))).toBeGreaterThanOrEqual(40);
      expect(Array.from(chunked(createResampler(from, to), keep, [441, 480, 7]))).toEqual(Array.from(out));
      expect(r.delayMs).toBeGreaterThan(0);
      expect(r.delayMs).toBeLessThan(5);
    });
  }

  it('passes audio through unchanged at equal rates; reset forgets the stream; odd ratios are refused', () => {
    const x = tone(440, 8000, 0.01);
    expect(Array.from(createResampler(8000, 8000).process(x))).toEqual(Array.from(x));
    const r = createResampler(16000, 8000);
    const first = r.process(x);
    r.process(tone(3000, 16000, 0.1));
    r.reset();
    expect(Array.from(r.process(x))).toEqual(Array.from(first));
    expect(() => createResampler(44100, 7919)).toThrow(RangeError);
    expect(() => createResampler(0, 8000)).toThrow(RangeError);
    expect(createResampler(16000, 8000).process(new Int16Array(0)).length).toBe(0);
  });
});

describe('Resampler stopband', () => {
  for (const from of [24000, 16000]) {
    it(`${from} → 8000: a 4.6 kHz tone, which folds to 3.4 kHz inside the voice band, is at least 55 dB down`, () => {
      const input = tone(4600, from, 0.5);
      const out = steady(createResampler(from, 8000).process(input), 8000);
      expect(rmsDbfs(steady(input, from)) - rmsDbfs(out)).toBeGreaterThanOrEqual(55);
    });
  }
});

describe('Resampler kernels', () => {
  /** The filter's definition computed directly, one output at a time (no folding, no specialised loops). */
  function direct(from: number, to: number, x: Int16Array): Int16Array {
    const { L, M, K, phases } = resamplerFilter(from, to);
    const count = Math.ceil((x.length * L) / M);
    const out = new Int16Array(count);
    for (let n = 0; n < count; n++) {
      const b = Math.floor((n * M) / L);
      const p = (n * M) % L;
      let acc = 0;
      for (let i = 0; i < K; i++) acc += b - i >= 0 ? phases[p * K + i]! * x[b - i]! : 0;
      out[n] = Math.max(-32768, Math.min(32767, Math.round(acc)));
    }
    return out;
  }

  const input = Int16Array.from({ length: 4800 }, (_, i) => Math.round(9000 * Math.sin(i * 0.23) + 6000 * Math.sin(i * 2.1) + ((i * 7919) % 4001) - 2000));
  for (const [from, to] of [[24000, 8000], [16000, 8000], [8000, 16000], [24000, 16000]] as const) {
    it(`${from} → ${to} computes exactly the kept outputs of the filter (to rounding), chunked or not, in either kernel`, () => {
      const want = direct(from, to, input);
      for (const kernel of ['auto', 'js'] as const) {
        for (const sizes of [[input.length], [480], [1, 2, 3, 997]]) {
          const got = chunked(createResampler(from, to, kernel), input, sizes);
          expect(got.length).toBe(want.length);
          let worst = 0;
          for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
          expect(worst).toBeLessThanOrEqual(1);
        }
      }
    });
  }

  it('writes into a caller-given array when it is long enough', () => {
    const r = createResampler(24000, 8000);
    const out = new Int16Array(200);
    const chunk = input.subarray(0, 480);
    expect(r.outputLength(480)).toBe(160);
    const got = r.process(chunk, out);
    expect(got.buffer).toBe(out.buffer);
    expect(Array.from(got)).toEqual(Array.from(createResampler(24000, 8000).process(chunk)));
    expect(r.process(input.subarray(480, 960), new Int16Array(10)).length).toBe(160); // too short: a new array
  });

  for (const [from, to] of [[24000, 8000], [16000, 8000], [22050, 8000], [8000, 16000]] as const) {
    it(`${from} → ${to}: processL16 on little-endian bytes (unaligned views, odd sizes) gives process's samples`, () => {
      const pcm = Int16Array.from({ length: from }, (_, i) => Math.round(12000 * Math.sin(i / 7) + 9000 * Math.sin(i / 1.3)) | 0);
      pcm[5] = -32768;
      pcm[6] = 32767;
      const bytes = new Uint8Array(pcm.length * 2 + 1);
      for (let i = 0; i < pcm.length; i++) {
        bytes[1 + 2 * i] = pcm[i]! & 0xff;
        bytes[2 + 2 * i] = (pcm[i]! >> 8) & 0xff;
      }
      const le = bytes.subarray(1); // odd byte offset: not readable as an Int16Array
      const expected = createResampler(from, to).process(pcm);
      const r = createResampler(from, to);
      const out = new Int16Array(r.outputLength(pcm.length));
      const parts: number[] = [];
      const sizes = [2 * 480, 2 * 37, 2 * 2400, 2 * 1, 2 * 333];
      for (let at = 0, k = 0; at < le.length; k++) {
        const n = sizes[k % sizes.length]!;
        parts.push(...r.processL16(le.subarray(at, at + n), out));
        at += n;
      }
      expect(parts).toEqual(Array.from(expected));
      // an odd last byte is ignored, like l16Samples does
      expect(Array.from(createResampler(from, to).processL16(le.subarray(0, 2 * 480 + 1)))).toEqual(Array.from(createResampler(from, to).process(pcm.subarray(0, 480))));
    });
  }
});

describe('Resampler SIMD kernel (integer decimation in WebAssembly)', () => {
  const loud = (rate: number, seconds: number) =>
    Int16Array.from({ length: Math.round(rate * seconds) }, (_, i) => Math.max(-32768, Math.min(32767, Math.round(20000 * Math.sin(i * 0.31) + 9000 * Math.sin(i * 2.3) + ((i * 7919) % 6001) - 3000))));

  it('is what decimation uses on this platform (Node 20 has WebAssembly SIMD); the other conversions, and kernel js, keep JavaScript', () => {
    expect(createResampler(24000, 8000).usesSimd).toBe(true);
    expect(createResampler(16000, 8000).usesSimd).toBe(true);
    expect(createResampler(24000, 8000, 'js').usesSimd).toBe(false);
    expect(createResampler(8000, 16000).usesSimd).toBe(false);
    expect(createResampler(24000, 16000).usesSimd).toBe(false);
    expect(createResampler(8000, 8000).usesSimd).toBe(false);
  });

  for (const from of [24000, 16000, 48000]) {
    it(`${from} → 8000: within 1 of the JavaScript kernel on loud audio, nearly always equal, and chunk-exact`, () => {
      const x = loud(from, 3);
      const js = createResampler(from, 8000, 'js').process(x);
      const simd = createResampler(from, 8000).process(x);
      expect(simd.length).toBe(js.length);
      let worst = 0;
      let differ = 0;
      for (let i = 0; i < js.length; i++) {
        const d = Math.abs(simd[i]! - js[i]!);
        worst = Math.max(worst, d);
        if (d) differ++;
      }
      expect(worst).toBeLessThanOrEqual(1);
      expect(differ / js.length).toBeLessThan(0.01);
      // clipped at full scale like the JavaScript kernel
      const square = Int16Array.from({ length: from }, (_, i) => ((i >> 6) & 1 ? 32767 : -32768));
      expect(Array.from(createResampler(from, 8000).process(square)).some((v) => v === 32767 || v === -32768)).toBe(true);
      for (const sizes of [[1], [7, 480, 2], [4800]]) expect(Array.from(chunked(createResampler(from, 8000), x, sizes))).toEqual(Array.from(simd));
    });
  }

  it('streams that share the kernel memory, interleaved chunk by chunk, each get what they get alone', () => {
    const a = loud(24000, 1);
    const b = loud(16000, 1).map((v) => -v);
    const ra = createResampler(24000, 8000);
    const rb = createResampler(16000, 8000);
    const ra2 = createResampler(24000, 8000);
    const outA: number[] = [];
    const outB: number[] = [];
    const outA2: number[] = [];
    for (let k = 0; k < 50; k++) {
      outA.push(...ra.process(a.subarray(k * 480, (k + 1) * 480)));
      outB.push(...rb.process(b.subarray(k * 320, (k + 1) * 320)));
      outA2.push(...ra2.process(a.subarray(k * 480, (k + 1) * 480).map((v) => v >> 1)));
    }
    expect(outA).toEqual(Array.from(createResampler(24000, 8000).process(a)));
    expect(outB).toEqual(Array.from(createResampler(16000, 8000).process(b)));
    expect(outA2).toEqual(Array.from(createResampler(24000, 8000).process(a.map((v) => v >> 1))));
  });

  it('a chunk that grows the memory, then small ones, and a window whose padding held garbage (NaN) from a larger one', () => {
    const big = loud(48000, 12); // 576,000 samples: the scratch memory grows past its first pages
    const r = createResampler(48000, 8000);
    const whole = r.process(big);
    expect(Array.from(whole.subarray(0, 2000))).toEqual(Array.from(createResampler(48000, 8000).process(big.subarray(0, 12000))));
    const kernel = simdDecimator()!;
    // 16k→8k has 59 taps, read as 64: the last output's read runs 5 samples past the window, times 0 taps
    const x = loud(16000, 0.1);
    kernel.window(100_000).fill(Number.NaN); // what a later, smaller window's padding would read
    let worst = 0;
    const simd = createResampler(16000, 8000).process(x);
    const js = createResampler(16000, 8000, 'js').process(x);
    for (let i = 0; i < js.length; i++) worst = Math.max(worst, Math.abs(simd[i]! - js[i]!));
    expect(worst).toBeLessThanOrEqual(1);
  });
});
