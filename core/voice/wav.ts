import { alawDecode, mulawDecode } from './g711.js';

/**
 * WAV (RIFF) files (docs/voice.md "Audio path"): the writer of recordings (16-bit PCM, mono or stereo with the
 * caller on the left and the agent on the right; G.711 μ-law framing for raw carrier audio) and a small reader
 * for tests and fixtures. All sizes are little-endian; an odd-sized `data` chunk is followed by one pad byte
 * that the RIFF size counts and the data size does not.
 */
export const WAVE_FORMAT_PCM = 1;
export const WAVE_FORMAT_ALAW = 6;
export const WAVE_FORMAT_MULAW = 7;
export const PCM_WAV_HEADER_BYTES = 44;
export const MULAW_WAV_HEADER_BYTES = 58;
const MAX_DATA_BYTES = 0xffffffff - MULAW_WAV_HEADER_BYTES;

function ascii(bytes: Uint8Array, offset: number, s: string): void {
  for (let i = 0; i < s.length; i++) bytes[offset + i] = s.charCodeAt(i);
}

function checkDataBytes(dataBytes: number): void {
  if (!Number.isInteger(dataBytes) || dataBytes < 0 || dataBytes > MAX_DATA_BYTES) throw new RangeError(`WAV data size out of range: ${dataBytes}`);
}

function checkLayout(sampleRate: number, channels: number): void {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0) throw new RangeError(`WAV sample rate out of range: ${sampleRate}`);
  if (!Number.isInteger(channels) || channels < 1 || channels > 2) throw new RangeError(`WAV channels must be 1 or 2, got ${channels}`);
}

/** The 44-byte header of a 16-bit PCM WAV whose data chunk holds `dataBytes` bytes (interleaved frames). */
export function pcmWavHeader(dataBytes: number, sampleRate: number, channels = 1): Uint8Array {
  checkDataBytes(dataBytes);
  checkLayout(sampleRate, channels);
  const header = new Uint8Array(PCM_WAV_HEADER_BYTES);
  const v = new DataView(header.buffer);
  ascii(header, 0, 'RIFF');
  v.setUint32(4, PCM_WAV_HEADER_BYTES - 8 + dataBytes + (dataBytes % 2), true);
  ascii(header, 8, 'WAVE');
  ascii(header, 12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, WAVE_FORMAT_PCM, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * channels * 2, true); // byte rate
  v.setUint16(32, channels * 2, true); // block align
  v.setUint16(34, 16, true); // bits per sample
  ascii(header, 36, 'data');
  v.setUint32(40, dataBytes, true);
  return header;
}

/**
 * The 58-byte header of a μ-law WAV (format code 7, one byte per sample) whose data chunk holds `dataBytes`
 * bytes. Non-PCM formats carry an 18-byte `fmt ` chunk (cbSize 0) and a `fact` chunk with the sample count.
 */
export function mulawWavHeader(dataBytes: number, sampleRate = 8000, channels = 1): Uint8Array {
  checkDataBytes(dataBytes);
  checkLayout(sampleRate, channels);
  const header = new Uint8Array(MULAW_WAV_HEADER_BYTES);
  const v = new DataView(header.buffer);
  ascii(header, 0, 'RIFF');
  v.setUint32(4, MULAW_WAV_HEADER_BYTES - 8 + dataBytes + (dataBytes % 2), true);
  ascii(header, 8, 'WAVE');
  ascii(header, 12, 'fmt ');
  v.setUint32(16, 18, true);
  v.setUint16(20, WAVE_FORMAT_MULAW, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * channels, true); // byte rate: one byte per sample
  v.setUint16(32, channels, true); // block align
  v.setUint16(34, 8, true); // bits per sample
  v.setUint16(36, 0, true); // cbSize
  ascii(header, 38, 'fact');
  v.setUint32(42, 4, true);
  v.setUint32(46, Math.floor(dataBytes / channels), true); // samples per channel
  ascii(header, 50, 'data');
  v.setUint32(54, dataBytes, true);
  return header;
}

/** The pad byte an odd-sized data chunk needs (empty when even). */
export const wavPadding = (dataBytes: number): Uint8Array => new Uint8Array(dataBytes % 2);

/**
 * Interleaves two legs into stereo frames (left, right, left, ...). The shorter leg is padded with silence so
 * both cover the same clock.
 */
export function interleaveStereo(left: Int16Array, right: Int16Array): Int16Array {
  const frames = Math.max(left.length, right.length);
  const out = new Int16Array(frames * 2);
  for (let i = 0; i < left.length; i++) out[2 * i] = left[i];
  for (let i = 0; i < right.length; i++) out[2 * i + 1] = right[i];
  return out;
}

/** Whether this platform stores an Int16Array little-endian (WAV's order), so samples copy as they are. */
const LITTLE_ENDIAN = new Uint8Array(Int16Array.of(1).buffer)[0] === 1;

