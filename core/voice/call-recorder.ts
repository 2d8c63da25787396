/**
 * The stereo recording of a call (docs/voice.md "Recordings of talking calls"): caller on the left, agent on
 * the right, 16-bit PCM at 8 kHz, on ONE clock driven by the caller's inbound frames.
 * - The caller leg grows by each inbound frame; a gap in the inbound stream longer than `gapToleranceMs`
 *   (a carrier hiccup) is filled with silence so the leg keeps to wall time.
 * - The agent leg is written at pacing time, at the sample where the frame plays: the caller-leg length
 *   plus the time from the last inbound frame to the frame's play time. Contiguous frames are appended
 *   back to back (no jitter gaps); a frame after a pause lands at its time with silence before it.
 * - `clear(atMs)` removes agent audio written for after `atMs` (sent ahead, never played).
 * So a caller frame that arrives at t (covering t-20..t) and agent audio playing from t-20 land on the same
 * samples.
 *
 * Streamed, memory bounded: only a window of recent samples is held. Samples no later event can change any
 * more are handed to the `RecordingOutput` as interleaved stereo frames (the WAV's data chunk, in order) in
 * pieces of about `batchMs`. A sample is final once it lies `holdMs` behind the latest time any event named
 * (caller frames arrive now, agent frames play at most the pacer's ~200 ms ahead, clears happen now): later
 * events land after it, because a caller frame lands at the leg's end or, after a gap, at its wall time, and
 * agent audio and clears land at their time, at most `gapToleranceMs` before it. The window is then about
 * `holdMs` + `batchMs` + the pacer's lead (~1.7 s, ~55 kB for both legs at the defaults), whatever the call's
 * length. Anything that would still land before the window (a frame longer than `holdMs` after a gap) is cut
 * at the window's start and counted in `lateSamples`. Pure: no I/O, no clock but the events' times.
 */
export const RECORDING_SAMPLE_RATE = 8000;
/** Bytes of one stereo frame: two 16-bit samples (caller, agent). */
export const RECORDING_FRAME_BYTES = 4;

/** Where a recorder's finished audio goes while the call lasts (core/calls/run-voice-sink.ts streams it to storage). */
export interface RecordingOutput {
  /**
   * The next piece of the recording: interleaved little-endian 16-bit stereo frames (caller, agent), a whole
   * number of frames, never changed afterwards (the output may keep it). Should not throw: a throw is the
   * output failing, and the recorder hands it nothing more (the call goes on).
   */
  write(chunk: Uint8Array): void;
}

export interface CallRecorderOptions {
  /** Wall time (the session's Timers clock) the recording starts at. */
  startMs: number;
  output: RecordingOutput;
  /** Inbound gaps longer than this are filled with silence. Default 60 ms. */
  gapToleranceMs?: number;
  /** How long samples stay changeable behind the latest event's time. Default 1000 ms. */
  holdMs?: number;
  /** Finished audio is handed on once at least this much is ready. Default 500 ms (16 kB). */
  batchMs?: number;
}

/** Whether this platform stores an Int16Array little-endian (WAV's order). */
const LITTLE_ENDIAN = new Uint8Array(Int16Array.of(1).buffer)[0] === 1;

/** One leg's samples from the window's start (`base`, shared by both legs) on. */
class WindowLeg {
  /** Samples `base` .. `base + buf.length`; beyond `length` they mean silence whatever the buffer holds. */
  buf: Int16Array;
  /** The leg's length in samples from the start of the call. */
  length = 0;

  constructor(private readonly capacity: number) {
    this.buf = new Int16Array(capacity);
  }

