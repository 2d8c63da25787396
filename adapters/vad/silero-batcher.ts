/**
 * When Silero inference runs (docs/voice.md "Voice activity detection"): every call's detector asks for its
 * next window to be scored, and the batcher scores the windows of all calls that are waiting in one native
 * inference (Silero v5 takes input [B, 288] and state [2, B, 128]). On the 2-core bench machine a lone window
 * cost about 1.1-1.3 ms of CPU inside a busy service (the model's weights are no longer in cache 32 ms
 * later), against about 0.1 ms per window in a batch of 50 (bench/audio.mjs, docs/benchmarks.md section 7).
 *
 * A batch runs `maxWaitMs` after the first window of it arrived (one timer for the whole process, not one per
 * call), or at once when `maxBatch` windows wait, or on `flush()`, or as soon as every call that is in speech
 * has its window waiting: a client that asked for a window within the last `awaitLiveMs` (96 ms; its windows
 * come every 32 ms of audio, 20-40 ms apart in 20 ms frames) is expected to bring its next one, so the batch waits
 * for it; when all such clients are in, waiting longer gains nothing (a lone call is scored at once instead of
 * 16 ms later, two calls as soon as both are in). A client quiet for longer (gated silence, or gone) is not
 * waited for. With many calls in speech, their windows are spread over 32 ms, so the timer still decides and
 * the batches (and their CPU per window) stay as they were. `maxWaitMs: 0` scores each window during
 * the `request` that brings it (no batching: offline replays). Each client (one call's detector) has at most
 * one window waiting, so a call's windows are scored in order with its state carried from one to the next.
 *
 * A failed batch is retried one window at a time, so one call's bad input cannot fail the others; a window
 * that fails alone is reported to its client (`failed`), which scores it without the model.
 *
 * Off the event loop: given an `offload` (the service's inference thread, adapters/vad/silero-thread.ts), a
 * batch is sent there and its results delivered when they come back, so the event loop only copies rows and
 * states. One batch is in flight at a time: windows asked for meanwhile wait, by the same rules, for the next
 * one, which leaves as soon as the answer is in when it was due meanwhile (its timer fired, `maxBatch` windows
 * or every live call waiting; a call whose window is in flight is not waiting: its next window is to come, as
 * after an inline batch), or when a call asked for its next window in its callback (it fell behind: inline, the
 * same flush would score it). A client that cancels while its window is in flight gets no callback; a batch
 * the thread fails on is retried there window by window. When the offload is not available (still starting,
 * failed, closed) or a batch sent there is lost (the thread died), windows are scored inline on this thread
 * with the inline `session`, as without an offload: calls never go deaf. `flush()` then only sends the batch;
 * `settled()` waits for every window asked for to be scored. The offload may come back after it was lost (the
 * thread restarted): each batch goes wherever is available when it leaves, and a call has one window in the
 * batcher at a time, so its windows stay in order across the switches.
 *
 * Urgent windows (a barge-in waits on their verdict: `request(client, true)` or `hurry(client)`) do not wait for
 * others: the batch leaves at once with whatever waits, or, while a batch is in flight, as soon as its answer is
 * in. And they do not depend on a thread that stalls: when the batch in flight is overdue (out for `hedgeMs` and
 * three times the thread's usual round trip, an average of the last batches'), the urgent windows still unscored
 * are scored here, inline, at once, whether they wait behind that batch or are in it (its answer for them is then
 * dropped: their clients have moved on). A full garbage collection's marking on 2 busy cores stretched the
 * thread's batches from ~5 to 30-76 ms (voice bench, Silero with a streaming STT, 50 barge-ins in one second). An
 * inline window costs ~1.2 ms of this thread's CPU: worth it for the few windows a decision waits on when the
 * thread stalls, not when it is steadily slow because every core is busy (100 calls in lockstep: there the event
 * loop is as short of CPU as the thread, and hedging half the urgent windows made the clears later, not sooner),
 * so "overdue" follows the thread's recent round trips.
 *
 * Each client's result is delivered in isolation: a callback that throws (a call's listener bug) is reported to
 * `onCallbackError` with the error, the client's window asked for in that callback (if any) is withdrawn and the
 * client is told (`callbackThrew`: a detector starts afresh, as after `reset()`); the other clients of the batch
 * get theirs, and the batcher goes on. Nothing is rethrown: from the timer, or from the offload's answer, a throw
 * would be an uncaught exception or an unhandled rejection, and end the process with every call in it.
 */
