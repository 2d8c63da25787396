/**
 * What answering-machine detection decides about an outbound call (API.md 15, docs/voicemail.md), whoever
 * decided it: the carrier's AMD (Twilio async AMD, Telnyx) or our own detector on the first seconds of audio
 * and transcript. One shape, so the voicemail policy has one input.
 */

/** `human`: a person answered; `machine`: an answering machine, voicemail or fax; `unknown`: no decision. */
export type AmdVerdict = 'human' | 'machine' | 'unknown';

/** Who decided: the carrier, our heuristics, the one-shot model classification, or the decision timeout. */
export type AmdSource = 'carrier' | 'heuristic' | 'llm' | 'timeout';

export interface AmdResult {
  verdict: AmdVerdict;
  source: AmdSource;
  /** Why, in a few words a log reader understands (`voicemail phrase "leave a message"`, `answered_by=machine_start`). */
  reason: string;
  /** When the decision was made, in ms on the session's clock (audio time for our detector); absent from a carrier. */
  decidedAtMs?: number;
  /**
   * Set when the greeting is known to be over: the carrier heard its end (Twilio `machine_end_*`, Telnyx
   * `call.machine.greeting.ended`), so a message can be spoken at once. `beep` tells whether a beep ended it.
   */
  greetingEnded?: { beep: boolean };
}

/** The `workflow_configurations.voicemail` settings (API.md 11). */
export interface VoicemailSettings {
  detect: boolean;
  action: 'hangup' | 'leave_message';
  /** The templated message `leave_message` speaks ({{variables}} of the run's context). */
  message?: string;
}

/** Reads `workflow_configurations.voicemail` tolerantly: absent or malformed means no detection. */
export function voicemailSettingsOf(configurations: Record<string, unknown> | null | undefined): VoicemailSettings | null {
  const raw = configurations?.voicemail;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const v = raw as Record<string, unknown>;
  if (v.detect !== true) return null;
  const action = v.action === 'leave_message' ? 'leave_message' : 'hangup';
  const message = typeof v.message === 'string' && v.message.trim() !== '' ? v.message : undefined;
  return { detect: true, action, ...(message !== undefined ? { message } : {}) };
}
