/**
 * Telnyx media streaming framing (developers.telnyx.com/api-reference/websockets/stream-call-media-over-websocket):
 * JSON text messages `connected`, `start` (`stream_id`, `start.call_control_id`, `start.media_format`
 * {encoding PCMU|PCMA|…, sample_rate, channels}), `media` (`media.track` inbound/outbound, base64 RTP payload
 * without headers), `mark` (an echo of one we sent), `dtmf`, `error` and `stop`. Outbound, with
 * `stream_bidirectional_mode: rtp` and codec PCMU (telnyx.client.ts asks for both): `media` with a base64
 * μ-law payload (20 ms to 30 s per message), `mark` and `clear`. Telnyx does not promise the order of media
 * frames; ours arrive through one socket in the order sent. Pure; never throws. The media token travels as
 * `?token=` on the `stream_url`.
 */
import { dtmfDigit, fastMediaAudio, jsonFrame, jsonObject as obj, mediaAudio, mimeEncoding, nonEmptyString as str, readJsonMessage, startTracks, unknownEvent } from '../../core/calls/media-json-framing.js';
import type { MediaFormat, MediaFraming, MediaMessage, MediaStart, MediaStreamIds, OutboundMedia, WireFrame } from '../../core/calls/media-session.js';
import { telnyxMedia } from './telnyx.manifest.js';
import { allocPayload, base64Payload, decodeBase64Payload, utf8Text } from '../../plugins/sdk.js';

function telnyxFormat(v: unknown): MediaFormat | null {
  const f = obj(v);
  const encoding = str(f?.encoding);
  const sampleRate = Number(f?.sample_rate ?? 8000);
  const channels = f?.channels === undefined ? 1 : Number(f.channels);
  if (!encoding || !Number.isInteger(sampleRate) || !Number.isInteger(channels)) return null;
  return { encoding: mimeEncoding(encoding), sampleRate, channels };
}

/** One Telnyx media streaming WebSocket message as a `MediaMessage`. */
export function parseTelnyxMediaMessage(data: Uint8Array, isBinary: boolean): MediaMessage {
  if (isBinary) return { kind: 'ignored', reason: 'binary frame (Telnyx sends JSON text)' };
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
      const format = telnyxFormat(s.media_format);
      if (!format) return { kind: 'ignored', reason: 'start without a readable media_format' };
      const start: MediaStart = { tracks: startTracks(s.tracks), format, parameters: Object.create(null) as Record<string, string> };
      const streamId = str(m.stream_id) ?? str(s.stream_id);
      if (streamId) start.streamId = streamId;
      const callControlId = str(s.call_control_id);
      if (callControlId) start.providerCallId = callControlId;
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
    case 'error': {
      const detail = str(obj(m.payload)?.detail) ?? str(obj(m.payload)?.title) ?? 'no detail';
      return { kind: 'ignored', reason: `error from Telnyx: ${detail.slice(0, 80)}` };
    }
    case 'stop':
      return { kind: 'stop' };
    default:
      return unknownEvent(event);
  }
}

/** One outbound message in Telnyx's shape. */
export function serializeTelnyxMediaMessage(message: OutboundMedia, _stream: MediaStreamIds): WireFrame[] {
  switch (message.kind) {
    case 'audio':
      // one per 20 ms frame: a template (base64 needs no escaping) instead of building and serializing an object
      return [{ data: `{"event":"media","media":{"payload":"${base64Payload(message.payload)}"}}`, binary: false }];
    case 'mark':
      return [jsonFrame({ event: 'mark', mark: { name: message.name } })];
    case 'clear':
      return [jsonFrame({ event: 'clear' })];
    case 'hangup':
      return []; // the stream is a fork of the call: Call Control hangs up (manifest hangUp 'rest')
  }
}

/**
 * Telnyx: the token is on the URL. Its Call Control webhooks report the call's answer and end
 * (telnyx.provider.ts), so the stream's start and stop move nothing.
 */
export const telnyxMediaFraming: MediaFraming = Object.freeze({
  provider: 'telnyx',
  media: telnyxMedia,
  parse: parseTelnyxMediaMessage,
  serialize: serializeTelnyxMediaMessage,
  tokenIn: 'query' as const,
  startMeansInProgress: false,
  stopMeansCompleted: false,
});