  /** Writes `pcm` at sample `at` (>= base), silence-filling from the leg's end; grows the window as needed. */
  write(pcm: Int16Array, at: number, base: number): void {
    const end = at + pcm.length;
    if (end - base > this.buf.length) {
      let size = this.buf.length;
      while (size < end - base) size *= 2;
      const grown = new Int16Array(size);
      grown.set(this.buf);
      this.buf = grown;
    }
    const from = Math.max(this.length, base);
    if (at > from) this.buf.fill(0, from - base, at - base);
    this.buf.set(pcm, at - base);
    this.length = Math.max(this.length, end);
  }

  /** Cuts the leg at `at`, never into samples already handed on (before `base`). Returns the samples it could not cut. */
  truncate(at: number, base: number): number {
    if (at >= this.length) return 0;
    const to = Math.max(at, Math.min(this.length, base));
    const missed = to - at;
    this.length = to;
    return missed;
  }

  /**
   * Drops the first `n` samples of the window (`base` moves `n` on). A window that grew past its first capacity
   * (a stall of the event loop, after which a caller frame lands at wall time, seconds past the window's start)
   * goes back to it once what it holds fits in half of it, so a call does not keep a stall's window to its end.
   */
  shift(n: number, base: number): void {
    const held = Math.max(0, this.length - base);
    if (this.buf.length > this.capacity && held <= this.capacity / 2) {
      const small = new Int16Array(this.capacity);
      small.set(this.buf.subarray(n, n + held));
      this.buf = small;
      return;
    }
    this.buf.copyWithin(0, n);
  }
}

export class CallRecorder {
  private readonly caller: WindowLeg;
  private readonly agent: WindowLeg;
  private readonly output: RecordingOutput;
  /** Wall time of the last inbound frame's arrival (its end on the media clock). */
  private anchorMs: number;
  /** The latest time any event named: samples `holdMs` behind it are final. */
  private latestMs: number;
  private readonly perMs = RECORDING_SAMPLE_RATE / 1000;
  private readonly gapTolerance: number;
  private readonly hold: number;
  private readonly batch: number;
  private agentContinuesAt = -1;
  /** The longest caller frame seen (samples): the next one, after a gap, lands at most this far before its time. */
  private callerFrame = 160;
  /** First sample still held: everything before it was handed to the output. */
  private base = 0;
  private ended = false;
  private outputFailed = false;
  private late = 0;

  constructor(options: CallRecorderOptions) {
    this.anchorMs = options.startMs;
    this.latestMs = options.startMs;
    this.output = options.output;
    this.gapTolerance = (options.gapToleranceMs ?? 60) * this.perMs;
    this.hold = Math.round((options.holdMs ?? 1000) * this.perMs);
    this.batch = Math.max(1, Math.round((options.batchMs ?? 500) * this.perMs));
    const capacity = 2 ** Math.ceil(Math.log2(this.hold + this.batch + 400 * this.perMs));
    this.caller = new WindowLeg(capacity);
    this.agent = new WindowLeg(capacity);
  }

  /** The sample offset wall time `atMs` maps to on the media clock. */
  offsetAt(atMs: number): number {
    return Math.max(0, Math.round(this.caller.length + (atMs - this.anchorMs) * this.perMs));
  }

  /** A caller frame (8 kHz PCM) that arrived at `atMs`. */
  writeCaller(pcm: Int16Array, atMs: number): void {
    if (this.ended) return;
    this.seen(atMs);
    const expectedEnd = this.offsetAt(atMs);
    let at = this.caller.length;
    if (expectedEnd - pcm.length - at > this.gapTolerance) at = expectedEnd - pcm.length; // a gap: keep to wall time
    this.callerFrame = Math.max(this.callerFrame, pcm.length);
    this.place(this.caller, pcm, at);
    this.anchorMs = atMs;
    this.handOn();
  }

  /** An agent frame (8 kHz PCM) that starts playing at `playAtMs`. */
  writeAgent(pcm: Int16Array, playAtMs: number): void {
    if (this.ended) return;
    this.seen(playAtMs);
    let at = this.offsetAt(playAtMs);
    if (this.agentContinuesAt >= 0 && Math.abs(at - this.agentContinuesAt) <= this.gapTolerance) at = this.agentContinuesAt;
    this.place(this.agent, pcm, at);
    this.agentContinuesAt = at + pcm.length;
    this.handOn();
  }