import type { SileroThreadResult } from './silero-thread.js';
import { SILERO_STATE_LENGTH, sileroInputLength, type SileroSession } from './silero-session.js';

/** One call's side of the batcher (a detector). */
export interface SileroBatchClient {
  readonly sampleRate: 8000 | 16000;
  /** The row to score: [context | window] as floats in [-1, 1) (`sileroInputLength` values). */
  readonly input: Float32Array;
  /** The call's recurrent state (`SILERO_STATE_LENGTH` values), replaced in place once the window is scored. */
  readonly state: Float32Array;
  /** The window's speech probability; the state has been updated. May request the next window. */
  scored(probability: number): void;
  /** The runtime failed on this window (the state is untouched). May request the next window. */
  failed(error: unknown): void;
  /**
   * `scored` or `failed` threw `error` (already reported to the batcher's `onCallbackError`); a window it asked
   * for in that callback was withdrawn. The client's state is suspect: it should start afresh. Must not throw
   * (if it does, that is reported too).
   */
  callbackThrew?(error: unknown): void;
}

/** Where batches run off the event loop: `SileroInferenceThread` (adapters/vad/silero-thread.ts), or a test's fake. */
export interface SileroBatchOffload {
  /** Whether a batch sent now would be scored there. */
  readonly available: boolean;
  /**
   * Scores `count` rows of `input` with the states in `state` (per stream, as `SileroSession.run`), retrying a
   * failed batch window by window. Takes the arrays (their buffers may be transferred: do not touch them until
   * the answer); the answer brings them back. Rejects when the batch is lost.
   */
  run(sampleRate: 8000 | 16000, count: number, input: Float32Array, state: Float32Array): Promise<SileroThreadResult>;
}

export interface SileroBatchSettings {
  /** How long the first waiting window waits for others before the batch runs (ms; 0: score at once). */
  maxWaitMs: number;
  /** A batch runs as soon as this many windows wait. */
  maxBatch: number;
  /**
   * A client that asked for a window within this long (ms) is waited for; when every such client has a window
   * waiting, the batch runs at once. 0: never early (the batch waits `maxWaitMs`).
   */
  awaitLiveMs: number;
  /**
   * A batch in flight this long (ms), and three times the thread's recent round trip, is overdue: its urgent
   * windows, and those waiting behind it, are scored inline (see the file comment). Above a batch's usual round
   * trip on the thread (~1-7 ms at 50 calls), so it acts only when the thread stalls.
   */
  hedgeMs: number;
}

/** 16 ms: half a window. A window's score (and so a speech_stop) comes at most this much later. */
/**
 * awaitLiveMs 96 (three windows): windows come 20-40 ms apart, later under a loaded event loop; with 48 ms, calls
 * whose frames a busy loop delivered late were taken for quiet and the batches at 20 calls shrank by ~8 % (4.4
 * windows a batch against 4.76 with the fixed wait); with 96 they stayed as large (4.75).
 */
export const SILERO_BATCH_DEFAULTS: Readonly<SileroBatchSettings> = Object.freeze({ maxWaitMs: 16, maxBatch: 64, awaitLiveMs: 96, hedgeMs: 10 });

type Rate = 8000 | 16000;

