/**
 * Asterisk chan_websocket framing (docs.asterisk.org/Configuration/Channel-Drivers/WebSocket): the media of an
 * ARI `externalMedia` channel with `transport=websocket` (Asterisk 20.16, 21.11, 22.6, 23.0 and later),
 * connecting out to us through a `websocket_client.conf` connection (the manifest's `ws_client_name`), format
 * `ulaw`. BINARY frames are audio in the channel's format, both ways (Asterisk re-frames and times what we
 * send, and plays silence when we send nothing). TEXT frames are control messages, in the plain-text form
 * (`MEDIA_START connection_id:<id> channel:<name> format:ulaw optimal_frame_size:160 ptime:20`, the
 * default) or the JSON form (`{"event": "MEDIA_START", ...}`, `control_message_format=json`); both are read.
 * We send plain text, which every version accepts: `MARK_MEDIA correlation_id:<name>` (answered with
 * `MEDIA_MARK_PROCESSED` once the media before it has been played), `FLUSH_MEDIA` (drops queued media) and
 * `HANGUP`. Mark names are URI-encoded on the wire (a plain-text parameter cannot hold a space).
 * Pure; never throws. The media token travels as `?token=` (the dial string's `v(token=...)`).
 */
import { binaryFrame, jsonObject as obj, mimeEncoding, nonEmptyString as str, unknownEvent } from '../../core/calls/media-json-framing.js';
import type { MediaFormat, MediaFraming, MediaMessage, MediaStart, MediaStreamIds, OutboundMedia, WireFrame } from '../../core/calls/media-session.js';
import { ariMedia } from './ari.manifest.js';

const text = (data: string): WireFrame => ({ data, binary: false });

/** An Asterisk format name (`ulaw`, `alaw`, `slin`, `slin16`, …) as a media format; null when unknown. */
export function asteriskFormat(name: string): MediaFormat | null {
  const n = name.toLowerCase();
  if (n === 'ulaw' || n === 'alaw') return { encoding: mimeEncoding(n), sampleRate: 8000, channels: 1 };
  const slin = /^slin(\d+)?$/.exec(n);
  if (slin) return { encoding: 'audio/l16', sampleRate: slin[1] ? Number(slin[1]) * 1000 : 8000, channels: 1 };
  return null;
}

/** A control message's event name and parameters, from either form; null when it is neither. */
function readControl(textData: string): { event: string; params: Record<string, unknown> } | null {
  const trimmed = textData.trim();
  if (trimmed.startsWith('{')) {
    try {
      const m = obj(JSON.parse(trimmed));
      const event = str(m?.event);
      return m && event ? { event, params: m } : null;
    } catch {
      return null;
    }
  }
  const [event, ...rest] = trimmed.split(/\s+/);
  if (!event || !/^[A-Z_]+$/.test(event)) return null;
  const params: Record<string, unknown> = {};
  for (const p of rest) {
    const i = p.indexOf(':');
    if (i > 0) params[p.slice(0, i)] = p.slice(i + 1);
  }
  return { event, params };
}

const decodeName = (v: string): string => {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
};

/** One chan_websocket message as a `MediaMessage`. */
export function parseAriMediaMessage(data: Uint8Array, isBinary: boolean): MediaMessage {
  if (isBinary) return { kind: 'audio', track: 'inbound', payload: data };
  const control = readControl(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  if (!control) return { kind: 'ignored', reason: 'not a chan_websocket control message' };
  const { event, params } = control;
  switch (event) {
    case 'MEDIA_START': {
      const format = asteriskFormat(String(params.format ?? ''));
      if (!format) return { kind: 'ignored', reason: 'MEDIA_START without a known format' };
      const parameters = Object.create(null) as Record<string, string>;
      const vars = obj(params.channel_variables);
      if (vars) for (const [k, v] of Object.entries(vars)) if (typeof v === 'string') parameters[k] = v;
      const start: MediaStart = { tracks: ['inbound'], format, parameters };
      const connectionId = str(params.connection_id);
      if (connectionId) start.streamId = connectionId;
      const channel = str(params.channel_id) ?? str(params.channel);
      if (channel) start.providerCallId = channel;
      return { kind: 'start', start };
    }
    case 'MEDIA_MARK_PROCESSED': {
      const name = str(params.correlation_id);
      return name ? { kind: 'mark', name: decodeName(name) } : { kind: 'ignored', reason: 'MEDIA_MARK_PROCESSED without a correlation_id' };
    }
    case 'DTMF_END': {
      const digit = str(params.digit);
      return digit ? { kind: 'dtmf', digit } : { kind: 'ignored', reason: 'DTMF_END without a digit' };
    }
    case 'MEDIA_XOFF':
    case 'MEDIA_XON':
    case 'QUEUE_DRAINED':
    case 'STATUS':
    case 'MEDIA_BUFFERING_COMPLETED':
    case 'DTMF_BEGIN':
      return { kind: 'ignored', reason: `${event} (informational)` };
    default:
      return unknownEvent(event);
  }
}

/** One outbound message: binary audio or a plain-text command. */
export function serializeAriMediaMessage(message: OutboundMedia, _stream: MediaStreamIds): WireFrame[] {
  switch (message.kind) {
    case 'audio':
      return [binaryFrame(message.payload)];
    case 'mark':
      return [text(`MARK_MEDIA correlation_id:${encodeURIComponent(message.name)}`)];
    case 'clear':
      return [text('FLUSH_MEDIA')];
    case 'hangup':
      return [text('HANGUP')];
  }
}

/**
 * ARI: the token is on the URL; the call's statuses come from ARI events (ari.provider.ts), so the stream's
 * start and end move nothing.
 */
export const ariMediaFraming: MediaFraming = Object.freeze({
  provider: 'ari',
  media: ariMedia,
  parse: parseAriMediaMessage,
  serialize: serializeAriMediaMessage,
  tokenIn: 'query' as const,
  startMeansInProgress: false,
  stopMeansCompleted: false,
});
