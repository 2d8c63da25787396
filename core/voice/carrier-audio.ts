/**
 * Converters between a carrier's wire audio and the session's μ-law 8 kHz (docs/voice.md "Carriers and media
 * framing"). μ-law 8 kHz passes through untouched; A-law 8 kHz is re-encoded; L16 (signed 16-bit
 * little-endian PCM, Vonage at 16 kHz, Asterisk `slin*`) is decoded, resampled by a stateful `Resampler`
 * (state carries across frames, so 20 ms frames give the samples one whole buffer gives) and encoded. One
 * converter per stream and direction; pure apart from that state.
 */
import { alawDecode, alawEncode, mulawDecode, mulawEncode } from './g711.js';
import { MULAW_8K, sameFormat, type AudioFormat } from './audio-format.js';
import { createResampler } from './resample.js';

/** The format the voice session speaks on every carrier. */
export const SESSION_FORMAT: AudioFormat = MULAW_8K;

export interface AudioConverter {
  /** The converted bytes of the next chunk (may be shorter or longer than a whole frame; never throws). */
  convert(bytes: Uint8Array): Uint8Array;
  /** Forgets the stream's filter state (after a clear: the next audio is unrelated to the last). */
  reset(): void;
}

const IDENTITY: AudioConverter = Object.freeze({ convert: (b: Uint8Array) => b, reset: () => undefined });

/** Whether this platform stores an Int16Array little-endian (L16's order): then samples copy as one block. */
const LITTLE_ENDIAN = new Uint8Array(Int16Array.of(1).buffer)[0] === 1;

/** Little-endian 16-bit samples of `bytes` (an odd last byte is dropped), whatever their alignment. A copy. */
export function l16Samples(bytes: Uint8Array): Int16Array {
  const n = bytes.length >> 1;
  // one native copy into a fresh aligned buffer (TypedArray slice: a Node Buffer's own slice is a view)
  if (LITTLE_ENDIAN) return new Int16Array(Uint8Array.prototype.slice.call(bytes, 0, 2 * n).buffer);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    const v = bytes[2 * i]! | (bytes[2 * i + 1]! << 8);
    out[i] = v >= 0x8000 ? v - 0x10000 : v;
  }
  return out;
}

/** 16-bit samples as little-endian bytes (a copy). */
export function l16Bytes(pcm: Int16Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(pcm.slice().buffer);
  const out = new Uint8Array(pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) {
    const v = pcm[i]!;
    out[2 * i] = v & 0xff;
    out[2 * i + 1] = (v >> 8) & 0xff;
  }
  return out;
}

/** True when audio in `format` can be converted to and from the session's format. */
export function canConvert(format: AudioFormat): boolean {
  if (format.encoding === 'l16') return true;
  return format.sampleRate === 8000;
}

/** Wire audio in `from` → session μ-law 8 kHz. Throws RangeError for a format `canConvert` refuses. */
export function toSessionAudio(from: AudioFormat): AudioConverter {
  if (sameFormat(from, SESSION_FORMAT)) return IDENTITY;
  if (!canConvert(from)) throw new RangeError(`cannot convert ${from.encoding}/${from.sampleRate} audio`);
  if (from.encoding === 'alaw') return { convert: (b) => mulawEncode(alawDecode(b)), reset: () => undefined };
  const resampler = createResampler(from.sampleRate, SESSION_FORMAT.sampleRate);
  // the resampled PCM only lives until it is encoded: one buffer, grown to the largest chunk (a 24 kHz TTS answer
  // is converted 100 ms at a time as it plays, docs/voice.md), instead of a new one per chunk
  let pcm = new Int16Array(0);
  return {
    convert: (b) => {
      const n = resampler.outputLength(b.length >> 1);
      if (pcm.length < n) pcm = new Int16Array(n);
      return mulawEncode(resampler.processL16(b, pcm));
    },
    reset: () => resampler.reset(),
  };
}

/** Session μ-law 8 kHz → wire audio in `to`. Throws RangeError for a format `canConvert` refuses. */
export function fromSessionAudio(to: AudioFormat): AudioConverter {
  if (sameFormat(to, SESSION_FORMAT)) return IDENTITY;
  if (!canConvert(to)) throw new RangeError(`cannot convert ${to.encoding}/${to.sampleRate} audio`);
  if (to.encoding === 'alaw') {
    return { convert: (b) => alawEncode(mulawDecode(b)), reset: () => undefined };
  }
  const resampler = createResampler(SESSION_FORMAT.sampleRate, to.sampleRate);
  return {
    convert: (b) => l16Bytes(resampler.process(mulawDecode(b))),
    reset: () => resampler.reset(),
  };
}
