/**
 * How a carrier's answering-machine verdict reaches the live voice session of its call (docs/voicemail.md "The
 * carrier's detection and ours"): the status webhook (Twilio `AsyncAmdStatusCallback`, Telnyx `call.machine.*`)
 * and the media stream are two separate requests, so the one status path hands the verdict (`NormalizedCallEvent.amd`)
 * to this router, and the session of that run (registered by `StartCallConversation` while AMD is undecided)
 * passes it to its `VoicemailGate.carrier`.
 *
 * In process only: in a deployment of several processes the status callback may land on another process than
 * the media stream; the verdict is then not delivered and the session's own detector decides, as it does on a
 * carrier without AMD. A verdict that arrives before its session registered (the webhook raced the media stream)
 * is kept for `pendingMs` and handed over on registration; at most `maxPending` runs are kept (oldest dropped).
 * Never throws.
 */
import type { AmdResult } from './amd-result.js';

export interface CarrierAmdRouterOptions {
  /** How long a verdict waits for its session (ms); default 15,000. */
  pendingMs?: number;
  /** Runs whose verdicts wait at most; default 1,000. */
  maxPending?: number;
  /** The clock (ms); default `Date.now`. */
  now?: () => number;
}

export class CarrierAmdRouter {
  private readonly sessions = new Map<number, (result: AmdResult) => void>();
  private readonly pending = new Map<number, { at: number; results: AmdResult[] }>();
  private readonly pendingMs: number;
  private readonly maxPending: number;
  private readonly now: () => number;

  constructor(options: CarrierAmdRouterOptions = {}) {
    this.pendingMs = options.pendingMs ?? 15_000;
    this.maxPending = options.maxPending ?? 1000;
    this.now = options.now ?? Date.now;
  }

  /**
   * The live session of `runId` takes the carrier's verdicts through `deliver` (verdicts that arrived first are
   * handed over at once, in order). Returns the unregistration (idempotent). A later registration replaces it.
   */
  register(runId: number, deliver: (result: AmdResult) => void): () => void {
    this.sessions.set(runId, deliver);
    const waiting = this.pending.get(runId);
    this.pending.delete(runId);
    if (waiting && this.now() - waiting.at <= this.pendingMs) for (const r of waiting.results) safely(deliver, r);
    return () => {
      if (this.sessions.get(runId) === deliver) this.sessions.delete(runId);
    };
  }

  /** Hands `result` to the run's live session; true when one took it, false when it was kept for a later one. */
  deliver(runId: number, result: AmdResult): boolean {
    const session = this.sessions.get(runId);
    if (session) {
      safely(session, result);
      return true;
    }
    const now = this.now();
    const waiting = this.pending.get(runId);
    if (waiting && now - waiting.at <= this.pendingMs) waiting.results.push(result);
    else {
      this.pending.delete(runId);
      this.pending.set(runId, { at: now, results: [result] });
    }
    while (this.pending.size > this.maxPending) this.pending.delete(this.pending.keys().next().value as number);
    return false;
  }

  /** Sessions registered now (tests). */
  get live(): number {
    return this.sessions.size;
  }
}

function safely(fn: (r: AmdResult) => void, r: AmdResult): void {
  try {
    fn(r);
  } catch {
    // a session's gate never throws; a broken one must not break the status webhook
  }
}
