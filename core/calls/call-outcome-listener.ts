import type { CallOutcome } from '../ports/telephony-provider.port.js';
import type { Run } from '../runs/run.js';

/** Told once per run when a final status has been applied (the campaign engine registers one). */
export interface CallOutcomeListener {
  /** Called after the final status is stored. Errors are logged by the caller and never undo the status. */
  onRunFinished(run: Run, outcome: CallOutcome): Promise<void>;
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