export class SileroBatcher {
  private readonly waiting: Record<Rate, Ticket[]> = { 8000: [], 16000: [] };
  /** Clients waiting or being scored, with their ticket; `cancel` removes them, and a removed ticket's result is dropped. */
  private readonly active = new Map<SileroBatchClient, Ticket>();
  /** When each client last asked for a window (`now()`), while it counts as live (awaitLiveMs). */
  private readonly lastAsked = new Map<SileroBatchClient, number>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Urgent tickets not yet scored (their clients may have cancelled since), and the timer that hedges them. */
  private urgent: Ticket[] = [];
  private hedgeTimer: ReturnType<typeof setTimeout> | null = null;
  /** When the batch in flight was sent (`now()`), and the offload's recent round trip (ms; moving average). */
  private sentAt = 0;
  private roundTripMs: number | undefined;
  private flushing = false;
  /** A batch is on the offload; another was due meanwhile (it leaves as soon as the answer is in). */
  private inFlight = false;
  private due = false;
  private readonly idleWaiters: Array<() => void> = [];
  private input: Float32Array = new Float32Array(0);
  private state: Float32Array = new Float32Array(0);
  readonly settings: SileroBatchSettings;
  /**
   * Batches run, windows scored, and native runs that failed (whole batches and single retries); of the
   * batches, those scored on the offload, and the batches lost there (then scored inline); urgent windows asked
   * for, and those of them scored inline because the offload was late (`hedged`).
   */
  readonly stats = { batches: 0, windows: 0, failedRuns: 0, offloaded: 0, lost: 0, urgent: 0, hedged: 0 };

  constructor(
    /** Scores inline: without an offload, while it is not available, and for batches lost there. */
    readonly session: SileroSession,
    settings: Partial<SileroBatchSettings> = {},
    /** A monotonic clock in ms (tests give a fake). */
    private readonly now: () => number = () => performance.now(),
    /** Where batches run off this thread when it is available (adapters/vad/silero-thread.ts). */
    readonly offload: SileroBatchOffload | null = null,
    /** Told of each error a client's callback threw (the service logs it); the default prints a process warning. */
    private readonly onCallbackError: (error: unknown) => void = warnCallbackError,
  ) {
    this.settings = { ...SILERO_BATCH_DEFAULTS, ...settings };
    if (!(this.settings.maxWaitMs >= 0) || !(this.settings.maxBatch >= 1) || !(this.settings.hedgeMs >= 0)) throw new RangeError('Silero batch: maxWaitMs and hedgeMs must be ≥ 0 and maxBatch ≥ 1');
  }

  /** Windows waiting to be scored. */
  get waitingWindows(): number {
    return this.waiting[8000].length + this.waiting[16000].length;
  }

