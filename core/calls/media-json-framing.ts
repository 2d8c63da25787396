/**
 * Steps shared by media framings whose messages are JSON text with an `event` name and base64 audio
 * (Twilio Media Streams, Plivo Audio Streaming): reading the object, its tracks, its media format, a `media`
 * message's audio and a `dtmf` digit. Each framing (providers/<id>/<id>-media.ts) keeps its own events, field
 * names and what its `start` carries. Pure and platform-free: decoding bytes (UTF-8, base64) is the caller's.
 */
import type { MediaFormat, MediaMessage, MediaTrack, WireFrame } from './media-session.js';

export type JsonObject = Record<string, unknown>;

/** `v` when it is a plain JSON object (not an array), else null. */
export const jsonObject = (v: unknown): JsonObject | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : null);

/** `v` when it is a non-empty string, else undefined. */
export const nonEmptyString = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Base64 a decoder can read whole: only the alphabet, at most two `=` at the end, no dangling sixth bits. */
export const isBase64Payload = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v) && v.length % 4 !== 1;

/** `inbound`/`inbound_track` and `outbound`/`outbound_track`; null for anything else. */
export function mediaTrack(v: unknown): MediaTrack | null {
  if (v === 'inbound' || v === 'inbound_track') return 'inbound';
  if (v === 'outbound' || v === 'outbound_track') return 'outbound';
  return null;
}

/** A `start`'s track list, unknown names dropped; `['inbound']` when none is left. */
export function startTracks(v: unknown): MediaTrack[] {
  const tracks = Array.isArray(v) ? v.map(mediaTrack).filter((t): t is MediaTrack => t !== null) : [];
  return tracks.length > 0 ? tracks : ['inbound'];
}

/**
 * `{encoding, sampleRate, channels}` from a media format object (channels default 1); null when the encoding
 * is not a string or a number is not an integer. The sample rate is the first of `sampleRateKeys` that is set
 * (`??`), so a vendor spelling it two ways lists both.
 */
export function mediaFormatOf(v: unknown, sampleRateKeys: readonly [string, ...string[]] = ['sampleRate']): MediaFormat | null {
  const f = jsonObject(v);
  if (!f) return null;
  let rate = f[sampleRateKeys[0]];
  for (const key of sampleRateKeys.slice(1)) rate = rate ?? f[key];
  const sampleRate = Number(rate);
  const channels = f.channels === undefined ? 1 : Number(f.channels);
  if (typeof f.encoding !== 'string' || !Number.isInteger(sampleRate) || !Number.isInteger(channels)) return null;
  return { encoding: f.encoding, sampleRate, channels };
}

/** The message text as a JSON object, or the `ignored` message saying why it is not one. */
export function readJsonMessage(text: string): { message: JsonObject } | { ignored: MediaMessage } {
  let m: JsonObject | null;
  try {
    m = jsonObject(JSON.parse(text));
  } catch {
    return { ignored: { kind: 'ignored', reason: 'not JSON' } };
  }
  return m ? { message: m } : { ignored: { kind: 'ignored', reason: 'not a JSON object' } };
}

/** A `media` object (`track`, default inbound; base64 `payload`) as audio, decoded by `decodeBase64`. */
export function mediaAudio(media: unknown, decodeBase64: (payload: string) => Uint8Array): MediaMessage {
  const obj = jsonObject(media);
  const track = mediaTrack(obj?.track ?? 'inbound');
  const payload = obj?.payload;
  if (!track) return { kind: 'ignored', reason: 'media on an unknown track' };
  if (!isBase64Payload(payload)) return { kind: 'ignored', reason: 'media without a base64 payload' };
  return { kind: 'audio', track, payload: decodeBase64(payload) };
}

/** A `dtmf` object's `digit`. */
export function dtmfDigit(dtmf: unknown): MediaMessage {
  const digit = nonEmptyString(jsonObject(dtmf)?.digit);
  return digit ? { kind: 'dtmf', digit } : { kind: 'ignored', reason: 'dtmf without a digit' };
}

/** The `ignored` message for an event name a framing does not know (or no name at all). */
export const unknownEvent = (event: string | undefined): MediaMessage => ({ kind: 'ignored', reason: event ? `unknown event "${event.slice(0, 40)}"` : 'no event' });

/** A JSON text message to send. */
export const jsonFrame = (message: JsonObject): WireFrame => ({ data: JSON.stringify(message), binary: false });

/** A binary message to send. */
export const binaryFrame = (data: Uint8Array): WireFrame => ({ data, binary: true });

/**
 * A carrier's audio encoding name as the MIME-style name a `MediaFormat` carries (`PCMU` → `audio/x-mulaw`,
 * `PCMA` → `audio/x-alaw`, `L16` → `audio/l16`); other names are kept as they are.
 */
export function mimeEncoding(name: string): string {
  switch (name.toLowerCase()) {
    case 'pcmu': case 'ulaw': case 'mulaw': case 'g711_ulaw': case 'audio/x-mulaw':
      return 'audio/x-mulaw';
    case 'pcma': case 'alaw': case 'g711_alaw': case 'audio/x-alaw':
      return 'audio/x-alaw';
    case 'l16': case 'slin': case 'slin16': case 'audio/l16':
      return 'audio/l16';
    default:
      return name;
  }
}
