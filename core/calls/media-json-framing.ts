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

// The fast path of the JSON framings' `media` message (docs/voice.md "Audio path"): byte values it compares with.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const EQUALS = 0x3d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** Deeper values than this are left to the full parse (nested values are skipped with a loop, not recursion). */
const MAX_SKIP_DEPTH = 64;

/** Each base64 character's 6 bits by its byte value; -1 for a byte outside the alphabet. */
const BASE64_VALUES = (() => {
  const t = new Int32Array(256).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let k = 0; k < alphabet.length; k++) t[alphabet.charCodeAt(k)] = k;
  return t;
})();

const isWs = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);

function skipWs(b: Uint8Array, i: number): number {
  const n = b.length;
  while (i < n && isWs(b[i]!)) i++;
  return i;
}

/**
 * The end (index after the closing quote) of the JSON string opening at `b[i]` (a quote), or -1 when it is not
 * one the full parse reads: a raw control character, an unknown escape, no closing quote; with `plain`, also any
 * escape at all (a key or value the fast path compares must be its bytes as they are). Bytes from 0x80 are string
 * content: UTF-8 decoding makes them characters from U+0080 (never a quote or a backslash) and never swallows an
 * ASCII byte after them.
 */
function stringEnd(b: Uint8Array, i: number, plain: boolean): number {
  const n = b.length;
  for (i++; i < n; ) {
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    if (c !== BACKSLASH) {
      i++;
      continue;
    }
    if (plain || i + 1 >= n) return -1;
    const e = b[i + 1]!;
    if (e === 0x75) {
      // \uXXXX
      if (i + 5 >= n || !isHex(b[i + 2]!) || !isHex(b[i + 3]!) || !isHex(b[i + 4]!) || !isHex(b[i + 5]!)) return -1;
      i += 6;
      continue;
    }
    // \" \\ \/ \b \f \n \r \t
    if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) return -1;
    i += 2;
  }
  return -1;
}

/** The end of the JSON number at `b[i]` (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`), or -1. */
function numberEnd(b: Uint8Array, i: number): number {
  const n = b.length;
  if (i < n && b[i] === 0x2d) i++;
  if (i < n && b[i] === 0x30) i++;
  else if (i < n && isDigit(b[i]!)) while (i < n && isDigit(b[i]!)) i++;
  else return -1;
  if (i < n && b[i] === 0x2e) {
    i++;
    if (!(i < n && isDigit(b[i]!))) return -1;
    while (i < n && isDigit(b[i]!)) i++;
  }
  if (i < n && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < n && (b[i] === 0x2b || b[i] === 0x2d)) i++;
    if (!(i < n && isDigit(b[i]!))) return -1;
    while (i < n && isDigit(b[i]!)) i++;
  }
  return i;
}

/** Whether the bytes from `start` to `end` are exactly `word` (ASCII). */
function bytesAre(b: Uint8Array, start: number, end: number, word: string): boolean {
  if (end - start !== word.length || end > b.length) return false;
  for (let k = 0; k < word.length; k++) if (b[start + k] !== word.charCodeAt(k)) return false;
  return true;
}

/** The end of a scalar (string, number, true, false, null) at `b[i]`, or -1 (also for an object or array). */
function scalarEnd(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i, false);
  if (c === 0x74) return bytesAre(b, i, i + 4, 'true') ? i + 4 : -1;
  if (c === 0x66) return bytesAre(b, i, i + 5, 'false') ? i + 5 : -1;
  if (c === 0x6e) return bytesAre(b, i, i + 4, 'null') ? i + 4 : -1;
  return numberEnd(b, i);
}

/** The index after `"key" :` (whitespace after it skipped) for a key opening at `b[i]`; -1 when there is none. */
function afterKey(b: Uint8Array, i: number, plain: boolean): number {
  if (b[i] !== QUOTE) return -1;
  i = stringEnd(b, i, plain);
  if (i < 0) return -1;
  i = skipWs(b, i);
  return b[i] === COLON ? skipWs(b, i + 1) : -1;
}

