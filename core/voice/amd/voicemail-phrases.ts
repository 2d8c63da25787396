/**
 * Words that only an answering machine says (docs/voicemail.md "What decides"). Matched on the STT's text,
 * interim or final, after normalization (lower case, punctuation and apostrophes removed, spaces collapsed),
 * so "Leave a message after the tone." and "leave a msg… after the beep" and "can't come to the phone" match
 * whatever the recognizer's punctuation. Each entry is a regular expression over normalized words; the first
 * match is reported by its label.
 */
export interface VoicemailPhrase {
  label: string;
  pattern: RegExp;
  /** `strong`: only a machine says it (decides at once); `weak`: a business's human says it too (a hint). */
  strength: 'strong' | 'weak';
}

export const VOICEMAIL_PHRASES: readonly VoicemailPhrase[] = [
  { label: 'leave a message', strength: 'strong', pattern: /\bleave (?:me |us )?(?:a |your )?(?:brief |short |detailed )?(?:message|msg|voicemail|voice message|name and number)\b/ },
  { label: 'after the tone', strength: 'strong', pattern: /\b(?:after|at) the (?:tone|beep|signal)\b/ },
  { label: 'not available', strength: 'strong', pattern: /\b(?:not (?:currently )?available|unavailable|isnt available|arent available)\b/ },
  { label: 'cannot take the call', strength: 'strong', pattern: /\b(?:cant|cannot|can not|unable to|not able to) (?:come to|get to|answer|take) (?:the |your |this )?(?:phone|call)\b/ },
  { label: 'voicemail', strength: 'strong', pattern: /\bvoice ?mail(?:box)?\b/ },
  { label: 'mailbox is full', strength: 'strong', pattern: /\bmail ?box (?:is )?(?:full|has not been set up|not set up)\b/ },
  { label: 'record your message', strength: 'strong', pattern: /\b(?:record (?:your|a) message|(?:finished|done) recording)\b/ },
  { label: 'the person you are calling', strength: 'strong', pattern: /\bthe (?:person|party|number|subscriber) you(?: are|re| have|ve) (?:calling|called|trying to reach|dialed)\b/ },
  { label: 'you have reached', strength: 'weak', pattern: /\byou(?: have|ve) reached\b/ },
  { label: 'get back to you', strength: 'weak', pattern: /\b(?:get back to you|return your call|call you back)\b/ },
];

/** Lower case, no punctuation (apostrophes dropped so "can't" → "cant"), single spaces. */
export function normalizeTranscript(text: string): string {
  return text
    .toLowerCase()
    .replace(/[’'`]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** The first strong voicemail phrase in `text`, else the first weak one, else null. Pure. */
export function findVoicemailPhrase(text: string): VoicemailPhrase | null {
  const normalized = normalizeTranscript(text);
  if (normalized === '') return null;
  let weak: VoicemailPhrase | null = null;
  for (const phrase of VOICEMAIL_PHRASES) {
    if (!phrase.pattern.test(normalized)) continue;
    if (phrase.strength === 'strong') return phrase;
    weak ??= phrase;
  }
  return weak;
}

/** Words in `text` (after normalization). */
export function wordCount(text: string): number {
  const normalized = normalizeTranscript(text);
  return normalized === '' ? 0 : normalized.split(' ').length;
}
