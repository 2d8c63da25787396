import type { CallOutcome } from '../ports/telephony-provider.port.js';
import type { Run } from '../runs/run.js';
import type { AmdResult } from '../voice/amd/amd-result.js';

/** Told once per run when a final status has been applied (the campaign engine registers one). */
export interface CallOutcomeListener {
  /** Called after the final status is stored. Errors are logged by the caller and never undo the status. */
  onRunFinished(run: Run, outcome: CallOutcome): Promise<void>;
  /**
   * The carrier's answering-machine verdict for a run that is not final (`NormalizedCallEvent.amd`), told before
   * the event's status is applied, every time one arrives (the voice module routes it to the run's live session).
   * Errors are logged by the caller. Optional.
   */
  onCarrierAmd?(run: Run, amd: AmdResult): Promise<void> | void;
  /**
   * The call is about to connect its media: its inbound webhook was answered with the carrier's markup, or its
   * outbound answer URL was fetched (the callee picked up). The voice module prepares the call's conversation
   * and synthesizes its greeting then (docs/voice.md "First words"). Must not throw or block; may be told more
   * than once for a run (a repeated webhook). Optional.
   */
  onCallConnecting?(run: Run): void;
}

/** The registered listeners; modules add theirs at composition time. */
export class CallOutcomeListeners {
  private readonly listeners: CallOutcomeListener[] = [];
  add(listener: CallOutcomeListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }
  all(): readonly CallOutcomeListener[] {
    return this.listeners;
  }

  /** Tells every listener that `run`'s call is about to connect; a listener that throws is skipped. */
  callConnecting(run: Run): void {
    for (const l of this.listeners) {
      try {
        l.onCallConnecting?.(run);
      } catch {
        // a preparation is an optimization: the call connects without it
      }
    }
  }
}
