import { describe, expect, it } from '@jest/globals';
import { L16_16K, L16_24K } from './audio-format.js';
import { l16Bytes, l16Samples, toSessionAudio } from './carrier-audio.js';
import { mulawEncode } from './g711.js';
import { createResampler } from './resample.js';

describe('L16 byte order', () => {
  const samples = [0, 1, -1, 32767, -32768, 258, -258, 12345];
  const le = samples.flatMap((v) => [v & 0xff, (v >> 8) & 0xff]);

  it('reads little-endian samples from a view at an odd offset, drops an odd last byte and copies', () => {
    const backing = new Uint8Array(le.length + 4);
    backing.set(le, 1);
    backing[le.length + 1] = 0x7f; // the odd last byte
    const view = backing.subarray(1, le.length + 2);
    const pcm = l16Samples(view);
    expect(Array.from(pcm)).toEqual(samples);
    pcm[0] = 999;
    expect(backing[1]).toBe(0); // a copy: the wire bytes are untouched
  });

  it('reads a Node Buffer (whose own slice is a view into a shared pool) as its samples alone', () => {
    const pooled = Buffer.from([9, 9, 9, ...le]).subarray(3);
    expect(Array.from(l16Samples(pooled))).toEqual(samples);
  });

  it('writes samples little-endian from a view into a fresh array', () => {
    const backing = Int16Array.from([7, ...samples, 7]);
    const bytes = l16Bytes(backing.subarray(1, 1 + samples.length));
    expect(Array.from(bytes)).toEqual(le);
    bytes[0] = 1;
    expect(backing[1]).toBe(0);
  });
});

describe('L16 to the session format', () => {
  for (const format of [L16_24K, L16_16K]) {
    it(`${format.sampleRate} Hz: chunks convert to the bytes of decode → resample → encode, and a result stays as it was after the next`, () => {
      const n = format.sampleRate; // 1 s
      const bytes = new Uint8Array(2 * n);
      for (let i = 0; i < n; i++) {
        const v = Math.round(15000 * Math.sin(i / 5) + 5000 * Math.sin(i / 0.9)) | 0;
        bytes[2 * i] = v & 0xff;
        bytes[2 * i + 1] = (v >> 8) & 0xff;
      }
      const reference = mulawEncode(createResampler(format.sampleRate, 8000).process(l16Samples(bytes)));
      const converter = toSessionAudio(format);
      const results: Uint8Array[] = [];
      const copies: number[][] = [];
      for (let at = 0, k = 0; at < bytes.length; k++) {
        const size = [4800, 2, 960, 9600][k % 4]!;
        const out = converter.convert(bytes.subarray(at, at + size));
        results.push(out);
        copies.push(Array.from(out));
        at += size;
      }
      expect(results.flatMap((r) => Array.from(r))).toEqual(Array.from(reference));
      expect(results.map((r) => Array.from(r))).toEqual(copies); // nothing converted later wrote into an earlier result
    });
  }
});