  /**
   * Queues `client`'s current window; `urgent`: a decision waits on its verdict (see the file comment). A client
   * must not ask again before its `scored` / `failed`.
   */
  request(client: SileroBatchClient, urgent = false): void {
    if (this.active.has(client)) throw new Error('a Silero client asked for a second window before the first was scored');
    const ticket: Ticket = { client };
    this.active.set(client, ticket);
    this.waiting[client.sampleRate].push(ticket);
    if (this.settings.awaitLiveMs > 0) this.lastAsked.set(client, this.now());
    if (urgent) this.markUrgent(ticket);
    if (this.flushing) return; // the running flush takes it next (or, in an answer's callbacks, the next batch at once)
    if (urgent || this.settings.maxWaitMs === 0 || this.waiting[client.sampleRate].length >= this.settings.maxBatch || this.everyLiveClientWaits()) this.flush();
    else if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), this.settings.maxWaitMs);
      this.timer.unref?.();
    }
  }

  /**
   * Whether every client that asked within `awaitLiveMs` has a window waiting now (clients quiet for longer are
   * forgotten here). False when early batches are off.
   */
  private everyLiveClientWaits(): boolean {
    if (this.settings.awaitLiveMs <= 0) return false;
    const now = this.now();
    for (const [client, at] of this.lastAsked) {
      if (now - at > this.settings.awaitLiveMs) this.lastAsked.delete(client);
      else {
        // a window on the offload is not waiting: its client's next one is still to come, as after an inline batch
        const ticket = this.active.get(client);
        if (!ticket || ticket.sent) return false;
      }
    }
    return true;
  }

  /**
   * `client`'s window (waiting or in flight) became urgent: as if asked for with `urgent` (a window waiting leaves
   * now; the hedge covers it). Nothing when it has none, or it is urgent already.
   */
  hurry(client: SileroBatchClient): void {
    const ticket = this.active.get(client);
    if (!ticket || ticket.urgent) return;
    this.markUrgent(ticket);
    if (!this.flushing && !ticket.sent) this.flush();
  }

  private markUrgent(ticket: Ticket): void {
    ticket.urgent = true;
    this.stats.urgent++;
    // inline, the window is scored during this flush: nothing to hedge
    if (!this.offload) return;
    this.urgent.push(ticket);
    this.armHedge();
  }

  /** How long a batch may be in flight before it is overdue (ms): `hedgeMs`, or 3x the recent round trip. */
  private get overdueMs(): number {
    return Math.max(this.settings.hedgeMs, 3 * (this.roundTripMs ?? 0));
  }

  /** The hedge timer: while a batch is in flight and an urgent window is unscored, for when that batch is overdue. */
  private armHedge(): void {
    if (this.hedgeTimer !== null || !this.inFlight) return;
    this.urgent = this.urgent.filter((t) => this.active.get(t.client) === t);
    if (this.urgent.length === 0) return;
    this.hedgeTimer = setTimeout(() => {
      this.hedgeTimer = null;
      this.hedge();
    }, Math.max(0, this.sentAt + this.overdueMs - this.now()));
    this.hedgeTimer.unref?.();
  }

  /**
   * When the batch in flight is overdue: scores inline every urgent ticket still unscored (withdrawn from the
   * waiting list, or left in that batch, whose answer for it is then dropped). Else (another batch left since the
   * timer was set) waits for that one.
   */
  private hedge(): void {
    if (!this.inFlight) return; // the answer came (the next batch, if any, armed its own)
    if (this.now() - this.sentAt < this.overdueMs) return this.armHedge();
    const due = this.urgent.filter((t) => this.active.get(t.client) === t);
    this.urgent = [];
    for (const rate of [8000, 16000] as const) {
      const batch = due.filter((t) => t.client.sampleRate === rate);
      if (batch.length === 0) continue;
      for (const t of batch) this.unqueue(t);
      this.stats.hedged += batch.length;
      this.deliver(() => this.score(rate, batch));
    }
  }

  /** Whether a batch is on the offload now. */
  get batchInFlight(): boolean {
    return this.inFlight;
  }

  /**
   * Resolves once no window waits and no batch is in flight, sending what waits now (offline replays and tests
   * of the offloaded path; inline, `flush()` alone does it).
   */
  async settled(): Promise<void> {
    while (this.inFlight || this.waitingWindows > 0) {
      if (!this.inFlight) this.flush();
      if (this.inFlight) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  /** Withdraws `client`'s window (waiting or being scored): no callback follows; it is no longer waited for. */
  cancel(client: SileroBatchClient): void {
    this.lastAsked.delete(client);
    const ticket = this.active.get(client);
    if (!ticket) return;
    this.active.delete(client);
    if (ticket.urgent) this.urgent = this.urgent.filter((t) => t !== ticket);
    this.unqueue(ticket);
  }

  /** Takes `ticket` off its waiting list, if it is there (not sent). */
  private unqueue(ticket: Ticket): void {
    const list = this.waiting[ticket.client.sampleRate];
    const i = list.indexOf(ticket);
    if (i >= 0) list.splice(i, 1);
  }

  /**
   * Scores every waiting window now, including windows that clients ask for while this runs (a call that fell
   * behind). A client callback that throws is reported and does not stop the others (see the file comment); never
   * throws. With an available offload it sends the next batch instead (or, while one is in flight, marks the next as
   * due) and returns; the results come later.
   */
  flush(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.flushing) return;
    if (this.offload?.available) {
      if (this.inFlight) this.due = true;
      else this.send();
      return;
    }
    this.flushing = true;
    try {
      for (let next = this.nextBatch(); next; next = this.nextBatch()) this.score(next.rate, next.batch);
    } finally {
      this.flushing = false;
    }
    this.wakeIdle();
  }

  /** The next batch (8 kHz windows first), or null when none waits. */
  private nextBatch(): { rate: Rate; batch: Ticket[] } | null {
    const rate: Rate | null = this.waiting[8000].length > 0 ? 8000 : this.waiting[16000].length > 0 ? 16000 : null;
    return rate === null ? null : { rate, batch: this.waiting[rate].splice(0, this.settings.maxBatch) };
  }

  /** Copies the batch's rows and states into `input` / `state` (grown when too small; a transfer empties them). */
  private gather(rate: Rate, batch: Ticket[]): void {
    const length = sileroInputLength(rate);
    const n = batch.length;
    if (this.input.length < n * length) this.input = new Float32Array(Math.max(n * length, this.input.length));
    if (this.state.length < n * SILERO_STATE_LENGTH) this.state = new Float32Array(Math.max(n * SILERO_STATE_LENGTH, this.state.length));
    for (let b = 0; b < n; b++) {
      this.input.set(batch[b].client.input.subarray(0, length), b * length);
      this.state.set(batch[b].client.state, b * SILERO_STATE_LENGTH);
    }
  }

  /** Sends the next batch to the offload; its clients are called back when the answer comes. */
  private send(): void {
    const next = this.nextBatch();
    if (!next) return this.wakeIdle();
    const { rate, batch } = next;
    this.gather(rate, batch);
    for (const ticket of batch) ticket.sent = true;
    this.inFlight = true;
    this.due = false;
    this.sentAt = this.now();
    // the buffers travel with the batch (and come back with its answer)
    const input = this.input;
    const state = this.state;
    this.input = new Float32Array(0);
    this.state = new Float32Array(0);
    this.offload!.run(rate, batch.length, input, state).then(
      (result) => this.landed(rate, batch, result),
      () => this.lost(rate, batch),
    );
    this.armHedge(); // for urgent windows in this batch or waiting behind it
  }

  /** A batch's answer from the offload: each client still active is called back, then the next batch goes if due. */
  private landed(rate: Rate, batch: Ticket[], r: SileroThreadResult): void {
    this.inFlight = false;
    const roundTrip = this.now() - this.sentAt;
    this.roundTripMs = this.roundTripMs === undefined ? roundTrip : this.roundTripMs + 0.2 * (roundTrip - this.roundTripMs);
    if (r.input.length > this.input.length) this.input = r.input;
    if (r.state.length > this.state.length) this.state = r.state;
    this.stats.batches += r.runs;
    this.stats.windows += batch.length - (r.failed ? r.failed.reduce((sum, f) => sum + f, 0) : 0);
    this.stats.failedRuns += r.failedRuns;
    this.stats.offloaded++;
    this.deliver(() => {
      for (let b = 0; b < batch.length; b++) {
        const ticket = batch[b];
        if (!this.settle(ticket)) continue; // cancelled while the batch was away
        try {
          if (r.failed?.[b]) ticket.client.failed(new Error('Silero inference failed on this window'));
          else {
            ticket.client.state.set(r.state.subarray(b * SILERO_STATE_LENGTH, (b + 1) * SILERO_STATE_LENGTH));
            ticket.client.scored(r.probabilities[b]);
          }
        } catch (e) {
          this.callbackThrew(ticket.client, e);
        }
      }
    });
  }

  /**
   * Calls back a batch's clients (`callBack`, which contains their errors), then decides when the next batch
   * goes. Windows asked for in the callbacks wait for that decision; when there are any, they were already cut:
   * their calls fell behind (their frames came in a burst). Inline they are scored in the same flush; here the next
   * batch leaves at once for them, instead of one window of such a call per batch, each waiting for the timer.
   */
  private deliver(callBack: () => void): void {
    const waitingBefore = this.waitingWindows;
    this.flushing = true;
    try {
      callBack();
    } finally {
      this.flushing = false;
    }
    if (this.waitingWindows > waitingBefore) this.due = true;
    this.afterBatch();
  }

  /**
   * `client`'s callback threw `error`: reported, its window asked for in the callback (if any) withdrawn, and the
   * client told so it starts afresh. Never throws (the reporter's and the client's own errors are contained too).
   */
  private callbackThrew(client: SileroBatchClient, error: unknown): void {
    this.cancel(client);
    report(this.onCallbackError, error);
    if (client.callbackThrew) {
      try {
        client.callbackThrew(error);
      } catch (e) {
        this.cancel(client);
        report(this.onCallbackError, e);
      }
    }
  }

  /** A batch lost on the offload (its thread stopped): scored here, inline, then the rest as usual. */
  private lost(rate: Rate, batch: Ticket[]): void {
    this.inFlight = false;
    this.stats.lost++;
    const live = batch.filter((t) => this.active.get(t.client) === t);
    this.deliver(() => {
      if (live.length > 0) this.score(rate, live);
    });
  }

  /** After a batch came back: the next one goes now when it is due, else it waits for its timer. */
  private afterBatch(): void {
    // `settled()` looks again (it sends what waits rather than wait for the timer)
    for (const resolve of this.idleWaiters.splice(0)) resolve();
    if (this.waitingWindows === 0) return;
    const full = this.waiting[8000].length >= this.settings.maxBatch || this.waiting[16000].length >= this.settings.maxBatch;
    if (this.due || this.settings.maxWaitMs === 0 || full || this.urgentWaits() || this.everyLiveClientWaits()) this.flush();
    else if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), this.settings.maxWaitMs);
      this.timer.unref?.();
    }
  }

  /** Whether an urgent window waits (not sent): it leaves with the next batch at once. */
  private urgentWaits(): boolean {
    return this.urgent.some((t) => !t.sent && this.active.get(t.client) === t);
  }

  private wakeIdle(): void {
    if (this.inFlight || this.waitingWindows > 0) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Runs one batch inline and calls back each client still active (their errors contained). */
  private score(rate: Rate, batch: Ticket[]): void {
    const length = sileroInputLength(rate);
    const n = batch.length;
    this.gather(rate, batch);
    let probabilities: Float32Array | null = null;
    try {
      probabilities = this.session.run(rate, n, this.input, this.state);
      this.stats.batches++;
      this.stats.windows += n;
    } catch {
      this.stats.failedRuns++;
    }
    for (let b = 0; b < n; b++) {
      const ticket = batch[b];
      const client = ticket.client;
      let p: number;
      if (probabilities) p = probabilities[b];
      else {
        // the batch failed: this window alone (its row and state are still in place at b)
        try {
          p = this.session.run(rate, 1, this.input.subarray(b * length, (b + 1) * length), this.state.subarray(b * SILERO_STATE_LENGTH, (b + 1) * SILERO_STATE_LENGTH))[0];
          this.stats.batches++;
          this.stats.windows++;
        } catch (error) {
          this.stats.failedRuns++;
          if (!this.settle(ticket)) continue;
          try {
            client.failed(error);
          } catch (e) {
            this.callbackThrew(client, e);
          }
          continue;
        }
      }
      if (!this.settle(ticket)) continue; // cancelled while the batch ran (its call closed or reset)
      client.state.set(this.state.subarray(b * SILERO_STATE_LENGTH, (b + 1) * SILERO_STATE_LENGTH));
      try {
        client.scored(p);
      } catch (e) {
        this.callbackThrew(client, e);
      }
    }
  }

  /** True (and the client no longer active) when `ticket` is still the client's current request. */
  private settle(ticket: Ticket): boolean {
    if (this.active.get(ticket.client) !== ticket) return false;
    this.active.delete(ticket.client);
    return true;
  }
}

/** The default `onCallbackError`: a process warning (offline replays and tests; the service logs instead). */
function warnCallbackError(error: unknown): void {
  process.emitWarning(`a Silero VAD client's callback threw (its detector starts afresh): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
}

/** Calls `reporter` with `error`; a reporter that throws is ignored (it must not undo the containment). */
function report(reporter: (error: unknown) => void, error: unknown): void {
  try {
    reporter(error);
  } catch {
    // nothing left to tell
  }
}

interface Ticket {
  readonly client: SileroBatchClient;
  /** On the offload (the batch it is in was sent). */
  sent?: boolean;
  /** A decision waits on its verdict (see the file comment). */
  urgent?: boolean;
}
