/**
 * The TwiML documents Callplane answers Twilio with. Pure string building with XML escaping; no SDK.
 */
export const TWIML_CONTENT_TYPE = 'text/xml';

const XML_HEADER = '<?xml version="1.0" encoding="UTF-8"?>';

export function escapeXml(value: string): string {
  return value.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] as string);
}

/**
 * Connects the call's audio to our media WebSocket: `<Connect><Stream url="wss://…/media/<run_id>">` with
 * the run id as a custom parameter (it arrives in the stream's `start` message). Twilio refuses query strings
 * on stream URLs, so the media URL's query parameters (our signed media `token`) become `<Parameter>`s too
 * and arrive in `start.customParameters`. With `streamStatusCallbackUrl`, Twilio posts
 * `stream-started`/`stream-stopped` there: inbound calls have no per-call status callback, so that is how
 * their runs move.
 */
export function connectStreamTwiml(input: { mediaUrl: string; runId: number; streamStatusCallbackUrl?: string }): string {
  const [base, query = ''] = toWebSocketUrl(input.mediaUrl).split(/\?(.*)/s, 2) as [string, string?];
  const callback = input.streamStatusCallbackUrl
    ? ` statusCallback="${escapeXml(input.streamStatusCallbackUrl)}" statusCallbackMethod="POST"`
    : '';
  const parameters = [['run_id', String(input.runId)], ...[...new URLSearchParams(query)].filter(([name]) => name !== 'run_id')];
  return (
    `${XML_HEADER}<Response><Connect><Stream url="${escapeXml(base)}"${callback}>` +
    parameters.map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`).join('') +
    `</Stream></Connect></Response>`
  );
}

/**
 * A cold transfer: dial `target` (a `<Number>` for E.164, a `<Sip>` for a SIP URI) and bridge the caller to it;
 * when the dial ends, the call ends. `callerId` is what the target sees (a number of the account), `timeout` how
 * long it may ring.
 */
export function dialTwiml(input: { target: { kind: 'phone' | 'sip'; address: string }; callerId: string | null; timeoutSeconds: number }): string {
  const callerId = input.callerId && input.target.kind === 'phone' ? ` callerId="${escapeXml(input.callerId)}"` : '';
  const noun = input.target.kind === 'sip' ? 'Sip' : 'Number';
  return (
    `${XML_HEADER}<Response><Dial${callerId} timeout="${Math.round(input.timeoutSeconds)}">` +
    `<${noun}>${escapeXml(input.target.address)}</${noun}></Dial></Response>`
  );
}

/** A polite refusal: a short spoken sentence, then hang up. The reason stays in our logs, not in the caller's ear. */
export function politeHangupTwiml(message = 'Sorry, this number cannot take your call right now. Goodbye.'): string {
  return `${XML_HEADER}<Response><Say>${escapeXml(message)}</Say><Hangup/></Response>`;
}

/** Hang up at once (an answering machine picked up an outbound call). */
export function hangupTwiml(): string {
  return `${XML_HEADER}<Response><Hangup/></Response>`;
}

/** Twilio's `<Stream>` needs a ws(s) URL: turn an http(s) one into its WebSocket twin. */
export function toWebSocketUrl(url: string): string {
  return url.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s}://`);
}
