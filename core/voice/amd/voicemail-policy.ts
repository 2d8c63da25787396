/**
 * What answering-machine detection's decision does to the call (API.md 15, docs/voicemail.md): the one rule.
 *
 * - detection off (`voicemail.detect` not true), `human` or `unknown` → `converse`: the agent's first turn
 *   proceeds (while undecided it waits);
 * - `machine` with `action: hangup` → `hang_up` with disposition `voicemail` (so a campaign's
 *   `retry_on_voicemail` applies);
 * - `machine` with `action: leave_message` → `leave_message` once the greeting ended (after the beep, or the
 *   silence after the greeting): speak the rendered `message`, then hang up with disposition `voicemail_left`;
 *   a message that renders to nothing leaves nothing and hangs up as `voicemail`.
 * Pure; never throws.
 */
import type { AmdResult, VoicemailSettings } from './amd-result.js';

export const VOICEMAIL_DISPOSITION = 'voicemail';
export const VOICEMAIL_LEFT_DISPOSITION = 'voicemail_left';

export type VoicemailPlan =
  | { kind: 'converse'; result: AmdResult | null }
  | { kind: 'hang_up'; result: AmdResult; disposition: typeof VOICEMAIL_DISPOSITION }
  | { kind: 'leave_message'; result: AmdResult; message: string; disposition: typeof VOICEMAIL_LEFT_DISPOSITION };

/**
 * The plan for a decision. `render` fills the message template with the run's context; for `leave_message`
 * call it only once the greeting ended (the plan is final then).
 */
export function voicemailPlan(result: AmdResult | null, settings: VoicemailSettings | null, render: (template: string) => string): VoicemailPlan {
  if (!settings?.detect || !result || result.verdict !== 'machine') return { kind: 'converse', result };
  if (settings.action === 'leave_message') {
    const message = settings.message ? render(settings.message).trim() : '';
    if (message !== '') return { kind: 'leave_message', result, message, disposition: VOICEMAIL_LEFT_DISPOSITION };
  }
  return { kind: 'hang_up', result, disposition: VOICEMAIL_DISPOSITION };
}

/** True when the plan must wait for the greeting's end before it is carried out (a message to leave). */
export function waitsForGreetingEnd(result: AmdResult, settings: VoicemailSettings | null): boolean {
  return settings?.detect === true && result.verdict === 'machine' && settings.action === 'leave_message' && (settings.message ?? '').trim() !== '';
}
