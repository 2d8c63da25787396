/**
 * How long the caller has been speaking without a real pause, on the inbound audio clock (docs/voice.md
 * "Turn-taking, barge-in and endings"). The barge-in rule needs it: the VAD's "speaking" lasts through its
 * hangover (300 ms of silence before it says stop), so a 200 ms "uh-huh" would still look like speech 300 ms
 * after its onset.
 *
 * Two inputs, one per frame and one per VAD window:
 * - `push`: frames at or above `speechDbfs` are loud. A run of loud frames (surviving quiet gaps up to
 *   `maxGapMs`, between words) gives the run's onset and end at frame precision;
 * - `judge`: the VAD's verdict on each window it scored (speech or not). Loudness is not speech: the run only
 *   lasts while the VAD keeps calling it speech. A run with no speech verdict for more than `maxGapMs` is
 *   dropped (hiss, static, a fan: loud, but never speech to the VAD), and its length counts no further than
 *   the last speech verdict plus one window (`pendingMs`, the audio the VAD has not judged yet).
 * So noise never builds a run however long it lasts, and speech keeps the onset of its first loud frame. Pure.
 */
import { ENERGY_VAD_SPEECH_DBFS } from './energy-vad.js';
import { rmsDbfs } from './energy.js';
import { VAD_WINDOW_MS } from './vad-hysteresis.js';

export class SustainedSpeech {
  private runStartMs: number | undefined;
  private lastLoudMs = 0;
  /** End of the last window the VAD called speech inside the current run (undefined: none yet). */
  private confirmedMs: number | undefined;
  /** Whether any verdict came at all (without a VAD's verdicts, loudness alone measures the run). */
  private judged = false;

  constructor(
    private readonly speechDbfs = ENERGY_VAD_SPEECH_DBFS,
    private readonly maxGapMs = 100,
    private readonly pendingMs = VAD_WINDOW_MS,
  ) {}

  /** One inbound frame that ended at `endMs` and lasted `frameMs`. */
  push(pcm: Int16Array, endMs: number, frameMs: number): void {
    if (pcm.length > 0 && rmsDbfs(pcm) >= this.speechDbfs) {
      if (this.runStartMs === undefined) {
        this.runStartMs = endMs - frameMs;
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
