/**
 * Audio formats the voice pipeline moves between carriers, speech providers, the VAD and the recorder
 * (docs/voice.md). Telephony audio stays μ-law 8 kHz end to end where the provider allows it; PCM (`l16`,
 * signed 16-bit little-endian, mono) appears only where a component needs samples.
 */
export type AudioEncoding = 'mulaw' | 'alaw' | 'l16';

export interface AudioFormat {
  encoding: AudioEncoding;
  sampleRate: 8000 | 16000 | 22050 | 24000 | 44100 | 48000;
}

export const MULAW_8K: AudioFormat = Object.freeze({ encoding: 'mulaw', sampleRate: 8000 });
export const L16_8K: AudioFormat = Object.freeze({ encoding: 'l16', sampleRate: 8000 });
export const L16_16K: AudioFormat = Object.freeze({ encoding: 'l16', sampleRate: 16000 });
export const L16_24K: AudioFormat = Object.freeze({ encoding: 'l16', sampleRate: 24000 });

/** Bytes of one millisecond of audio in `format` (μ-law/A-law: 1 byte a sample; l16: 2). */
export function bytesPerMs(format: AudioFormat): number {
  return (format.sampleRate / 1000) * (format.encoding === 'l16' ? 2 : 1);
}

export const sameFormat = (a: AudioFormat, b: AudioFormat): boolean => a.encoding === b.encoding && a.sampleRate === b.sampleRate;

/** `parts` one after the other in a new buffer (audio pieces that play back to back). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
