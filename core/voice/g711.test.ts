import { describe, expect, it } from '@jest/globals';
import {
  ALAW_SILENCE, ALAW_TO_PCM, MULAW_SILENCE, MULAW_TO_PCM, alawDecode, alawDecodeSample, alawEncode, alawEncodeSample,
  mulawDecode, mulawDecodeSample, mulawEncode, mulawEncodeSample, ReusedMulawDecoder,
} from './g711.js';

const allSamples = (): Int16Array => {
  const pcm = new Int16Array(65536);
  for (let i = 0; i < 65536; i++) pcm[i] = i - 32768;
  return pcm;
};

describe('G.711 μ-law', () => {
  it('decodes the reference values of the standard table', () => {
    expect([0x00, 0x7f, 0x80, 0xff, 0xfe, 0x7e, 0x0f, 0x8f].map(mulawDecodeSample)).toEqual([-32124, 0, 32124, 0, 8, -8, -16764, 16764]);
  });

  it('round-trips every code (except negative zero, which encodes as positive zero) and silence is 0xFF', () => {
    for (let b = 0; b < 256; b++) expect(mulawEncodeSample(mulawDecodeSample(b))).toBe(b === 0x7f ? 0xff : b);
    expect(mulawEncodeSample(0)).toBe(MULAW_SILENCE);
  });

  it('the tables equal the arithmetic for all 65,536 samples and 256 codes', () => {
    const pcm = allSamples();
    const bytes = mulawEncode(pcm);
    for (let i = 0; i < pcm.length; i++) if (bytes[i] !== mulawEncodeSample(pcm[i])) throw new Error(`encode ${pcm[i]}`);
    const codes = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(Array.from(mulawDecode(codes))).toEqual(Array.from(codes, mulawDecodeSample));
    expect(MULAW_TO_PCM.length).toBe(256);
  });

  it('quantizes within half a step: the error is bounded by the segment size', () => {
    const pcm = allSamples();
    const back = mulawDecode(mulawEncode(pcm));
    for (let i = 0; i < pcm.length; i++) {
      const s = Math.min(32635, Math.abs(pcm[i]));
      const step = s < 100 ? 8 : 2 ** (Math.floor(Math.log2((s + 132) / 128)) + 3); // segment step
      if (Math.abs(back[i] - Math.sign(pcm[i]) * s) > step) throw new Error(`${pcm[i]} → ${back[i]}`);
    }
  });

  it('writes into a given output and refuses one that is too small', () => {
    const out = new Int16Array(4);
    expect(mulawDecode(Uint8Array.of(0xff, 0x80), out)).toBe(out);
    expect(Array.from(out)).toEqual([0, 32124, 0, 0]);
    expect(() => mulawEncode(new Int16Array(3), new Uint8Array(2))).toThrow(RangeError);
  });

  it('ReusedMulawDecoder decodes like mulawDecode into one buffer it reuses, whatever the frame sizes', () => {
    const decoder = new ReusedMulawDecoder();
    const frame = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + seed) & 0xff);
    const a = decoder.decode(frame(160, 1));
    expect(Array.from(a)).toEqual(Array.from(mulawDecode(frame(160, 1))));
    const b = decoder.decode(frame(160, 2));
    expect(b.buffer).toBe(a.buffer); // no new array per frame
    expect(Array.from(b)).toEqual(Array.from(mulawDecode(frame(160, 2))));
    expect(Array.from(decoder.decode(frame(80, 3)))).toEqual(Array.from(mulawDecode(frame(80, 3)))); // a shorter frame: a view
    const big = decoder.decode(frame(400, 4)); // a longer one: the buffer grows
    expect(Array.from(big)).toEqual(Array.from(mulawDecode(frame(400, 4))));
    expect(decoder.decode(frame(160, 5)).buffer).toBe(big.buffer);
    expect(decoder.decode(new Uint8Array(0)).length).toBe(0);
  });
});

describe('G.711 A-law', () => {
  it('decodes the reference values and round-trips every code; silence is 0xD5', () => {
    expect([0xd5, 0x55, 0xaa, 0x2a].map(alawDecodeSample)).toEqual([8, -8, 32256, -32256]);
    for (let b = 0; b < 256; b++) expect(alawEncodeSample(alawDecodeSample(b))).toBe(b);
    expect(alawEncodeSample(0)).toBe(ALAW_SILENCE);
  });

  it('the tables equal the arithmetic for all samples; full scale saturates', () => {
    const pcm = allSamples();
    const bytes = alawEncode(pcm);
    for (let i = 0; i < pcm.length; i++) if (bytes[i] !== alawEncodeSample(pcm[i])) throw new Error(`encode ${pcm[i]}`);
    expect(alawDecode(Uint8Array.of(alawEncodeSample(32767)))[0]).toBe(32256);
    expect(alawDecode(Uint8Array.of(alawEncodeSample(-32768)))[0]).toBe(-32256);
    expect(ALAW_TO_PCM.length).toBe(256);
  });
});
