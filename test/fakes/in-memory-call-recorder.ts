/**
 * The stereo call recorder as it was before recordings streamed to storage (docs/voice.md "Recordings of
 * talking calls"): both legs whole in memory, the WAV built at the end. Kept, unchanged, as the reference the
 * streaming `CallRecorder` (core/voice/call-recorder.ts) must reproduce byte for byte: its tests feed both the
 * same frames, clears and gaps and compare the files.
 */
import { encodeStereoPcmWav } from '../../core/voice/wav.js';

const RECORDING_SAMPLE_RATE = 8000;

class Leg {
  samples = new Int16Array(RECORDING_SAMPLE_RATE * 4);
  length = 0;

  /** Writes `pcm` at `at`, silence-filling up to it; grows as needed. */
  write(pcm: Int16Array, at: number): void {
    const end = at + pcm.length;
    if (end > this.samples.length) {
      let size = this.samples.length;
      while (size < end) size *= 2;
      const grown = new Int16Array(size);
      grown.set(this.samples.subarray(0, this.length));
      this.samples = grown;
    }
    if (at > this.length) this.samples.fill(0, this.length, at);
    this.samples.set(pcm, at);
    this.length = Math.max(this.length, end);
  }

  truncate(at: number): void {
    if (at < this.length) this.length = Math.max(0, at);
  }

  view(): Int16Array {
    return this.samples.subarray(0, this.length);
  }
}

interface InMemoryCallRecorderOptions {
  /** Wall time (the session's Timers clock) the recording starts at. */
  startMs: number;
  /** Inbound gaps longer than this are filled with silence. Default 60 ms. */
  gapToleranceMs?: number;
}

export class InMemoryCallRecorder {
  private readonly caller = new Leg();
  private readonly agent = new Leg();
  /** Wall time of the last inbound frame's arrival (its end on the media clock). */
  private anchorMs: number;
  private readonly perMs = RECORDING_SAMPLE_RATE / 1000;
  private readonly gapTolerance: number;
  private agentContinuesAt = -1;

  constructor(options: InMemoryCallRecorderOptions) {
    this.anchorMs = options.startMs;
    this.gapTolerance = (options.gapToleranceMs ?? 60) * this.perMs;
  }

  /** The sample offset wall time `atMs` maps to on the media clock. */
  offsetAt(atMs: number): number {
    return Math.max(0, Math.round(this.caller.length + (atMs - this.anchorMs) * this.perMs));
  }

  /** A caller frame (8 kHz PCM) that arrived at `atMs`. */
  writeCaller(pcm: Int16Array, atMs: number): void {
    const expectedEnd = this.offsetAt(atMs);
    let at = this.caller.length;
    if (expectedEnd - pcm.length - at > this.gapTolerance) at = expectedEnd - pcm.length; // a gap: keep to wall time
    this.caller.write(pcm, at);
    this.anchorMs = atMs;
  }

  /** An agent frame (8 kHz PCM) that starts playing at `playAtMs`. */
  writeAgent(pcm: Int16Array, playAtMs: number): void {
    let at = this.offsetAt(playAtMs);
    if (this.agentContinuesAt >= 0 && Math.abs(at - this.agentContinuesAt) <= this.gapTolerance) at = this.agentContinuesAt;
    this.agent.write(pcm, at);
    this.agentContinuesAt = at + pcm.length;
  }

  /** Barge-in at `atMs`: agent audio placed after it never played. */
  clear(atMs: number): void {
    this.agent.truncate(this.offsetAt(atMs));
    this.agentContinuesAt = -1;
  }

  /** Seconds covered (the longer leg). */
  get durationMs(): number {
    return Math.max(this.caller.length, this.agent.length) / this.perMs;
  }

  get callerSamples(): Int16Array {
    return this.caller.view();
  }

  get agentSamples(): Int16Array {
    return this.agent.view();
  }

  /** The stereo WAV file (left caller, right agent; the shorter leg padded with silence). */
  wav(): Uint8Array {
    return encodeStereoPcmWav(this.caller.view(), this.agent.view(), RECORDING_SAMPLE_RATE);
  }
}
