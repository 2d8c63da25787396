/**
 * WAV (RIFF) framing of G.711 μ-law audio: format code 7, one byte per sample. Non-PCM formats carry an
 * 18-byte `fmt ` chunk (cbSize 0) and a `fact` chunk with the sample count; an odd-sized `data` chunk is
 * followed by one pad byte (counted in the RIFF size, not in the data size).
 */
export const WAVE_FORMAT_MULAW = 7;
export const MULAW_WAV_HEADER_BYTES = 58;

/** The 58-byte header of a mono (or `channels`) μ-law WAV whose data chunk holds `dataBytes` bytes. */
export function mulawWavHeader(dataBytes: number, sampleRate = 8000, channels = 1): Uint8Array {
  if (!Number.isInteger(dataBytes) || dataBytes < 0 || dataBytes > 0xffffffff - MULAW_WAV_HEADER_BYTES) {
    throw new RangeError(`WAV data size out of range: ${dataBytes}`);
  }
  const header = new Uint8Array(MULAW_WAV_HEADER_BYTES);
  const v = new DataView(header.buffer);
  const ascii = (offset: number, s: string) => {
    for (let i = 0; i < s.length; i++) header[offset + i] = s.charCodeAt(i);
  };
  const pad = dataBytes % 2;
  ascii(0, 'RIFF');
  v.setUint32(4, MULAW_WAV_HEADER_BYTES - 8 + dataBytes + pad, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  v.setUint32(16, 18, true);
  v.setUint16(20, WAVE_FORMAT_MULAW, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * channels, true); // byte rate: one byte per sample
  v.setUint16(32, channels, true); // block align
  v.setUint16(34, 8, true); // bits per sample
  v.setUint16(36, 0, true); // cbSize
  ascii(38, 'fact');
  v.setUint32(42, 4, true);
  v.setUint32(46, Math.floor(dataBytes / channels), true); // samples per channel
  ascii(50, 'data');
  v.setUint32(54, dataBytes, true);
  return header;
}

/** The pad byte an odd-sized data chunk needs (empty when even). */
export const wavPadding = (dataBytes: number): Uint8Array => new Uint8Array(dataBytes % 2);
