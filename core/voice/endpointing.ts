/**
 * When the caller's turn is over (docs/voice.md "Turn-taking, barge-in and endings"). The VAD says when speech
 * stops; the session then asks the STT to finalize, and the turn is committed on the FIRST of:
 * - a final transcript that arrived after the stop, once `minDelayMs` has passed since the stop (text that
 *   was already final before the stop commits at stop + `minDelayMs`);
 * - the provider's own end of utterance (`speechFinal` on a final, or `utterance_end`) after the stop;
 * - `maxDelayMs` after the stop, with whatever text there is (the last interim when no final came; '' when
 *   nothing was recognized: the session treats that as noise).
 * Speech that starts again before the commit continues the same turn. Defaults follow LiveKit's
 * (min 0.5 s) with a longer ceiling for slow telephone STT (max 6 s). Pure; timers from the `Timers` port.
 */
import type { TimerHandle, Timers } from '../ports/timers.port.js';

export const ENDPOINTING_DEFAULTS = Object.freeze({ minDelayMs: 500, maxDelayMs: 6000 });

export interface EndpointingOptions {
  minDelayMs?: number;
  maxDelayMs?: number;
}

/** A committed caller turn; times on the session's `Timers` clock. */
export interface CommittedUtterance {
  text: string;
  /** Where the speech began and ended (VAD onset and end of speech). */
  speechStartMs: number;
  speechEndMs: number;
  /** When the VAD reported the stop (end of speech + its hangover). */
  stoppedAtMs: number;
  /** When the final transcript arrived (undefined: none came). */
  finalAtMs?: number;
  /** What committed it. */
  by: 'final' | 'speech_final' | 'max_delay';
}

type Phase = 'idle' | 'speaking' | 'stopped';

export class Endpointer {
  private phase: Phase = 'idle';
  private finals: string[] = [];
  private interim = '';
  private finalAfterStop = false;
  private finalAtMs: number | undefined;
  private speechStartMs = 0;
  private speechEndMs = 0;
  private stoppedAtMs = 0;
  private minTimer: TimerHandle | null = null;
  private maxTimer: TimerHandle | null = null;
  private minElapsed = false;
  private readonly minDelay: number;
  private readonly maxDelay: number;

  constructor(
    private readonly timers: Timers,
    private readonly onCommit: (utterance: CommittedUtterance) => void,
    options: EndpointingOptions = {},
  ) {
    this.minDelay = options.minDelayMs ?? ENDPOINTING_DEFAULTS.minDelayMs;
    this.maxDelay = Math.max(this.minDelay, options.maxDelayMs ?? ENDPOINTING_DEFAULTS.maxDelayMs);
  }

  /** Whether an utterance is in progress or waiting to be committed. */
  get active(): boolean {
    return this.phase !== 'idle';
  }

  /** VAD: speech began at `onsetMs`. Continues an utterance that was not yet committed. */
  speechStarted(onsetMs: number): void {
    this.cancelTimers();
    if (this.phase === 'idle') {
      this.finals = [];
      this.interim = '';
      this.finalAtMs = undefined;
      this.speechStartMs = onsetMs;
    }
    this.phase = 'speaking';
    this.finalAfterStop = false;
  }

  /** VAD: speech stopped (ended at `endMs`, reported now). */
  speechStopped(endMs: number): void {
    if (this.phase !== 'speaking') return;
    this.phase = 'stopped';
    this.speechEndMs = endMs;
    this.stoppedAtMs = this.timers.now();
    this.minElapsed = false;
    this.minTimer = this.timers.setTimeout(() => {
      this.minTimer = null;
      this.minElapsed = true;
      if (this.finalAfterStop || this.finals.length > 0) this.commit('final');
    }, this.minDelay);
    this.maxTimer = this.timers.setTimeout(() => {
      this.maxTimer = null;
      this.commit('max_delay');
    }, this.maxDelay);
  }

  /** STT: a hypothesis (kept as the fallback text). Ignored while idle. */
  interimTranscript(text: string): void {
    if (this.phase !== 'idle') this.interim = text;
  }

  /** STT: settled text. Ignored while idle (speech that was not a turn). */
  finalTranscript(text: string, speechFinal: boolean): void {
    if (this.phase === 'idle') return;
    if (text.trim() !== '') {
      this.finals.push(text.trim());
      this.finalAtMs = this.timers.now();
    }
    if (this.phase !== 'stopped') return;
    this.finalAfterStop = true;
    if (speechFinal && this.finals.length > 0) this.commit('speech_final');
    else if (this.minElapsed && this.finals.length > 0) this.commit('final');
  }

  /** STT: the provider's end of utterance. */
  utteranceEnd(): void {
    if (this.phase === 'stopped' && this.finals.length > 0) this.commit('speech_final');
  }

  /** Forgets the utterance in progress (the call ended, or its speech is being ignored). */
  reset(): void {
    this.cancelTimers();
    this.phase = 'idle';
    this.finals = [];
    this.interim = '';
  }

  private commit(by: CommittedUtterance['by']): void {
    if (this.phase !== 'stopped') return;
    const text = this.finals.length > 0 ? this.finals.join(' ') : this.interim.trim();
    const utterance: CommittedUtterance = {
      text,
      speechStartMs: this.speechStartMs,
      speechEndMs: this.speechEndMs,
      stoppedAtMs: this.stoppedAtMs,
      ...(this.finalAtMs === undefined ? {} : { finalAtMs: this.finalAtMs }),
      by,
    };
    this.reset();
    this.onCommit(utterance);
  }

  private cancelTimers(): void {
    this.minTimer?.cancel();
    this.maxTimer?.cancel();
    this.minTimer = null;
    this.maxTimer = null;
  }
}
