/**
 * Vonage Voice WebSocket framing (developer.vonage.com/en/voice/voice-api/concepts/websockets): audio is
 * binary L16 (signed 16-bit little-endian PCM) at 16 kHz, 640-byte frames of 20 ms, both ways. Text frames
 * are JSON: the first is `{"event": "websocket:connected", "content-type": "audio/l16;rate=16000", ...}` with
 * the `headers` our NCCO set (`run_id`) at the top level; later ones are `websocket:cleared` (the answer to
 * our `{"action": "clear"}`), `websocket:dtmf` (`digit`) and `websocket:notify`. Vonage has no marks we rely
 * on: the channel emulates them from its playout clock. Closing the socket ends the `connect` leg and with it
 * the call (our NCCO has nothing after it). Pure; never throws. The media token travels as `?token=` on the
 * WebSocket URI.
 */
import { binaryFrame, jsonFrame, jsonObject as obj, nonEmptyString as str, readJsonMessage, unknownEvent } from '../../core/calls/media-json-framing.js';
import type { MediaFormat, MediaFraming, MediaMessage, MediaStreamIds, OutboundMedia, WireFrame } from '../../core/calls/media-session.js';
import { vonageMedia } from './vonage.manifest.js';

/** 20 ms of L16 at 16 kHz: the frame size Vonage sends and expects. */
export const VONAGE_FRAME_BYTES = 640;

/** `audio/l16;rate=16000` as a media format; null for anything else than L16. */
export function vonageContentFormat(contentType: unknown): MediaFormat | null {
  if (typeof contentType !== 'string') return null;
  const [type, ...params] = contentType.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'audio/l16') return null;
  const rate = params.map((p) => /^rate=(\d{4,6})$/.exec(p)?.[1]).find((r) => r !== undefined);
  return { encoding: 'audio/l16', sampleRate: rate ? Number(rate) : 16000, channels: 1 };
}

/** One Vonage WebSocket message as a `MediaMessage`. */
export function parseVonageMediaMessage(data: Uint8Array, isBinary: boolean): MediaMessage {
  if (isBinary) {
    if (data.length % 2 !== 0) return { kind: 'ignored', reason: 'binary frame of an odd length (L16 needs whole samples)' };
    return { kind: 'audio', track: 'inbound', payload: data };
  }
  const read = readJsonMessage(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  if ('ignored' in read) return read.ignored;
  const m = read.message;
  const event = str(m.event);
  switch (event) {
    case 'websocket:connected': {
      const format = vonageContentFormat(m['content-type']);
      if (!format) return { kind: 'ignored', reason: 'websocket:connected without an audio/l16 content-type' };
      const parameters = Object.create(null) as Record<string, string>;
      for (const [k, v] of Object.entries(m)) if (k !== 'event' && k !== 'content-type' && typeof v === 'string') parameters[k] = v;
      const start: Extract<MediaMessage, { kind: 'start' }>['start'] = { tracks: ['inbound'], format, parameters };
      const uuid = str(m.uuid);
      if (uuid) start.providerCallId = uuid;
      return { kind: 'start', start };
    }
    case 'websocket:cleared':
      return { kind: 'cleared' };
    case 'websocket:dtmf': {
      const digit = str(m.digit) ?? str(obj(m.dtmf)?.digit);
      return digit ? { kind: 'dtmf', digit } : { kind: 'ignored', reason: 'dtmf without a digit' };
    }
    case 'websocket:notify':
      return { kind: 'ignored', reason: 'notify (marks are emulated)' };
    default:
      return unknownEvent(event);
  }
}

/** One outbound message: audio as binary L16 (the channel cuts it into 640-byte frames), clear as `{"action":"clear"}`. */
export function serializeVonageMediaMessage(message: OutboundMedia, _stream: MediaStreamIds): WireFrame[] {
  switch (message.kind) {
    case 'audio':
      return [binaryFrame(message.payload)];
    case 'clear':
      return [jsonFrame({ action: 'clear' })];
    case 'mark':
    case 'hangup':
      return [];
  }
}

/**
 * Vonage: the token is on the URL. Its event webhooks report the call's answer and end (vonage.provider.ts),
 * so the stream's start and end move nothing.
 */
export const vonageMediaFraming: MediaFraming = Object.freeze({
  provider: 'vonage',
  media: vonageMedia,
  parse: parseVonageMediaMessage,
  serialize: serializeVonageMediaMessage,
  outFrameBytes: VONAGE_FRAME_BYTES,
  tokenIn: 'query' as const,
  startMeansInProgress: false,
  stopMeansCompleted: false,
});
