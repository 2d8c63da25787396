/**
 * The short audible notice of a call that cannot be served (API.md 11: an agent without `llm`, `stt` or `tts`):
 * the three rising Special Information Tones (913.8, 1370.6, 1776.7 Hz, 330 ms each, ITU-T E.180 "intercept")
 * heard twice, then the line is hung up. No speech service is needed to play it. Pure.
 */
import { mulawEncode } from './g711.js';

const SAMPLE_RATE = 8000;
const TONES_HZ = [913.8, 1370.6, 1776.7] as const;
const TONE_MS = 330;
const GAP_MS = 400;
/** About -12 dBFS: clearly audible, never clipping. */
const AMPLITUDE = 8000;

/** The notice as μ-law 8 kHz mono, a whole number of 20 ms frames. */
export function noticeTonesMulaw(repeats = 2): Uint8Array {
  const toneSamples = (TONE_MS * SAMPLE_RATE) / 1000;
  const gapSamples = (GAP_MS * SAMPLE_RATE) / 1000;
  const once = TONES_HZ.length * toneSamples + gapSamples;
  const total = Math.ceil((once * repeats) / 160) * 160;
  const pcm = new Int16Array(total);
  let at = 0;
  for (let r = 0; r < repeats; r++) {
    for (const hz of TONES_HZ) {
      for (let i = 0; i < toneSamples; i++) {
        // a 5 ms ramp at both ends keeps the tone free of clicks
        const ramp = Math.min(1, i / 40, (toneSamples - 1 - i) / 40);
        pcm[at + i] = Math.round(AMPLITUDE * ramp * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE));
      }
      at += toneSamples;
    }
    at += gapSamples;
  }
  return mulawEncode(pcm);
}

/** How long `noticeTonesMulaw(repeats)` plays (ms). */
export function noticeTonesDurationMs(repeats = 2): number {
  return (noticeTonesMulaw(repeats).length / SAMPLE_RATE) * 1000;
}
