/**
 * A monotonic millisecond clock and one-shot timers (docs/voice.md "Turn-taking, barge-in and endings"). The
 * voice session, its endpointing and the shared playout pacer take it as a port so turn tests run on a
 * virtual timeline (test/fakes/virtual-timeline.ts) in milliseconds of real time. The shape matches the media
 * channel's `PlayoutTimers`, so one object serves both.
 */
export interface TimerHandle {
  /** Stops the timer; idempotent, harmless after it fired. */
  cancel(): void;
}

export interface Timers {
  /** Milliseconds on a monotonic clock (only differences mean anything). Never throws. */
  now(): number;
  /** Runs `fn` once, `ms` from now (0: on the next turn of the event loop). Never throws. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
}

/** Real time: `performance.now()` and the event loop's timers (unref'd: a pending timer never keeps a process up). */
export const systemTimers: Timers = {
  now: () => performance.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, Math.max(0, ms));
    handle.unref?.();
    return { cancel: () => clearTimeout(handle) };
  },
};
