import { describe, expect, it } from '@jest/globals';
import { mulawEncode } from './g711.js';
import {
  MULAW_WAV_HEADER_BYTES, PCM_WAV_HEADER_BYTES, encodePcmWav, encodeStereoPcmWav, interleaveStereo, pcmToBytes, mulawWavHeader, pcmWavHeader, readWav, wavPadding,
} from './wav.js';
import { mulawWavHeader as mediaHeader } from '../calls/media-wav.js';

describe('PCM WAV writer', () => {
  it('writes the canonical 44-byte header of a stereo 8 kHz 16-bit file', () => {
    const h = Buffer.from(pcmWavHeader(32000, 8000, 2));
    expect(h.length).toBe(PCM_WAV_HEADER_BYTES);
    expect(h.toString('ascii', 0, 4)).toBe('RIFF');
    expect(h.readUInt32LE(4)).toBe(36 + 32000);
    expect(h.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect([h.readUInt32LE(16), h.readUInt16LE(20), h.readUInt16LE(22), h.readUInt32LE(24), h.readUInt32LE(28), h.readUInt16LE(32), h.readUInt16LE(34)])
      .toEqual([16, 1, 2, 8000, 32000, 4, 16]);
    expect(h.toString('ascii', 36, 40)).toBe('data');
    expect(h.readUInt32LE(40)).toBe(32000);
  });

  it('interleaves caller left and agent right on one clock, padding the shorter leg with silence', () => {
    const stereo = interleaveStereo(Int16Array.of(1, 2, 3), Int16Array.of(-1));
    expect(Array.from(stereo)).toEqual([1, -1, 2, 0, 3, 0]);
    const file = encodePcmWav(stereo, 8000, 2);
    const wav = readWav(file);
    expect(wav).toMatchObject({ formatCode: 1, sampleRate: 8000, channels: 2, bitsPerSample: 16 });
    expect(Array.from(wav.samples)).toEqual([1, -1, 2, 0, 3, 0]);
    expect(file.length).toBe(44 + 12);
  });

  it('refuses impossible layouts and sizes', () => {
    expect(() => encodePcmWav(new Int16Array(3), 8000, 2)).toThrow(RangeError);
    expect(() => pcmWavHeader(10, 8000, 3)).toThrow(RangeError);
    expect(() => pcmWavHeader(-2, 8000)).toThrow(RangeError);
    expect(() => pcmWavHeader(2, 0)).toThrow(RangeError);
  });
});

describe('μ-law WAV header (shared with the media recording)', () => {
  it('is the one implementation the media session uses, and the reader decodes it', () => {
    expect(mediaHeader).toBe(mulawWavHeader);
    const audio = mulawEncode(Int16Array.of(0, 1000, -1000));
    const file = Buffer.concat([mulawWavHeader(audio.length), audio, wavPadding(audio.length)]);
    expect(file.readUInt32LE(4)).toBe(MULAW_WAV_HEADER_BYTES - 8 + 4);
    const wav = readWav(new Uint8Array(file));
    expect(wav).toMatchObject({ formatCode: 7, sampleRate: 8000, channels: 1, bitsPerSample: 8 });
    expect(Array.from(wav.samples)).toEqual([0, 988, -988]);
  });
});

describe('readWav', () => {
  it('skips unknown chunks and refuses what it cannot read', () => {
    const pcm = encodePcmWav(Int16Array.of(5, -5), 16000);
    const list = Buffer.from('LIST\x03\x00\x00\x00abc\x00', 'binary');
    const withList = Buffer.concat([pcm.subarray(0, 36), list, pcm.subarray(36)]);
    expect(Array.from(readWav(new Uint8Array(withList)).samples)).toEqual([5, -5]);
    expect(() => readWav(new Uint8Array(10))).toThrow(RangeError);
    expect(() => readWav(pcm.subarray(0, 46))).toThrow(/truncated/);
    expect(() => readWav(pcm.subarray(0, 36))).toThrow(/no data/);
  });
});

describe('PCM WAV writer, block copies', () => {
  const left = Int16Array.from({ length: 1001 }, (_, i) => ((i * 7919) % 65536) - 32768);
  const right = Int16Array.from({ length: 640 }, (_, i) => (i % 2 ? -1 : 1) * (i * 51));

  it('writes samples little-endian byte by byte, whatever the view', () => {
    const backing = new Int16Array(2000);
    backing.set(left, 3);
    const view = backing.subarray(3, 3 + left.length);
    const bytes = pcmToBytes(view);
    for (let i = 0; i < view.length; i++) {
      expect(bytes[2 * i]).toBe(view[i]! & 0xff);
      expect(bytes[2 * i + 1]).toBe((view[i]! >> 8) & 0xff);
    }
    const file = encodePcmWav(view, 8000);
    expect(Array.from(file.subarray(PCM_WAV_HEADER_BYTES))).toEqual(Array.from(bytes));
    expect(Array.from(readWav(file).samples)).toEqual(Array.from(view));
  });

  it('encodeStereoPcmWav gives the bytes of interleaving then encoding, either leg the longer', () => {
    for (const [a, b] of [[left, right], [right, left], [new Int16Array(0), right]] as const) {
      const want = encodePcmWav(interleaveStereo(a, b), 8000, 2);
      expect(Buffer.from(encodeStereoPcmWav(a, b, 8000)).equals(Buffer.from(want))).toBe(true);
    }
  });
});