  /** Barge-in at `atMs`: agent audio placed after it never played. */
  clear(atMs: number): void {
    if (this.ended) return;
    this.seen(atMs);
    this.late += this.agent.truncate(this.offsetAt(atMs), this.base);
    this.agentContinuesAt = -1;
    this.handOn();
  }

  /** The call ended: hands on everything still held (the shorter leg padded with silence). Idempotent. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.flush(Math.max(this.caller.length, this.agent.length));
  }

  /** Seconds covered (the longer leg). */
  get durationMs(): number {
    return Math.max(this.caller.length, this.agent.length) / this.perMs;
  }

  /** Bytes handed to the output so far (the WAV's data size once ended). */
  get dataBytes(): number {
    return this.base * RECORDING_FRAME_BYTES;
  }

  /** Bytes of audio the recorder holds in memory (both legs' windows). */
  get heldBytes(): number {
    return this.caller.buf.byteLength + this.agent.buf.byteLength;
  }

  /** Samples that arrived for a part already handed on, and were dropped (0 in every case the design foresees). */
  get lateSamples(): number {
    return this.late;
  }

  private seen(atMs: number): void {
    if (atMs > this.latestMs) this.latestMs = atMs;
  }

  private place(leg: WindowLeg, pcm: Int16Array, at: number): void {
    if (at < this.base) {
      const skip = Math.min(pcm.length, this.base - at);
      this.late += skip;
      pcm = pcm.subarray(skip);
      at = this.base;
    }
    if (pcm.length > 0) leg.write(pcm, at, this.base);
  }

  /** Hands on what no later event can change, once a batch of it is ready. */
  private handOn(): void {
    const horizon = this.offsetAt(this.latestMs) - this.hold;
    // the next caller frame lands at the leg's end, unless the time since it is past the gap tolerance
    const callerBound = horizon - this.caller.length > this.gapTolerance + this.callerFrame ? horizon : this.caller.length;
    const final = Math.min(horizon, callerBound, Math.max(this.caller.length, this.agent.length));
    if (final - this.base >= this.batch) this.flush(final);
  }

  private flush(to: number): void {
    const n = to - this.base;
    if (n <= 0) return;
    if (!this.outputFailed) {
      const chunk = new Uint8Array(n * RECORDING_FRAME_BYTES);
      const callerEnd = Math.min(n, Math.max(0, this.caller.length - this.base));
      const agentEnd = Math.min(n, Math.max(0, this.agent.length - this.base));
      if (LITTLE_ENDIAN) {
        // one 32-bit store per stereo frame (caller in the low half, agent in the high), one pass: about 40 %
        // less time than two passes of 16-bit stores (the rest of the chunk stays zero: silence)
        const out = new Uint32Array(chunk.buffer);
        const c = this.caller.buf;
        const a = this.agent.buf;
        const both = Math.min(callerEnd, agentEnd);
        for (let i = 0; i < both; i++) out[i] = (c[i]! & 0xffff) | (a[i]! << 16);
        for (let i = both; i < callerEnd; i++) out[i] = c[i]! & 0xffff;
        for (let i = both; i < agentEnd; i++) out[i] = a[i]! << 16;
      } else {
        const v = new DataView(chunk.buffer);
        for (let i = 0; i < callerEnd; i++) v.setInt16(4 * i, this.caller.buf[i]!, true);
        for (let i = 0; i < agentEnd; i++) v.setInt16(4 * i + 2, this.agent.buf[i]!, true);
      }
      try {
        this.output.write(chunk);
      } catch {
        this.outputFailed = true;
      }
    }
    this.caller.shift(n, to);
    this.agent.shift(n, to);
    this.base = to;
  }
}
