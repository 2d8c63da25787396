/**
 * Twilio Media Streams framing: JSON text messages `connected`, `start` (streamSid, callSid, tracks,
 * mediaFormat audio/x-mulaw 8000 1, customParameters), `media` (track inbound/outbound, base64 μ-law
 * payload), `dtmf`, `mark` and `stop`. Pure; never throws. The media token travels as the `<Stream>`'s
 * `<Parameter name="token">` (Twilio refuses query strings on stream URLs) and arrives in `start.customParameters`.
 */
import { dtmfDigit, jsonObject as obj, mediaAudio, mediaFormatOf, nonEmptyString as str, readJsonMessage, startTracks, unknownEvent } from '../../core/calls/media-json-framing.js';
import type { MediaFraming, MediaMessage, MediaStart } from '../../core/calls/media-session.js';

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
  const read = readJsonMessage(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
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
      return mediaAudio(m.media, (payload) => Buffer.from(payload, 'base64'));
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

/**
 * Twilio: the token comes in the `start`; a `start` means the call is connected (the run may already be
 * `in_progress` from the call's status callback: applying it again is a no-op). The stream's end never ends
 * the run here: outbound calls have their call status callback and inbound streams their `stream-stopped`
 * status callback (providers/twilio/twilio.provider.ts), so applying it twice is avoided.
 */
export const twilioMediaFraming: MediaFraming = Object.freeze({
  provider: 'twilio',
  parse: parseTwilioMediaMessage,
  tokenIn: 'start' as const,
  startMeansInProgress: true,
  stopMeansCompleted: false,
});
