/**
 * Where an endCall node hands the caller over (docs/voice.md "Transfers"): a phone number in E.164 or a SIP URI.
 * One parser for the validator (save time), the engine (after rendering) and the transfer use case. Pure.
 */

/** A parsed transfer target. `address` is what providers dial: `+15551234567` or `sip:desk@pbx.example.com`. */
export type TransferTarget = { kind: 'phone'; address: string } | { kind: 'sip'; address: string };

/** E.164: a plus, a non-zero digit, then 1..14 more digits. */
const E164 = /^\+[1-9]\d{1,14}$/u;
/**
 * `sip:` or `sips:`, an optional user part (RFC 3261 unreserved and escaped characters), a host (name, IPv4 or
 * bracketed IPv6), an optional port and `;params`. No spaces, quotes or angle brackets: the address goes into
 * XML and JSON markup.
 */
const SIP_URI = /^sips?:(?:[A-Za-z0-9\-_.!~*'()&=+$,;?/%]+@)?(?:[A-Za-z0-9](?:[A-Za-z0-9\-.]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?(?:;[A-Za-z0-9\-_.!~*'()&=+$%;]*)?$/u;
/** Punctuation people write inside phone numbers, dropped before the E.164 check. */
const PHONE_PUNCTUATION = /[\s\-().]/gu;
const TEMPLATE = /\{\{[^{}]*\}\}/u;

/**
 * The target `text` names, or null when it is neither an E.164 number (spaces, dashes, dots and parentheses
 * allowed: `+1 (555) 123-4567`) nor a `sip:`/`sips:` URI. The scheme is matched case-insensitively and
 * written lower-case. Never throws.
 */
export function parseTransferTarget(text: unknown): TransferTarget | null {
  if (typeof text !== 'string') return null;
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > 256) return null;
  if (/^sips?:/iu.test(trimmed)) {
    const scheme = trimmed.slice(0, trimmed.indexOf(':')).toLowerCase();
    const uri = `${scheme}${trimmed.slice(trimmed.indexOf(':'))}`;
    return SIP_URI.test(uri) ? { kind: 'sip', address: uri } : null;
  }
  if (!trimmed.startsWith('+')) return null;
  const digits = trimmed.replace(PHONE_PUNCTUATION, '');
  return E164.test(digits) ? { kind: 'phone', address: digits } : null;
}

/** True when `text` holds a `{{...}}` template: its value is known only once rendered with a call's context. */
export function isTemplatedTransferTarget(text: string): boolean {
  return TEMPLATE.test(text);
}
