/**
 * The Plivo XML documents Callplane answers with. Pure string building with XML escaping; no SDK.
 */
export const PLIVO_XML_CONTENT_TYPE = 'application/xml';

const XML_HEADER = '<?xml version="1.0" encoding="UTF-8"?>';

export function escapeXml(value: string): string {
  return value.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string);
}

/** Plivo streams to a ws(s) URL: turn an http(s) one into its WebSocket twin. */
export function toWebSocketUrl(url: string): string {
  return url.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s}://`);
}

/**
 * Connects the call's audio to our media WebSocket: a bidirectional `<Stream>` of 8 kHz μ-law that keeps the
 * call up while the socket is open (`keepCallAlive`), the URL (with its signed media `token` query parameter)
 * as the element's text. With `statusCallbackUrl`, Plivo posts the stream's `Event` (started/stopped/failed)
 * there; inbound calls have no per-call hangup URL, so that is how their runs move.
 */
export function streamXml(input: { mediaUrl: string; statusCallbackUrl?: string }): string {
  const callback = input.statusCallbackUrl
    ? ` statusCallbackUrl="${escapeXml(input.statusCallbackUrl)}" statusCallbackMethod="POST"`
    : '';
  return (
    `${XML_HEADER}<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000"${callback}>` +
    `${escapeXml(toWebSocketUrl(input.mediaUrl))}</Stream></Response>`
  );
}

/**
 * A cold transfer's instructions (served from the transfer answer URL): dial `target` and bridge the caller to
 * it; a phone number as Plivo writes them (digits with the country code) in `<Number>`, a SIP URI in `<User>`.
 */
export function dialXml(input: { target: { kind: 'phone' | 'sip'; address: string }; callerId: string | null; timeoutSeconds: number }): string {
  const callerId = input.callerId ? ` callerId="${escapeXml(input.callerId.replace(/[^0-9]/g, ''))}"` : '';
  const endpoint =
    input.target.kind === 'sip' ? `<User>${escapeXml(input.target.address)}</User>` : `<Number>${escapeXml(input.target.address.replace(/[^0-9]/g, ''))}</Number>`;
  return `${XML_HEADER}<Response><Dial${callerId} timeout="${Math.round(input.timeoutSeconds)}">${endpoint}</Dial></Response>`;
}

/** A polite refusal: a short spoken sentence, then hang up. The reason stays in our logs, not in the caller's ear. */
export function politeHangupXml(message = 'Sorry, this number cannot take your call right now. Goodbye.'): string {
  return `${XML_HEADER}<Response><Speak>${escapeXml(message)}</Speak><Hangup/></Response>`;
}

/** Hang up at once (an answering machine picked up an outbound call). */
export function hangupXml(): string {
  return `${XML_HEADER}<Response><Hangup/></Response>`;
}
