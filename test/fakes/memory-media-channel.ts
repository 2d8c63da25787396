/**
 * An in-memory `MediaChannel` for the voice session's tests (docs/voice.md "Testing"): it records every frame,
 * mark, clear and hang-up the session sends (with the virtual time it happened), plays marks like a carrier
 * (each after the audio sent before it has played on its own playout clock; a clear reports pending marks
 * as not played), and lets the test be the caller: `startCaller()` streams a 20 ms frame every 20 ms from
 * what `speak`/`pause` queued (silence otherwise), `dtmf(digit)`, `hangUpFromCaller()`.
 */
import type { MediaChannel } from '../../core/ports/media-channel.port.js';
import type { TimerHandle, Timers } from '../../core/ports/timers.port.js';
import { MULAW_8K, bytesPerMs, type AudioFormat } from '../../core/voice/audio-format.js';
import { silenceAudio, speechAudio } from './scripted-speech.js';

export interface SentFrame {
  atMs: number;
  audio: Uint8Array;
  /** When the channel's playout clock plays it. */
  playAtMs: number;
}

export class MemoryMediaChannel implements MediaChannel {
  readonly inFormat: AudioFormat;
  readonly outFormat: AudioFormat;
  readonly sent: SentFrame[] = [];
  readonly marksSent: Array<{ name: string; atMs: number }> = [];
  readonly marksReported: Array<{ name: string; played: boolean; atMs: number }> = [];
  readonly clears: number[] = [];
  readonly hangUps: Array<{ reason: string; atMs: number }> = [];
  /** Frames the caller sent, with their time. */
  readonly inbound: Array<{ atMs: number; audio: Uint8Array }> = [];
  /** The most audio ever buffered beyond the playout clock (ms), sampled at each send. */
  maxBufferedMs = 0;
  closed: string | null = null;

  private playoutEndMs = 0;
  private pendingMarks: Array<{ name: string; timer: TimerHandle }> = [];
  private callerQueue: Uint8Array[] = [];
  private callerTimer: TimerHandle | null = null;
  private readonly audioListeners: Array<(audio: Uint8Array) => void> = [];
  private readonly dtmfListeners: Array<(digit: string) => void> = [];
  private readonly markListeners: Array<(name: string, played: boolean) => void> = [];
  private readonly closeListeners: Array<(reason: string) => void> = [];

  constructor(
    private readonly timers: Timers,
    formats: { inFormat?: AudioFormat; outFormat?: AudioFormat } = {},
  ) {
    this.inFormat = formats.inFormat ?? MULAW_8K;
    this.outFormat = formats.outFormat ?? MULAW_8K;
  }

  // --- MediaChannel -------------------------------------------------------------------------------------

  sendAudio(audio: Uint8Array): void {
    if (this.closed !== null || audio.length === 0) return;
    const now = this.timers.now();
    const playAtMs = Math.max(now, this.playoutEndMs);
    this.playoutEndMs = playAtMs + audio.length / bytesPerMs(this.outFormat);
    this.sent.push({ atMs: now, audio: audio.slice(), playAtMs });
    this.maxBufferedMs = Math.max(this.maxBufferedMs, this.playoutEndMs - now);
  }

  sendMark(name: string): void {
    const now = this.timers.now();
    this.marksSent.push({ name, atMs: now });
    if (this.closed !== null) {
      queueMicrotask(() => this.report(name, false));
      return;
    }
    const timer = this.timers.setTimeout(() => {
      this.pendingMarks = this.pendingMarks.filter((m) => m.name !== name);
      this.report(name, true);
    }, Math.max(0, this.playoutEndMs - now));
    this.pendingMarks.push({ name, timer });
  }

  clear(): void {
    if (this.closed !== null) return;
    const now = this.timers.now();
    this.clears.push(now);
    this.playoutEndMs = now;
    const pending = this.pendingMarks;
    this.pendingMarks = [];
    for (const m of pending) {
      m.timer.cancel();
      this.report(m.name, false);
    }
  }

  async hangUp(reason: string): Promise<void> {
    if (this.closed !== null) return;
    this.hangUps.push({ reason, atMs: this.timers.now() });
    this.end(reason);
  }

  onAudio(listener: (audio: Uint8Array) => void): void {
    this.audioListeners.push(listener);
  }
  onDtmf(listener: (digit: string) => void): void {
    this.dtmfListeners.push(listener);
  }
  onMark(listener: (name: string, played: boolean) => void): void {
    this.markListeners.push(listener);
  }
  onClose(listener: (reason: string) => void): void {
    this.closeListeners.push(listener);
  }

  // --- The caller ---------------------------------------------------------------------------------------

  /** Starts streaming 20 ms caller frames every 20 ms (silence unless speech is queued). */
  startCaller(): void {
    if (this.callerTimer) return;
    const tick = (): void => {
      this.callerTimer = null;
      if (this.closed !== null) return;
      this.pushFrame(this.callerQueue.shift() ?? silenceAudio(this.inFormat, 20));
      this.callerTimer = this.timers.setTimeout(tick, 20);
    };
    this.callerTimer = this.timers.setTimeout(tick, 20);
  }

  /** Queues `ms` of speech-level audio for the caller stream. */
  speak(ms: number): this {
    const bytes = speechAudio(this.inFormat, ms, 300);
    const frame = bytesPerMs(this.inFormat) * 20;
    for (let i = 0; i < bytes.length; i += frame) this.callerQueue.push(bytes.slice(i, i + frame));
    return this;
  }

  /** Queues recorded caller audio (in the channel's inbound wire format) for the caller stream, in 20 ms frames. */
  play(bytes: Uint8Array): this {
    const frame = bytesPerMs(this.inFormat) * 20;
    for (let i = 0; i < bytes.length; i += frame) this.callerQueue.push(bytes.slice(i, i + frame));
    return this;
  }

  /** Queues `ms` of silence for the caller stream. */
  pause(ms: number): this {
    for (let i = 0; i < ms; i += 20) this.callerQueue.push(silenceAudio(this.inFormat, 20));
    return this;
  }

  /** Hands one caller frame to the session now. */
  pushFrame(audio: Uint8Array): void {
    if (this.closed !== null) return;
    this.inbound.push({ atMs: this.timers.now(), audio });
    for (const l of this.audioListeners) l(audio);
  }

  dtmf(digit: string): void {
    for (const l of this.dtmfListeners) l(digit);
  }

  /** The caller hangs up (the stream closes from the far side). */
  hangUpFromCaller(reason = 'caller hung up'): void {
    this.end(reason);
  }

  /** Milliseconds of sent audio not yet played by the playout clock. */
  bufferedMs(): number {
    return Math.max(0, this.playoutEndMs - this.timers.now());
  }

  /** Frames sent after a time (ms since the timeline's origin given). */
  sentAfter(atMs: number): SentFrame[] {
    return this.sent.filter((f) => f.atMs >= atMs);
  }

  private report(name: string, played: boolean): void {
    this.marksReported.push({ name, played, atMs: this.timers.now() });
    for (const l of this.markListeners) l(name, played);
  }

  private end(reason: string): void {
    if (this.closed !== null) return;
    this.closed = reason;
    this.callerTimer?.cancel();
    this.callerTimer = null;
    const pending = this.pendingMarks;
    this.pendingMarks = [];
    for (const m of pending) {
      m.timer.cancel();
      this.report(m.name, false);
    }
    for (const l of this.closeListeners) l(reason);
  }
}
