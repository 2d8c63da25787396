/**
 * Virtual time for the voice session's tests (docs/voice.md): one timeline that is at once a `Clock` (for the
 * conversation engine), `Timers` (for the session, endpointing and the playout pacer) and a `Sleep` (for the
 * scripted model, STT and TTS). Nothing moves until the test calls `advance(ms)`, which runs every timer due
 * in that span in time order, letting promises settle between them, so a whole call runs in milliseconds
 * and every timestamp is exact. (`VirtualClock` in scripted-language-model.ts advances on each sleep instead;
 * it suits engine tests where nothing else waits on time.)
 */
import type { Clock } from '../../core/ports/clock.port.js';
import type { TimerHandle, Timers } from '../../core/ports/timers.port.js';
import type { Sleep } from './scripted-language-model.js';

interface Pending {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

export class VirtualTimeline implements Timers {
  private ms: number;
  private seq = 0;
  private pending: Pending[] = [];
  /** Timers ever armed (tests count them: one shared pacer timer, not one per call). */
  armed = 0;

  constructor(start: Date | string = '2026-01-05T09:00:00.000Z') {
    this.ms = new Date(start).getTime();
  }

  /** The engine's clock on this timeline. */
  readonly clock: Clock = { now: () => new Date(this.ms) };

  now(): number {
    return this.ms;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const entry: Pending = { at: this.ms + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.pending.push(entry);
    this.armed++;
    return { cancel: () => void (entry.cancelled = true) };
  }

  /** Timers armed and not yet fired or cancelled. */
  get pendingCount(): number {
    return this.pending.filter((p) => !p.cancelled).length;
  }

  /** Waits `ms` of virtual time (rejects with an AbortError when `signal` aborts). */
  readonly sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(abortError());
      const onAbort = (): void => {
        handle.cancel();
        reject(abortError());
      };
      const handle = this.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });

  /** Moves time forward by `ms`, firing due timers in order and settling promises after each. */
  async advance(ms: number): Promise<void> {
    const target = this.ms + ms;
    await settle();
    for (;;) {
      this.pending = this.pending.filter((p) => !p.cancelled);
      let next: Pending | undefined;
      for (const p of this.pending) if (p.at <= target && (!next || p.at < next.at || (p.at === next.at && p.seq < next.seq))) next = p;
      if (!next) break;
      this.pending.splice(this.pending.indexOf(next), 1);
      this.ms = Math.max(this.ms, next.at);
      next.fn();
      await settle();
    }
    this.ms = target;
    await settle();
  }

  /** Advances in `stepMs` steps until `done()` holds or `limitMs` passed; returns whether it held. */
  async until(done: () => boolean, limitMs = 60_000, stepMs = 10): Promise<boolean> {
    for (let spent = 0; spent < limitMs; spent += stepMs) {
      if (done()) return true;
      await this.advance(stepMs);
    }
    return done();
  }
}

/** Lets every queued promise continuation run (a macrotask turn drains the microtask queue). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

const abortError = (): Error => new DOMException('The operation was aborted', 'AbortError');
