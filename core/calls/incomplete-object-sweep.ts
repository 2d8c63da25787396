/**
 * Reclaims what a crash left of recordings being written (docs/voice.md "Recordings of talking calls"): a
 * call's audio streams into the object store while the call lasts, so a process that dies mid-call leaves an
 * unfinished write (a temporary file, an incomplete upload) or a `.part` object. Every process runs this sweep
 * at start and then every `everyMs`; it removes such leftovers last written more than `olderThanMs` ago
 * (`ObjectStore.sweepIncomplete`). A live recording writes every half second, so it is never taken. Failures are
 * logged and retried at the next round; the sweep never throws.
 */
import type { Clock } from '../ports/clock.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { ObjectStore } from '../ports/object-store.port.js';
import type { TimerHandle, Timers } from '../ports/timers.port.js';

export interface IncompleteObjectSweepOptions {
  /** Default one hour. */
  everyMs?: number;
  /** Default one hour. */
  olderThanMs?: number;
}

export class IncompleteObjectSweep {
  private timer: TimerHandle | null = null;
  private stopped = false;
  private readonly everyMs: number;
  private readonly olderThanMs: number;

  constructor(
    private readonly deps: { store: Pick<ObjectStore, 'sweepIncomplete'>; clock: Clock; timers: Timers; log: Logger },
    options: IncompleteObjectSweepOptions = {},
  ) {
    this.everyMs = options.everyMs ?? 3_600_000;
    this.olderThanMs = options.olderThanMs ?? 3_600_000;
  }

  /** One round: answers how many leftovers were removed (0 after a failure, which is logged). */
  async runOnce(): Promise<number> {
    try {
      const removed = await this.deps.store.sweepIncomplete(new Date(this.deps.clock.now().getTime() - this.olderThanMs));
      if (removed > 0) this.deps.log.info({ removed }, 'removed what unfinished writes (a crash mid-call) left in the object store');
      return removed;
    } catch (e) {
      this.deps.log.warn({ err: (e as Error)?.message }, 'sweeping unfinished writes from the object store failed');
      return 0;
    }
  }

  /** Runs a round now, then every `everyMs` until `stop`. */
  start(): void {
    if (this.timer || this.stopped) return;
    const round = (): void => {
      void this.runOnce().then(() => {
        if (!this.stopped) this.timer = this.deps.timers.setTimeout(round, this.everyMs);
      });
    };
    this.timer = this.deps.timers.setTimeout(round, 0);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
  }
}
