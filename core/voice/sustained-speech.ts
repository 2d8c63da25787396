/**
 * How long the caller has been speaking without a real pause, on the inbound audio clock (docs/voice.md
 * "Turn-taking, barge-in and endings"). The barge-in rule needs it: the VAD's "speaking" lasts through its
 * hangover (300 ms of silence before it says stop), so a 200 ms "uh-huh" would still look like speech 300 ms
 * after its onset.
 *
 * Two inputs, one per frame and one per VAD window:
 * - `push`: frames at or above `speechDbfs` are loud. A run of loud frames (surviving quiet gaps up to
 *   `maxGapMs`, between words) gives the run's end at frame precision, and its onset (below);
 * - `judge`: the VAD's verdict on each window it scored (speech or not). Loudness is not speech: the run only
 *   lasts while the VAD keeps calling it speech. A run with no speech verdict for more than `maxGapMs` is
 *   dropped (hiss, static, a fan: loud, but never speech to the VAD), and its length counts no further than
 *   the last speech verdict plus one window (`pendingMs`, the audio the VAD has not judged yet).
 * So noise never builds a run however long it lasts. Pure, and no allocation per frame.
 *
 * The onset. A run still starts only at a loud frame (≥ `speechDbfs`, -40 dBFS), but it is dated where the
 * sound leading into that frame began: the start of the unbroken stretch of 4 ms blocks at least `soundDbfs`
 * loud (SOUND_FLOOR_DBFS, -50 dBFS: Silero's gate, under which audio is not speech to it) that reaches the
 * loud frame's first block, if that stretch began at most `lookBackMs` (20 ms, one frame) before the loud
 * frame. Speech that starts softly (a fricative, a breath, a voice fading in) has up to a frame of real sound
 * before its first loud frame: the barge-in fixture (test/fixtures/audio/barge-in-long, as bench/voice.mjs plays
 * it) has 4 ms blocks of -100, -100, -69.6, -41.6, -38.8 dBFS in its first frame (-44.0 as a whole, not loud)
 * and a second frame of -39.6: the run starts at 20 ms and is now dated 12 ms, where the sound becomes audible
 * (its first non-silent sample, at 8.4 ms, opens a ramp under -50 dBFS), so "300 ms of speech" no longer asks
 * for 308. The date never moves later than the loud frame's start (a frame whose sound starts inside it is
 * still dated at its start, as before) and never earlier than one frame before it.
 *
 * Why the stretch must BEGIN inside the look-back, not merely be sound there: on a line whose noise sits between
 * the two levels (-45 dBFS constant noise: sound, never loud), every 4 ms block before the speech is sound, and
 * dating each run a frame early would count 20 ms of noise as speech, on every run of such a call. Its stretch
 * began long before, so the run keeps its loud frame's start: no over-count. What is left: noise that began
 * within a frame before the speech can date a run up to 20 ms early, and so can noise hovering at the floor,
 * whose 4 ms blocks fall under it now and then: with white noise at -51, -50, -49, -48 dBFS before a loud frame
 * (500 seeds each) runs were dated 0.3, 3.9, 4.1, 0.5 ms early on average, 20 at most; at -53 and below or -47
 * and above, never. And a soft onset longer than a frame (a breath of 30 ms at -45 dBFS) gets none of its
 * credit, as before the look-back.
 */
import { ENERGY_VAD_SPEECH_DBFS } from './energy-vad.js';
import { SOUND_FLOOR_DBFS } from './energy.js';
import { VAD_WINDOW_MS } from './vad-hysteresis.js';

/** The resolution of the onset: 4 ms blocks (32 samples at 8 kHz; a 20 ms frame holds 5). */
export const ONSET_BLOCK_MS = 4;
/** How far before its first loud frame a run's onset may be dated: one 20 ms frame. */
export const ONSET_LOOK_BACK_MS = 20;

/** Mean square of int16 samples at `dbfs` (RMS dBFS, 0 dBFS = 32768). */
const power = (dbfs: number) => (32768 * 10 ** (dbfs / 20)) ** 2;

export class SustainedSpeech {
  private runStartMs: number | undefined;
  private lastLoudMs = 0;
  /** End of the last window the VAD called speech inside the current run (undefined: none yet). */
  private confirmedMs: number | undefined;
  /** Whether any verdict came at all (without a VAD's verdicts, loudness alone measures the run). */
  private judged = false;
  /** Where the unbroken stretch of sound (4 ms blocks ≥ `soundDbfs`) up to the last block pushed began (undefined: that block was quiet). */
  private soundSinceMs: number | undefined;
  private readonly speechPower: number;
  private readonly soundPower: number;

  constructor(
    speechDbfs = ENERGY_VAD_SPEECH_DBFS,
    private readonly maxGapMs = 100,
    private readonly pendingMs = VAD_WINDOW_MS,
    soundDbfs = SOUND_FLOOR_DBFS,
    private readonly lookBackMs = ONSET_LOOK_BACK_MS,
  ) {
    this.speechPower = power(speechDbfs);
    this.soundPower = power(soundDbfs);
  }

  /** One inbound frame that ended at `endMs` and lasted `frameMs`. */
  push(pcm: Int16Array, endMs: number, frameMs: number): void {
    const n = pcm.length;
    const frameStartMs = endMs - frameMs;
    const msPerSample = n > 0 ? frameMs / n : 0;
    const block = Math.max(1, Math.round(ONSET_BLOCK_MS / msPerSample));
    // one pass: the frame's energy and each block's, the stretch of sound carried through the blocks; `leadIn`
    // is where the stretch reaching the frame's first block began (undefined: that block is quiet)
    let total = 0;
    let leadIn: number | undefined;
    for (let from = 0; from < n; from += block) {
      const to = Math.min(n, from + block);
      let sum = 0;
      for (let i = from; i < to; i++) sum += pcm[i] * pcm[i];
      total += sum;
      if (sum >= this.soundPower * (to - from)) this.soundSinceMs ??= frameStartMs + from * msPerSample;
      else this.soundSinceMs = undefined;
      if (from === 0) leadIn = this.soundSinceMs;
    }
    if (n > 0 && total >= this.speechPower * n) {
      if (this.runStartMs === undefined) {
        this.runStartMs = leadIn !== undefined && leadIn >= frameStartMs - this.lookBackMs ? leadIn : frameStartMs;
        this.confirmedMs = undefined;
      }
      this.lastLoudMs = endMs;
    } else if (this.runStartMs !== undefined && endMs - this.lastLoudMs > this.maxGapMs) {
      this.runStartMs = undefined;
    }
  }

  /** The VAD's verdict on a window that ended at `endMs` (same clock as `push`): speech or not. */
  judge(speech: boolean, endMs: number): void {
    this.judged = true;
    if (this.runStartMs === undefined) return;
    if (speech) {
      if (endMs > this.runStartMs) this.confirmedMs = endMs;
      return;
    }
    if (endMs - (this.confirmedMs ?? this.runStartMs) > this.maxGapMs) this.runStartMs = undefined;
  }

  /** Where the current run began (undefined: none). */
  get startMs(): number | undefined {
    return this.runStartMs;
  }

  /** Milliseconds of the current run up to its last loud frame, no further than the VAD heard speech (0: none). */
  get durationMs(): number {
    if (this.runStartMs === undefined) return 0;
    let end = this.lastLoudMs;
    if (this.judged) end = Math.min(end, (this.confirmedMs ?? this.runStartMs) + this.pendingMs);
    return Math.max(0, end - this.runStartMs);
  }
}
