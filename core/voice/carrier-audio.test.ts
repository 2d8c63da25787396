import { describe, expect, it } from '@jest/globals';
import { l16Bytes, l16Samples } from './carrier-audio.js';

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
