/**
 * Twilio Media Streams framing: JSON text messages `connected`, `start` (streamSid, callSid, tracks,
 * mediaFormat audio/x-mulaw 8000 1, customParameters), `media` (track inbound/outbound, base64 μ-law
 * payload), `dtmf`, `mark` and `stop`. Outbound (bidirectional `<Connect><Stream>`): `media` with a base64
 * μ-law payload, `mark` (echoed back once the audio before it has played, or at once when a `clear` drops
 * it) and `clear`, each naming the `streamSid`. Pure; never throws. The media token travels as the `<Stream>`'s
 * `<Parameter name="token">` (Twilio refuses query strings on stream URLs) and arrives in `start.customParameters`.
 */
import { dtmfDigit, fastMediaAudio, jsonFrame, jsonObject as obj, mediaAudio, mediaFormatOf, nonEmptyString as str, readJsonMessage, startTracks, unknownEvent } from '../../core/calls/media-json-framing.js';
import type { MediaFraming, MediaMessage, MediaStart, MediaStreamIds, OutboundMedia, WireFrame } from '../../core/calls/media-session.js';
import { twilioMedia } from './twilio.manifest.js';
import { allocPayload, base64Payload, decodeBase64Payload, utf8Text } from '../../plugins/sdk.js';

function parameters(v: unknown): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  const p = obj(v);
  if (!p) return out;
  for (const [k, value] of Object.entries(p)) if (typeof value === 'string') out[k] = value;
  return out;
}

/** One Twilio Media Streams WebSocket message as a `MediaMessage`. */
export function parseTwilioMediaMessage(data: Uint8Array, isBinary: boolean): MediaMessage {
  if (isBinary) return { kind: 'ignored', reason: 'binary frame (Twilio sends JSON text)' };
  // one per 20 ms per call: the media message's fast path, the full parse for everything else
  const fast = fastMediaAudio(data, allocPayload);
  if (fast) return fast;
  const read = readJsonMessage(utf8Text(data));
  if ('ignored' in read) return read.ignored;
  const m = read.message;
  const event = str(m.event);
  switch (event) {
    case 'connected':
      return { kind: 'connected' };
    case 'start': {
      const s = obj(m.start);
      if (!s) return { kind: 'ignored', reason: 'start without a start object' };
      const format = mediaFormatOf(s.mediaFormat);
      if (!format) return { kind: 'ignored', reason: 'start without a readable mediaFormat' };
      const start: MediaStart = { tracks: startTracks(s.tracks), format, parameters: parameters(s.customParameters) };
      const streamId = str(s.streamSid) ?? str(m.streamSid);
      if (streamId) start.streamId = streamId;
      const callSid = str(s.callSid);
      if (callSid) start.providerCallId = callSid;
      return { kind: 'start', start };
    }
    case 'media':
      return mediaAudio(m.media, decodeBase64Payload);
    case 'mark': {
      const name = str(obj(m.mark)?.name);
      return name ? { kind: 'mark', name } : { kind: 'ignored', reason: 'mark without a name' };
    }
    case 'dtmf':
      return dtmfDigit(m.dtmf);
    case 'stop':
      return { kind: 'stop' };
    default:
      return unknownEvent(event);
  }
}

/** One outbound message in Twilio's shape (docs: twilio.com/docs/voice/media-streams/websocket-messages). */
export function serializeTwilioMediaMessage(message: OutboundMedia, stream: MediaStreamIds): WireFrame[] {
  const streamSid = stream.streamId ?? '';
  switch (message.kind) {
    case 'audio':
      // one per 20 ms frame: a template (base64 needs no escaping) instead of building and serializing an object
      return [{ data: `{"event":"media","streamSid":${JSON.stringify(streamSid)},"media":{"payload":"${base64Payload(message.payload)}"}}`, binary: false }];
    case 'mark':
      return [jsonFrame({ event: 'mark', streamSid, mark: { name: message.name } })];
    case 'clear':
      return [jsonFrame({ event: 'clear', streamSid })];
    case 'hangup':
      return []; // closing the stream ends the <Connect>, and nothing follows it in our TwiML
  }
}

/**
 * Twilio: the token comes in the `start`; a `start` means the call is connected (the run may already be
 * `in_progress` from the call's status callback: applying it again is a no-op). The stream's end never ends
 * the run here: outbound calls have their call status callback and inbound streams their `stream-stopped`
 * status callback (providers/twilio/twilio.provider.ts), so applying it twice is avoided.
 */
export const twilioMediaFraming: MediaFraming = Object.freeze({
  provider: 'twilio',
  media: twilioMedia,
  parse: parseTwilioMediaMessage,
  serialize: serializeTwilioMediaMessage,
  tokenIn: 'start' as const,
  startMeansInProgress: true,
  stopMeansCompleted: false,
});
