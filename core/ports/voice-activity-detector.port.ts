/**
 * Voice activity detection for one call's inbound audio (docs/voice.md). The Silero adapter
 * (adapters/vad) shares one inference session between calls and keeps per-call state; an energy gate in front
 * skips inference on silence; windows are scored in batches, so its events may come a few ms after the audio.
 * Tests use an energy-only detector, which scores synchronously.
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
  /**
   * Receives, in order, the events that become known after `push` returned: a detector may score its windows
   * later (Silero scores the windows of all calls together, one inference per batch, a few ms after they
   * arrive). Called outside `push`, never re-entrantly. Without a listener such events are returned by the
   * next `push` instead. Should not throw: a detector that scores later may contain the error (Silero reports it
   * and resets that call's detector, docs/voice.md "Voice activity detection"), not hand it back to the caller.
   */
  onEvent?: (event: VadEvent) => void;
  /**
   * Receives every window's verdict (`speech`: its score reached the threshold; `endMs`: where the window ended,
   * stream time), in stream order, as its score comes: during `push` or later (a batch that scored several of a
   * call's windows at once gives each of them). Called before the event that window causes, if any. `speech` is
   * the score against the threshold, not the hysteresis: a noise window inside speech is `false`. The barge-in
   * rule measures sustained speech on these verdicts, every one of them (the newest alone would skip the ones a
   * batch scored together before it).
   */
  onWindow?: (speech: boolean, endMs: number) => void;
}

/**
 * One call's detector. Not shared between calls.
 *
 * Contract on timing: every window of a call is scored in order and each event is delivered exactly once, in
 * stream order, either returned by the `push` during which it became known or, when it becomes known later,
 * given to `VadOptions.onEvent`. Event times (`atMs`) are stream time whatever the delivery delay, so onsets
 * and ends of speech stay exact; only the moment the caller learns of them moves.
 */
export interface VoiceActivityDetector {
  /**
   * Feeds PCM samples (any length; windows are cut internally) and returns the events known by the time it
   * returns, in order (for a detector that scores synchronously, all the events this audio caused). Never
   * blocks on the model and never throws on audio.
   */
  push(pcm: Int16Array): VadEvent[];
  /** Forgets the stream state (a new utterance context); windows still waiting to be scored are dropped. */
  reset(): void;
  /** Stops the detector: windows waiting to be scored are dropped and no event follows. Idempotent. */
  close(): void;
  /** True while the detector is inside speech, as far as the events delivered so far tell. */
  readonly speaking: boolean;
  /**
   * Optional, for a detector that scores later (Silero): while on, this call's windows are scored as soon as they
   * are cut, not batched with other calls', at some CPU cost per window; for the few windows a decision waits on
   * (the barge-in rule, when the caller's speech is about to reach `interruption_min_speech_ms`). Never throws.
   * A detector that scores during `push` has nothing to hurry and need not have it.
   */
  expedite?(on: boolean): void;
}

export interface VoiceActivityDetectorFactory {
  /** A detector for one call. Throws when the model cannot be loaded (reported at start-up, not per call). */
  create(options: VadOptions): VoiceActivityDetector;
}
