/**
 * Twilio Media Streams framing: JSON text messages `connected`, `start` (streamSid, callSid, tracks,
 * mediaFormat audio/x-mulaw 8000 1, customParameters), `media` (track inbound/outbound, base64 μ-law
 * payload), `dtmf`, `mark` and `stop`. Pure; never throws. The media token travels as the `<Stream>`'s
 * `<Parameter name="token">` (Twilio refuses query strings on stream URLs) and arrives in `start.customParameters`.
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
  const sampleRate = Number(f.sampleRate);
  const channels = f.channels === undefined ? 1 : Number(f.channels);
  if (typeof f.encoding !== 'string' || !Number.isInteger(sampleRate) || !Number.isInteger(channels)) return null;
  return { encoding: f.encoding, sampleRate, channels };
}

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
  let m: Json | null;
  try {
    m = obj(JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')));
  } catch {
    return { kind: 'ignored', reason: 'not JSON' };
  }
  if (!m) return { kind: 'ignored', reason: 'not a JSON object' };
  const event = str(m.event);
  switch (event) {
    case 'connected':
      return { kind: 'connected' };
    case 'start': {
      const s = obj(m.start);
      if (!s) return { kind: 'ignored', reason: 'start without a start object' };
      const format = mediaFormat(s.mediaFormat);
      if (!format) return { kind: 'ignored', reason: 'start without a readable mediaFormat' };
      const tracks = Array.isArray(s.tracks) ? s.tracks.map(track).filter((t): t is MediaTrack => t !== null) : [];
      const start: MediaStart = { tracks: tracks.length > 0 ? tracks : ['inbound'], format, parameters: parameters(s.customParameters) };
      const streamId = str(s.streamSid) ?? str(m.streamSid);
      if (streamId) start.streamId = streamId;
      const callSid = str(s.callSid);
      if (callSid) start.providerCallId = callSid;
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
    case 'mark': {
      const name = str(obj(m.mark)?.name);
      return name ? { kind: 'mark', name } : { kind: 'ignored', reason: 'mark without a name' };
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
