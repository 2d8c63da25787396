/**
 * G.711 μ-law and A-law (ITU-T G.711), the one codec table of the project (docs/voice.md "Audio path").
 * Decoding is a 256-entry table lookup; encoding a 65,536-entry table indexed by the 16-bit sample, both built
 * once at module load from the reference bit manipulations below (μ-law: bias 0x84, clip 32635, as in the
 * CCITT reference code and `alawmulaw`; A-law: the Sun reference `linear2alaw`/`alaw2linear`).
 *
 * Every function is pure and allocation-free when given an output array; without one it allocates the result.
 */

const MULAW_BIAS = 0x84;
const MULAW_CLIP = 32635;

/** The μ-law byte of one 16-bit sample, computed (the table builder; use `mulawEncode` on audio). */
export function mulawEncodeSample(sample: number): number {
  let s = sample | 0;
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  if (s > MULAW_CLIP) s = MULAW_CLIP;
  s += MULAW_BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

/** The 16-bit sample of one μ-law byte, computed (the table builder; use `mulawDecode` on audio). */
export function mulawDecodeSample(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + MULAW_BIAS) << exponent) - MULAW_BIAS;
  return u & 0x80 ? 0 - magnitude : magnitude;
}

/** The A-law byte of one 16-bit sample, computed. */
export function alawEncodeSample(sample: number): number {
  let v = (sample | 0) >> 3; // 13-bit magnitude domain
  let mask: number;
  if (v >= 0) mask = 0xd5;
  else {
    mask = 0x55;
    v = -v - 1;
  }
  let segment = 0;
  while (segment < 8 && v >= 0x20 << segment) segment++;
  if (segment >= 8) return 0x7f ^ mask;
  const aval = (segment << 4) | ((segment < 2 ? v >> 1 : v >> segment) & 0x0f);
  return aval ^ mask;
}

/** The 16-bit sample of one A-law byte, computed. */
export function alawDecodeSample(byte: number): number {
  const a = (byte & 0xff) ^ 0x55;
  let t = (a & 0x0f) << 4;
  const segment = (a & 0x70) >> 4;
  if (segment === 0) t += 8;
  else {
    t += 0x108;
    if (segment > 1) t <<= segment - 1;
  }
  return a & 0x80 ? t : -t;
}

function decodeTable(decode: (b: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let b = 0; b < 256; b++) table[b] = decode(b);
  return table;
}

function encodeTable(encode: (s: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = encode((i << 16) >> 16); // index = sample & 0xffff
  return table;
}

/** μ-law byte → 16-bit sample. */
export const MULAW_TO_PCM: Int16Array = decodeTable(mulawDecodeSample);
/** A-law byte → 16-bit sample. */
export const ALAW_TO_PCM: Int16Array = decodeTable(alawDecodeSample);
const PCM_TO_MULAW = encodeTable(mulawEncodeSample);
const PCM_TO_ALAW = encodeTable(alawEncodeSample);

/** The μ-law byte of digital silence (sample 0). */
export const MULAW_SILENCE = 0xff;
/** The A-law byte of digital silence (sample 0). */
export const ALAW_SILENCE = 0xd5;

function lookupDecode(table: Int16Array, bytes: Uint8Array, out?: Int16Array): Int16Array {
  const pcm = out ?? new Int16Array(bytes.length);
  if (pcm.length < bytes.length) throw new RangeError(`output holds ${pcm.length} samples, ${bytes.length} needed`);
  for (let i = 0; i < bytes.length; i++) pcm[i] = table[bytes[i]];
  return pcm;
}

function lookupEncode(table: Uint8Array, pcm: Int16Array, out?: Uint8Array): Uint8Array {
  const bytes = out ?? new Uint8Array(pcm.length);
  if (bytes.length < pcm.length) throw new RangeError(`output holds ${bytes.length} bytes, ${pcm.length} needed`);
  for (let i = 0; i < pcm.length; i++) bytes[i] = table[pcm[i] & 0xffff];
  return bytes;
}

/** μ-law bytes → PCM samples (into `out` when given: it must hold `bytes.length` samples). */
export const mulawDecode = (bytes: Uint8Array, out?: Int16Array): Int16Array => lookupDecode(MULAW_TO_PCM, bytes, out);
/** PCM samples → μ-law bytes. */
export const mulawEncode = (pcm: Int16Array, out?: Uint8Array): Uint8Array => lookupEncode(PCM_TO_MULAW, pcm, out);
/** A-law bytes → PCM samples. */
export const alawDecode = (bytes: Uint8Array, out?: Int16Array): Int16Array => lookupDecode(ALAW_TO_PCM, bytes, out);
/** PCM samples → A-law bytes. */
export const alawEncode = (pcm: Int16Array, out?: Uint8Array): Uint8Array => lookupEncode(PCM_TO_ALAW, pcm, out);

/**
 * μ-law → PCM into one buffer of its own, reused by every call: the hot per-frame paths (a call's caller frames,
 * its agent frames for the recording) decode 50 frames a second each, and a fresh 320-byte `Int16Array` per frame
 * is an off-heap allocation the garbage collector then has to sweep. Each result is a view of that buffer, valid
 * until the next `decode`: give it only to code that copies what it keeps.
 */
export class ReusedMulawDecoder {
  private buffer = new Int16Array(160);

  decode(bytes: Uint8Array): Int16Array {
    if (this.buffer.length < bytes.length) this.buffer = new Int16Array(bytes.length);
    const out = this.buffer.length === bytes.length ? this.buffer : this.buffer.subarray(0, bytes.length);
    return lookupDecode(MULAW_TO_PCM, bytes, out);
  }
}