/**
 * The end of the JSON value at `b[i]`, or -1 when the full parse refuses it or it nests deeper than
 * MAX_SKIP_DEPTH. Objects and arrays are walked with a stack of what each open one is (true: an object).
 */
function valueEnd(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c !== OPEN_BRACE && c !== OPEN_BRACKET) return scalarEnd(b, i);
  const open: boolean[] = [];
  let atValue = true; // after '[', ':' or an array's ','
  for (;;) {
    i = skipWs(b, i);
    if (atValue) {
      const v = b[i];
      if (v === OPEN_BRACE || v === OPEN_BRACKET) {
        if (open.length === MAX_SKIP_DEPTH) return -1;
        const object = v === OPEN_BRACE;
        i = skipWs(b, i + 1);
        if (b[i] === (object ? CLOSE_BRACE : CLOSE_BRACKET)) {
          i++;
          atValue = false;
          if (open.length === 0) return i;
          continue;
        }
        open.push(object);
        if (object && (i = afterKey(b, i, false)) < 0) return -1;
        continue;
      }
      if ((i = scalarEnd(b, i)) < 0) return -1;
      atValue = false;
      continue;
    }
    const object = open[open.length - 1]!;
    const d = b[i];
    if (d === COMMA) {
      i = skipWs(b, i + 1);
      if (object && (i = afterKey(b, i, false)) < 0) return -1;
      atValue = true;
      continue;
    }
    if (d !== (object ? CLOSE_BRACE : CLOSE_BRACKET)) return -1;
    open.pop();
    i++;
    if (open.length === 0) return i;
  }
}

/**
 * The bytes of the base64 text in `b` from `start` to `end` when `isBase64Payload` accepts it as text (the
 * alphabet, at most two `=` at the end, a length not 1 more than a multiple of 4), decoded as Node's decoder
 * does (four characters give three bytes, a last two or three give one or two, bits left over are dropped)
 * into `alloc(length)`; null when it is not such base64. Validates and decodes in one pass over the message's
 * own bytes, so the payload never becomes a string.
 */
export function base64SpanBytes(b: Uint8Array, start: number, end: number, alloc: (length: number) => Uint8Array): Uint8Array | null {
  if ((end - start) % 4 === 1) return null;
  let data = end;
  if (data > start && b[data - 1] === EQUALS) data--;
  if (data > start && b[data - 1] === EQUALS) data--;
  const n = data - start;
  const out = alloc((n * 3) >> 2);
  const t = BASE64_VALUES;
  let bad = 0; // a -1 from the table sets the sign bit
  let o = 0;
  let i = start;
  for (const whole = start + (n & ~3); i < whole; i += 4) {
    const c0 = t[b[i]!]!;
    const c1 = t[b[i + 1]!]!;
    const c2 = t[b[i + 2]!]!;
    const c3 = t[b[i + 3]!]!;
    bad |= c0 | c1 | c2 | c3;
    const v = (c0 << 18) | (c1 << 12) | (c2 << 6) | c3;
    out[o] = v >> 16;
    out[o + 1] = v >> 8;
    out[o + 2] = v;
    o += 3;
  }
  const rest = data - i;
  if (rest === 1) bad |= t[b[i]!]!;
  else if (rest >= 2) {
    const c0 = t[b[i]!]!;
    const c1 = t[b[i + 1]!]!;
    const c2 = rest === 3 ? t[b[i + 2]!]! : 0;
    bad |= c0 | c1 | c2;
    const v = (c0 << 18) | (c1 << 12) | (c2 << 6);
    out[o] = v >> 16;
    if (rest === 3) out[o + 1] = v >> 8;
  }
  return bad < 0 ? null : out;
}

