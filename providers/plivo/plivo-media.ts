/**
 * Plivo Audio Streaming framing: JSON text messages `start` (`start.callId`, `start.streamId`, `tracks`,
 * `mediaFormat` audio/x-mulaw 8000), `media` (`media.track` inbound/outbound, base64 μ-law `payload`), `dtmf`,
 * `playedStream` (a checkpoint we asked for: a mark), `clearedAudio` and `stop`. Outbound: `playAudio` (base64
μ-law 8 kHz), `checkpoint` (echoed as `playedStream` once the audio before it has played) and `clearAudio`
(acknowledged with `clearedAudio`), naming the `streamId`. Pure; never throws. The media
 * token travels as `?token=` on the stream URL (our `<Stream>` element's text), checked before the upgrade.
 */
import { dtmfDigit, fastMediaAudio, jsonFrame, jsonObject as obj, mediaAudio, mediaFormatOf, nonEmptyString as str, readJsonMessage, startTracks, unknownEvent } from '../../core/calls/media-json-framing.js';
import type { MediaFraming, MediaMessage, MediaStart, MediaStreamIds, OutboundMedia, WireFrame } from '../../core/calls/media-session.js';
import { plivoMedia } from './plivo.manifest.js';
import { allocPayload, base64Payload, decodeBase64Payload, utf8Text } from '../../plugins/sdk.js';

/** One Plivo audio stream WebSocket message as a `MediaMessage`. */
export function parsePlivoMediaMessage(data: Uint8Array, isBinary: boolean): MediaMessage {
  if (isBinary) return { kind: 'ignored', reason: 'binary frame (Plivo sends JSON text)' };
  // one per 20 ms per call: the media message's fast path, the full parse for everything else
  const fast = fastMediaAudio(data, allocPayload);
  if (fast) return fast;
  const read = readJsonMessage(utf8Text(data));
  if ('ignored' in read) return read.ignored;
  const m = read.message;
  const event = str(m.event);
  switch (event) {
    case 'start': {
      const s = obj(m.start);
      if (!s) return { kind: 'ignored', reason: 'start without a start object' };
      const format = mediaFormatOf(s.mediaFormat, ['sampleRate', 'sample_rate']);
      if (!format) return { kind: 'ignored', reason: 'start without a readable mediaFormat' };
      const start: MediaStart = { tracks: startTracks(s.tracks), format, parameters: Object.create(null) as Record<string, string> };
      const streamId = str(s.streamId) ?? str(m.streamId);
      if (streamId) start.streamId = streamId;
      const callId = str(s.callId);
      if (callId) start.providerCallId = callId;
      return { kind: 'start', start };
    }
    case 'media':
      return mediaAudio(m.media, decodeBase64Payload);
    case 'playedStream': {
      const name = str(m.name);
      return name ? { kind: 'mark', name } : { kind: 'ignored', reason: 'playedStream without a name' };
    }
    case 'clearedAudio':
      return { kind: 'cleared' };
    case 'dtmf':
      return dtmfDigit(m.dtmf);
    case 'stop':
      return { kind: 'stop' };
    default:
      return unknownEvent(event);
  }
}

/** One outbound message in Plivo's shape (docs: plivo.com/docs/voice/xml/the-stream-element, bidirectional). */
export function serializePlivoMediaMessage(message: OutboundMedia, stream: MediaStreamIds): WireFrame[] {
  const streamId = stream.streamId ?? '';
  switch (message.kind) {
    case 'audio':
      // one per 20 ms frame: a template (base64 needs no escaping) instead of building and serializing an object
      return [{ data: `{"event":"playAudio","media":{"contentType":"audio/x-mulaw","sampleRate":8000,"payload":"${base64Payload(message.payload)}"}}`, binary: false }];
    case 'mark':
      return [jsonFrame({ event: 'checkpoint', streamId, name: message.name })];
    case 'clear':
      return [jsonFrame({ event: 'clearAudio', streamId })];
    case 'hangup':
      return []; // the <Stream keepCallAlive> is the whole answer: closing it ends the call
  }
}

/**
 * Plivo: the token is on the URL; a `start` means the call is connected (Plivo sends no "answered" callback of
 * its own, so this is what moves an outbound run to `in_progress`). The stream's end never ends the run here:
 * outbound calls have their hangup URL and inbound streams their `<Stream>` status callback
 * (providers/plivo/plivo.provider.ts), so the end is not applied twice.
 */
export const plivoMediaFraming: MediaFraming = Object.freeze({
  provider: 'plivo',
  media: plivoMedia,
  parse: parsePlivoMediaMessage,
  serialize: serializePlivoMediaMessage,
  tokenIn: 'query' as const,
  startMeansInProgress: true,
  stopMeansCompleted: false,
});
