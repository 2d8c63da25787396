/**
 * How long the caller has been making sound without a real pause, on the inbound audio clock (docs/voice.md
 * "Turn-taking, barge-in and endings"). The barge-in rule needs it: the VAD's "speaking" lasts through its
 * hangover (300 ms of silence before it says stop), so a 200 ms "uh-huh" would still look like speech 300 ms
 * after its onset. Frames at or above `speechDbfs` are voiced; a voiced run survives gaps up to `maxGapMs`
 * (between words). Pure.
 */
import { ENERGY_VAD_SPEECH_DBFS } from './energy-vad.js';
import { rmsDbfs } from './energy.js';

export class SustainedSpeech {
  private runStartMs: number | undefined;
  private lastVoicedMs = 0;

  constructor(
    private readonly speechDbfs = ENERGY_VAD_SPEECH_DBFS,
    private readonly maxGapMs = 100,
  ) {}

  /** One inbound frame that ended at `endMs` and lasted `frameMs`. */
  push(pcm: Int16Array, endMs: number, frameMs: number): void {
    if (pcm.length > 0 && rmsDbfs(pcm) >= this.speechDbfs) {
      if (this.runStartMs === undefined) this.runStartMs = endMs - frameMs;
      this.lastVoicedMs = endMs;
    } else if (this.runStartMs !== undefined && endMs - this.lastVoicedMs > this.maxGapMs) {
      this.runStartMs = undefined;
    }
  }

  /** Where the current voiced run began (undefined: none). */
  get startMs(): number | undefined {
    return this.runStartMs;
  }

  /** Milliseconds of the current voiced run up to its last voiced frame (0: none). */
  get durationMs(): number {
    return this.runStartMs === undefined ? 0 : this.lastVoicedMs - this.runStartMs;
  }
}