/**
 * The fast path of a JSON framing's most frequent message, one per 20 ms per call: a `media` message on a known
 * track with a base64 payload, read from the message's bytes without decoding them as text or `JSON.parse` of the
 * whole message (no objects, no strings made), its payload decoded by `base64SpanBytes` into `alloc(length)`.
 * It reads the shape the full parse reads (`{"event":"media","media":{"track"?,"payload"}}` in any key order,
 * with any whitespace and any other members) and checks that the whole message is JSON, so what it returns is
 * what `readJsonMessage` + `mediaAudio` return for the same bytes. Anything it does not take as it is gives null,
 * for the full parse: another event, an escape in a key or in the event, track or payload, a repeated
 * `event`/`media`/`track`/`payload` (the full parse keeps the last), a `media` that is not an object, a track
 * that is not one of the four names, a payload that is not plain base64, a byte from 0x80 outside a string,
 * values nested deeper than 64, anything that is not JSON.
 */
export function fastMediaAudio(b: Uint8Array, alloc: (length: number) => Uint8Array): MediaMessage | null {
  let i = skipWs(b, 0);
  if (b[i] !== OPEN_BRACE) return null;
  let eventSeen = false; // and it was "media": any other event returns at once
  let mediaSeen = false;
  let trackSeen = false;
  let track: MediaTrack = 'inbound';
  let payload: Uint8Array | null = null;
  // 0: the top object's members; 1: the media object's
  let depth = 0;
  i = skipWs(b, i + 1);
  if (b[i] === CLOSE_BRACE) return null; // {}: no event
  for (;;) {
    if (b[i] !== QUOTE) return null;
    const keyStart = i + 1;
    i = stringEnd(b, i, true);
    if (i < 0) return null;
    const keyEnd = i - 1;
    i = skipWs(b, i);
    if (b[i] !== COLON) return null;
    const v = skipWs(b, i + 1);
    if (depth === 0 && bytesAre(b, keyStart, keyEnd, 'event')) {
      if (eventSeen || b[v] !== QUOTE) return null;
      eventSeen = true;
      i = stringEnd(b, v, true);
      if (i < 0) return null;
      if (!bytesAre(b, v + 1, i - 1, 'media')) return null;
    } else if (depth === 0 && bytesAre(b, keyStart, keyEnd, 'media')) {
      if (mediaSeen || b[v] !== OPEN_BRACE) return null;
      mediaSeen = true;
      i = skipWs(b, v + 1);
      if (b[i] === CLOSE_BRACE) return null; // {}: no payload
      depth = 1;
      continue;
    } else if (depth === 1 && bytesAre(b, keyStart, keyEnd, 'payload')) {
      if (payload || b[v] !== QUOTE) return null;
      // base64 has no quote, backslash or control character: the next quote ends it, or it is not base64
      i = b.indexOf(QUOTE, v + 1);
      if (i < 0) return null;
      payload = base64SpanBytes(b, v + 1, i, alloc);
      if (!payload) return null;
      i++;
    } else if (depth === 1 && bytesAre(b, keyStart, keyEnd, 'track')) {
      if (trackSeen || b[v] !== QUOTE) return null;
      trackSeen = true;
      i = stringEnd(b, v, true);
      if (i < 0) return null;
      // mediaTrack's four names
      if (bytesAre(b, v + 1, i - 1, 'inbound') || bytesAre(b, v + 1, i - 1, 'inbound_track')) track = 'inbound';
      else if (bytesAre(b, v + 1, i - 1, 'outbound') || bytesAre(b, v + 1, i - 1, 'outbound_track')) track = 'outbound';
      else return null;
    } else {
      i = valueEnd(b, v);
      if (i < 0) return null;
    }
    i = skipWs(b, i);
    if (b[i] === COMMA) {
      i = skipWs(b, i + 1);
      continue;
    }
    if (b[i] !== CLOSE_BRACE) return null;
    i = skipWs(b, i + 1);
    if (depth === 1) {
      depth = 0;
      if (b[i] === COMMA) {
        i = skipWs(b, i + 1);
        continue;
      }
      if (b[i] !== CLOSE_BRACE) return null;
      i = skipWs(b, i + 1);
    }
    break;
  }
  if (i !== b.length || !eventSeen || !payload) return null;
  return { kind: 'audio', track, payload };
}
