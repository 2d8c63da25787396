/**
 * Voice activity detection for one call's inbound audio (docs/voice.md). The Silero adapter
 * (adapters/vad) shares one inference session between calls and keeps per-call state; an energy gate in front
 * skips inference on silence. Tests use an energy-only detector.
 */
export const VoiceActivityDetectorFactory = Symbol.for('callplane.VoiceActivityDetectorFactory');

export type VadEvent =
  /** Speech began `atMs` into the stream (after `minSpeechMs` of speech). */
  | { type: 'speech_start'; atMs: number }
  /** Speech ended `atMs` into the stream (after `minSilenceMs` of silence). */
  | { type: 'speech_stop'; atMs: number };

export interface VadOptions {
  /** PCM rate of the samples that will be pushed. */
  sampleRate: 8000 | 16000;
  /** Speech probability above which a window counts as speech (Silero default 0.5). */
  threshold?: number;
  minSpeechMs?: number;
  minSilenceMs?: number;
}

/** One call's detector. Not shared between calls. */
export interface VoiceActivityDetector {
  /**
   * Feeds PCM samples (any length; windows are cut internally) and returns the events they caused, in order.
   * Synchronous so the caller's audio path never waits; never throws on audio.
   */
  push(pcm: Int16Array): VadEvent[];
  /** Forgets the stream state (a new utterance context). */
  reset(): void;
  /** True while the detector is inside speech. */
  readonly speaking: boolean;
  /**
   * The verdict on the last window scored (after the latest `push`): `speech` when its score reached the
   * threshold (not the hysteresis: a noise window inside speech is `false`), `endMs` where it ended in stream
   * time (0 and false before any window). The barge-in rule measures sustained speech on these verdicts.
   */
  readonly lastWindow: { readonly speech: boolean; readonly endMs: number };
}

export interface VoiceActivityDetectorFactory {
  /** A detector for one call. Throws when the model cannot be loaded (reported at start-up, not per call). */
  create(options: VadOptions): VoiceActivityDetector;
}
