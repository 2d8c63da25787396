/**
 * The simulator's media framing, for simulated callers, tests and demos (docs/voice.md, "Carriers and media
 * framing"). It is Twilio's shape, so a Twilio client speaks it as is:
 * - in: binary frames are caller audio (μ-law 8 kHz mono bytes); text frames are JSON `{"event": "start",
 *   "call_id"?}`, `{"event": "media", "media": {"track"?, "payload": "<base64>"}}` (the older `{"event":
 *   "audio", "track"?, "payload"}` too), `{"event": "mark", "mark": {"name"}}` (or `"name"` at the top),
 *   `{"event": "dtmf", "dtmf": {"digit"}}` and `{"event": "stop"}`;
 * - out: `{"event": "media", "streamSid", "media": {"payload": "<base64 μ-law>"}}` and `{"event": "clear",
 *   "streamSid"}` (drop what you buffered). Marks are emulated by the channel from its playout clock, so a
 *   simulated caller echoes nothing; closing the stream ends the simulated call.
 * The token is `?token=` on the URL. Pure; never throws.
 */
import { dtmfDigit, fastMediaAudio, isBase64Payload, jsonFrame, jsonObject as obj, mediaAudio, nonEmptyString as str, readJsonMessage, unknownEvent } from '../../core/calls/media-json-framing.js';
import { MULAW_8K_MONO, type MediaFraming, type MediaMessage, type MediaStreamIds, type OutboundMedia, type WireFrame } from '../../core/calls/media-session.js';
import { simulatorMedia } from './simulator.manifest.js';
import { allocPayload, base64Payload, decodeBase64Payload, utf8Text } from '../../plugins/sdk.js';

export function parseSimulatorMediaMessage(data: Uint8Array, isBinary: boolean): MediaMessage {
  if (isBinary) return { kind: 'audio', track: 'inbound', payload: data };
  // one per 20 ms per call: the media message's fast path, the full parse for everything else
  const fast = fastMediaAudio(data, allocPayload);
  if (fast) return fast;
  const read = readJsonMessage(utf8Text(data));
  if ('ignored' in read) return read.ignored;
  const msg = read.message;
  const event = str(msg.event);
  switch (event) {
    case 'connected':
      return { kind: 'connected' };
    case 'start': {
      const callId = str(msg.call_id);
      const streamId = str(msg.streamSid) ?? str(obj(msg.start)?.streamSid);
      return {
        kind: 'start',
        start: { tracks: ['inbound'], format: MULAW_8K_MONO, parameters: {}, ...(callId ? { providerCallId: callId } : {}), ...(streamId ? { streamId } : {}) },
      };
    }
    case 'media':
      return mediaAudio(msg.media, decodeBase64Payload);
    case 'audio': {
      const track = msg.track === undefined || msg.track === 'inbound' ? 'inbound' : msg.track === 'outbound' ? 'outbound' : null;
      if (!track) return { kind: 'ignored', reason: 'audio on an unknown track' };
      if (!isBase64Payload(msg.payload)) return { kind: 'ignored', reason: 'audio without a base64 payload' };
      return { kind: 'audio', track, payload: decodeBase64Payload(msg.payload) };
    }
    case 'mark': {
      const name = str(obj(msg.mark)?.name) ?? str(msg.name);
      return name ? { kind: 'mark', name } : { kind: 'ignored', reason: 'mark without a name' };
    }
    case 'dtmf':
      return dtmfDigit(msg.dtmf);
    case 'stop':
      return { kind: 'stop' };
    default:
      return unknownEvent(event);
  }
}

/** One outbound message, Twilio-shaped (marks are emulated: nothing on the wire). */
export function serializeSimulatorMediaMessage(message: OutboundMedia, stream: MediaStreamIds): WireFrame[] {
  const streamSid = stream.streamId ?? '';
  switch (message.kind) {
    case 'audio':
      // one per 20 ms frame: a template (base64 needs no escaping) instead of building and serializing an object
      return [{ data: `{"event":"media","streamSid":${JSON.stringify(streamSid)},"media":{"payload":"${base64Payload(message.payload)}"}}`, binary: false }];
    case 'clear':
      return [jsonFrame({ event: 'clear', streamSid })];
    case 'mark':
    case 'hangup':
      return [];
  }
}

/**
 * The simulator drives its calls' statuses with its own timers (simulator.provider.ts), so the stream's
 * start and end do not move the run: they are recorded only.
 */
export const simulatorMediaFraming: MediaFraming = Object.freeze({
  provider: 'simulator',
  media: simulatorMedia,
  parse: parseSimulatorMediaMessage,
  serialize: serializeSimulatorMediaMessage,
  tokenIn: 'query' as const,
  startMeansInProgress: false,
  stopMeansCompleted: false,
});
