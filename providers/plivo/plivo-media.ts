/**
 * Plivo Audio Streaming framing: JSON text messages `start` (`start.callId`, `start.streamId`, `tracks`,
 * `mediaFormat` audio/x-mulaw 8000), `media` (`media.track` inbound/outbound, base64 μ-law `payload`), `dtmf`,
 * `playedStream` (a checkpoint we asked for: a mark), `clearedAudio` and `stop`. Pure; never throws. The media
 * token travels as `?token=` on the stream URL (our `<Stream>` element's text), checked before the upgrade.
 */
import type { MediaFormat, MediaFraming, MediaMessage, MediaStart, MediaTrack } from '../../core/calls/media-session.js';

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function track(v: unknown): MediaTrack | null {
  if (v === 'inbound' || v === 'inbound_track') return 'inbound';
  if (v === 'outbound' || v === 'outbound_track') return 'outbound';
  return null;
}

function mediaFormat(v: unknown): MediaFormat | null {
  const f = obj(v);
  if (!f) return null;
  const sampleRate = Number(f.sampleRate ?? f.sample_rate);
  const channels = f.channels === undefined ? 1 : Number(f.channels);
  if (typeof f.encoding !== 'string' || !Number.isInteger(sampleRate) || !Number.isInteger(channels)) return null;
  return { encoding: f.encoding, sampleRate, channels };
}

/** One Plivo audio stream WebSocket message as a `MediaMessage`. */
export function parsePlivoMediaMessage(data: Uint8Array, isBinary: boolean): MediaMessage {
  if (isBinary) return { kind: 'ignored', reason: 'binary frame (Plivo sends JSON text)' };
  let m: Json | null;
  try {
    m = obj(JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')));
  } catch {
    return { kind: 'ignored', reason: 'not JSON' };
  }
  if (!m) return { kind: 'ignored', reason: 'not a JSON object' };
  const event = str(m.event);
  switch (event) {
    case 'start': {
      const s = obj(m.start);
      if (!s) return { kind: 'ignored', reason: 'start without a start object' };
      const format = mediaFormat(s.mediaFormat);
      if (!format) return { kind: 'ignored', reason: 'start without a readable mediaFormat' };
      const tracks = Array.isArray(s.tracks) ? s.tracks.map(track).filter((t): t is MediaTrack => t !== null) : [];
      const start: MediaStart = { tracks: tracks.length > 0 ? tracks : ['inbound'], format, parameters: Object.create(null) as Record<string, string> };
      const streamId = str(s.streamId) ?? str(m.streamId);
      if (streamId) start.streamId = streamId;
      const callId = str(s.callId);
      if (callId) start.providerCallId = callId;
      return { kind: 'start', start };
    }
    case 'media': {
      const media = obj(m.media);
      const t = track(media?.track ?? 'inbound');
      const payload = media?.payload;
      if (!t) return { kind: 'ignored', reason: 'media on an unknown track' };
      if (typeof payload !== 'string' || !BASE64.test(payload) || payload.length % 4 === 1) return { kind: 'ignored', reason: 'media without a base64 payload' };
      return { kind: 'audio', track: t, payload: Buffer.from(payload, 'base64') };
    }
    case 'playedStream': {
      const name = str(m.name);
      return name ? { kind: 'mark', name } : { kind: 'ignored', reason: 'playedStream without a name' };
    }
    case 'dtmf': {
      const digit = str(obj(m.dtmf)?.digit);
      return digit ? { kind: 'dtmf', digit } : { kind: 'ignored', reason: 'dtmf without a digit' };
    }
    case 'stop':
      return { kind: 'stop' };
    default:
      return { kind: 'ignored', reason: event ? `unknown event "${event.slice(0, 40)}"` : 'no event' };
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
  parse: parsePlivoMediaMessage,
  tokenIn: 'query' as const,
  startMeansInProgress: true,
  stopMeansCompleted: false,
});
