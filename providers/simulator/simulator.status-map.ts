import type { CallOutcome, RunStatus } from '../../plugins/sdk.js';

/** What a simulated call does, chosen by the last two digits of the called number (API.md section 8). */
export type SimulatorScenario = 'dial_failed' | 'busy' | 'no_answer' | 'voicemail' | 'answered';

export function scenarioFor(to: string): SimulatorScenario {
  const digits = to.replace(/\D/g, '');
  switch (digits.slice(-2)) {
    case '00':
      return 'dial_failed';
    case '01':
      return 'busy';
    case '02':
      return 'no_answer';
    case '03':
      return 'voicemail';
    default:
      return 'answered';
  }
}

/** Simulator event names (its status callbacks' `event`) → our call status and, on final ones, the outcome. */
export const SIMULATOR_EVENTS: Readonly<Record<string, { status: RunStatus; outcome?: CallOutcome }>> = Object.freeze({
  ringing: { status: 'ringing' },
  answered: { status: 'in_progress' },
  completed: { status: 'completed', outcome: 'completed' },
  voicemail: { status: 'completed', outcome: 'voicemail' },
  busy: { status: 'completed', outcome: 'busy' },
  no_answer: { status: 'completed', outcome: 'no_answer' },
  failed: { status: 'failed', outcome: 'failed' },
  canceled: { status: 'completed', outcome: 'canceled' },
});

/** The final event of each scenario reached after ringing. */
export const SCENARIO_FINAL_EVENT: Readonly<Record<Exclude<SimulatorScenario, 'dial_failed' | 'answered'>, keyof typeof SIMULATOR_EVENTS>> = Object.freeze({
  busy: 'busy',
  no_answer: 'no_answer',
  voicemail: 'voicemail',
});