/** Writes `pcm` little-endian into `bytes` from byte `offset` (even), one block copy where the platform allows. */
function writeLe16(bytes: Uint8Array, offset: number, pcm: Int16Array): void {
  if (LITTLE_ENDIAN && (bytes.byteOffset + offset) % 2 === 0) {
    new Int16Array(bytes.buffer, bytes.byteOffset + offset, pcm.length).set(pcm);
    return;
  }
  const v = new DataView(bytes.buffer, bytes.byteOffset + offset, pcm.length * 2);
  for (let i = 0; i < pcm.length; i++) v.setInt16(2 * i, pcm[i], true);
}

/** 16-bit samples as little-endian bytes (a copy, whatever the platform's byte order). */
export function pcmToBytes(pcm: Int16Array): Uint8Array {
  const bytes = new Uint8Array(pcm.length * 2);
  writeLe16(bytes, 0, pcm);
  return bytes;
}

/** A whole 16-bit PCM WAV file of interleaved `pcm` (`channels` 1, or 2 from `interleaveStereo`). */
export function encodePcmWav(pcm: Int16Array, sampleRate: number, channels = 1): Uint8Array {
  if (pcm.length % channels !== 0) throw new RangeError(`${pcm.length} samples do not make whole ${channels}-channel frames`);
  const file = new Uint8Array(PCM_WAV_HEADER_BYTES + pcm.length * 2);
  file.set(pcmWavHeader(pcm.length * 2, sampleRate, channels), 0);
  writeLe16(file, PCM_WAV_HEADER_BYTES, pcm);
  return file;
}

/**
 * The stereo WAV file of two legs (left, right), interleaved straight into the file (the same bytes as
 * `encodePcmWav(interleaveStereo(left, right), …, 2)` without the two intermediate copies).
 */
export function encodeStereoPcmWav(left: Int16Array, right: Int16Array, sampleRate: number): Uint8Array {
  const frames = Math.max(left.length, right.length);
  const file = new Uint8Array(PCM_WAV_HEADER_BYTES + frames * 4);
  file.set(pcmWavHeader(frames * 4, sampleRate, 2), 0);
  if (LITTLE_ENDIAN) {
    const out = new Int16Array(file.buffer, PCM_WAV_HEADER_BYTES, frames * 2);
    for (let i = 0; i < left.length; i++) out[2 * i] = left[i]!;
    for (let i = 0; i < right.length; i++) out[2 * i + 1] = right[i]!;
  } else {
    writeLe16(file, PCM_WAV_HEADER_BYTES, interleaveStereo(left, right));
  }
  return file;
}

export interface DecodedWav {
  /** WAVE format code of the file (1 PCM, 6 A-law, 7 μ-law). */
  formatCode: number;
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** The data chunk as stored. */
  data: Uint8Array;
  /** The audio as interleaved 16-bit samples (G.711 decoded). */
  samples: Int16Array;
}

/**
 * Reads a WAV file: 16-bit PCM, μ-law or A-law, any number of channels. Unknown chunks are skipped. Throws
 * RangeError on anything else or on a truncated file.
 */
export function readWav(file: Uint8Array): DecodedWav {
  const v = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const tag = (o: number) => String.fromCharCode(file[o], file[o + 1], file[o + 2], file[o + 3]);
  if (file.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new RangeError('not a RIFF/WAVE file');
  let fmt: { formatCode: number; channels: number; sampleRate: number; bitsPerSample: number } | null = null;
  let offset = 12;
  while (offset + 8 <= file.length) {
    const id = tag(offset);
    const size = v.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + size > file.length) throw new RangeError('truncated fmt chunk');
      fmt = { formatCode: v.getUint16(body, true), channels: v.getUint16(body + 2, true), sampleRate: v.getUint32(body + 4, true), bitsPerSample: v.getUint16(body + 14, true) };
    } else if (id === 'data') {
      if (!fmt) throw new RangeError('data chunk before fmt chunk');
      const data = file.subarray(body, Math.min(file.length, body + size));
      if (data.length < size) throw new RangeError(`truncated data chunk (${data.length} of ${size} bytes)`);
      return { ...fmt, data, samples: samplesOf(fmt.formatCode, fmt.bitsPerSample, data) };
    }
    offset = body + size + (size % 2);
  }
  throw new RangeError('no data chunk');
}

function samplesOf(formatCode: number, bits: number, data: Uint8Array): Int16Array {
  if (formatCode === WAVE_FORMAT_PCM && bits === 16) {
    const v = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const out = new Int16Array(data.length >> 1);
    for (let i = 0; i < out.length; i++) out[i] = v.getInt16(2 * i, true);
    return out;
  }
  if (formatCode === WAVE_FORMAT_MULAW && bits === 8) return mulawDecode(data);
  if (formatCode === WAVE_FORMAT_ALAW && bits === 8) return alawDecode(data);
  throw new RangeError(`unsupported WAV format ${formatCode} with ${bits} bits per sample`);
}
