/**
 * Loudness of PCM audio as RMS in dBFS (0 dBFS = a full-scale square wave, 32768), the measure the VAD's
 * energy gate and the energy-only detector use (docs/voice.md "Audio path").
 */

/** What `rmsDbfs` answers for digital silence instead of -Infinity, so the value stays a finite number. */
export const SILENCE_DBFS = -100;

/**
 * The floor of speech (RMS dBFS): quieter audio is not speech to either detector's sound measures. It is the level
 * of Silero's energy gate (adapters/vad/silero-vad.ts, SILERO_GATE_DBFS: windows under it are scored 0 without
 * the model), here in core so that core's own measures (the barge-in onset, sustained-speech.ts) use the same line.
 */
export const SOUND_FLOOR_DBFS = -50;

/** RMS level of `pcm[start, end)` in dBFS, at least SILENCE_DBFS (also for an empty range). */
export function rmsDbfs(pcm: Int16Array, start = 0, end = pcm.length): number {
  const from = Math.max(0, start);
  const to = Math.min(pcm.length, end);
  if (to <= from) return SILENCE_DBFS;
  let sum = 0;
  for (let i = from; i < to; i++) sum += pcm[i] * pcm[i];
  const rms = Math.sqrt(sum / (to - from)) / 32768;
  return rms > 0 ? Math.max(SILENCE_DBFS, 20 * Math.log10(rms)) : SILENCE_DBFS;
}

/** RMS dBFS of each whole frame of `frameSamples` samples (a trailing partial frame is not measured). */
export function frameLevelsDbfs(pcm: Int16Array, frameSamples: number): Float64Array {
  if (!Number.isInteger(frameSamples) || frameSamples <= 0) throw new RangeError(`frame size must be a positive integer, got ${frameSamples}`);
  const frames = Math.floor(pcm.length / frameSamples);
  const levels = new Float64Array(frames);
  for (let f = 0; f < frames; f++) levels[f] = rmsDbfs(pcm, f * frameSamples, (f + 1) * frameSamples);
  return levels;
}
