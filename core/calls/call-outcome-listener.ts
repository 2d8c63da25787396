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
}
