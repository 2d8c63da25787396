/**
 * The NCCOs (Nexmo Call Control Objects) Callplane answers Vonage with: plain JSON arrays of actions.
 * https://developer.vonage.com/en/voice/voice-api/ncco-reference
 */
export const NCCO_CONTENT_TYPE = 'application/json';

/** Linear 16-bit PCM at 16 kHz: the audio format of the media WebSocket. */
export const VONAGE_WEBSOCKET_AUDIO = 'audio/l16;rate=16000';

/**
 * Connects the call to our media WebSocket. The run id travels in the WebSocket's `headers` (Vonage sends them
 * in the first text message). With `eventUrl`, the connected leg's events go there (inbound calls: the run's
 * status URL, since the application's own event URL is shared by every call).
 */
export function connectWebsocketNcco(input: { mediaUrl: string; runId: number; eventUrl?: string }): Array<Record<string, unknown>> {
  const connect: Record<string, unknown> = {
    action: 'connect',
    endpoint: [{ type: 'websocket', uri: toWebSocketUrl(input.mediaUrl), 'content-type': VONAGE_WEBSOCKET_AUDIO, headers: { run_id: String(input.runId) } }],
  };
  if (input.eventUrl) {
    connect.eventUrl = [input.eventUrl];
    connect.eventMethod = 'POST';
  }
  return [connect];
}

/**
 * A cold transfer's NCCO: connect the caller to `target` (a `phone` endpoint in Vonage's digits, or a `sip`
 * endpoint), ringing at most `timeoutSeconds`; `from` is the caller id the target sees.
 */
export function connectTargetNcco(input: { target: { kind: 'phone' | 'sip'; address: string }; from: string | null; timeoutSeconds: number }): Array<Record<string, unknown>> {
  const endpoint = input.target.kind === 'sip' ? { type: 'sip', uri: input.target.address } : { type: 'phone', number: input.target.address.replace(/[^0-9]/g, '') };
  const connect: Record<string, unknown> = { action: 'connect', timeout: Math.round(input.timeoutSeconds), endpoint: [endpoint] };
  if (input.from) connect.from = input.from.replace(/[^0-9]/g, '');
  return [connect];
}

/** A polite refusal: a short sentence, then the NCCO ends and Vonage hangs up. */
export function politeRefusalNcco(message = 'Sorry, this number cannot take your call right now. Goodbye.'): Array<Record<string, unknown>> {
  return [{ action: 'talk', text: message }];
}

export function toWebSocketUrl(url: string): string {
  return url.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s}://`);
}
