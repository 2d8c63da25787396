import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { base64SpanBytes, fastMediaAudio, isBase64Payload, mediaAudio, nonEmptyString, readJsonMessage } from './media-json-framing.js';
import type { MediaMessage } from './media-session.js';
import { prng as rng } from '../../test/support/prng.js';

const enc = new TextEncoder();
const bytes = (s: string): Uint8Array => enc.encode(s);
const alloc = (n: number): Uint8Array => new Uint8Array(n);
/** A message with its audio as a plain array, so a Buffer and a Uint8Array of the same bytes compare equal. */
const comparable = (m: MediaMessage | null) => (m?.kind === 'audio' ? { ...m, payload: Array.from(m.payload) } : m);

/** What the full parse makes of a message's bytes when it is a `media` message; null for anything else. */
function fullParse(data: Uint8Array): MediaMessage | null {
  const read = readJsonMessage(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'));
  if ('ignored' in read) return null;
  if (nonEmptyString(read.message.event) !== 'media') return null;
  return mediaAudio(read.message.media, (payload) => Buffer.from(payload, 'base64'));
}

/** The fast path's answer must be the full parse's whenever it gives one. Returns whether it gave one. */
function agrees(data: Uint8Array): boolean {
  const fast = fastMediaAudio(data, alloc);
  if (fast === null) return false;
  const text = Buffer.from(data).toString('latin1');
  expect({ text, parsed: comparable(fullParse(data)) }).toEqual({ text, parsed: comparable(fast) });
  return true;
}

/** Every inbound text message of the JSON framings' recorded fixtures (providers/<id>/fixtures/media/stream.json). */
function fixtureMessages(): string[] {
  const out: string[] = [];
  const root = new URL('../../providers/', import.meta.url);
  for (const id of readdirSync(root)) {
    let fixture: { inbound: Array<{ wire: { json?: unknown; text?: string } }> };
    try {
      fixture = JSON.parse(readFileSync(new URL(`${id}/fixtures/media/stream.json`, root), 'utf8')) as typeof fixture;
    } catch {
      continue;
    }
    for (const m of fixture.inbound) {
      if (m.wire.json !== undefined) out.push(JSON.stringify(m.wire.json));
      else if (m.wire.text !== undefined) out.push(m.wire.text);
    }
  }
  return out;
}

const PAYLOAD = Buffer.from(Array.from({ length: 160 }, (_, k) => (k * 37) & 0xff)).toString('base64');
// the media messages as each carrier sends them (field order and values as in their docs and our fixtures)
const REAL = [
  `{"event":"media","sequenceNumber":"3","media":{"track":"inbound","chunk":"1","timestamp":"5","payload":"${PAYLOAD}"},"streamSid":"MZ18ad3ab5a668481ce02b83e7395059f0"}`,
  `{"event":"media","sequence_number":"4","media":{"track":"inbound","chunk":"2","timestamp":"5","payload":"${PAYLOAD}"},"stream_id":"32de0dea-53cb-4b21-89a4-9e1f1ab1a3c4"}`,
  `{"event":"media","sequenceNumber":1,"streamId":"b77e037d-4119-44b5-902d-25826b654539","media":{"track":"inbound","timestamp":"1720000000000","chunk":1,"payload":"${PAYLOAD}"},"extra_headers":"{\\"a\\":\\"b\\"}"}`,
  `{"event":"media","streamSid":"s","media":{"payload":"${PAYLOAD}"}}`,
];

describe('the media message fast path', () => {
  it('takes every media message the carriers send, with the audio the full parse gives', () => {
    for (const text of REAL) expect(agrees(bytes(text))).toBe(true);
    const media = fixtureMessages().filter((t) => fullParse(bytes(t))?.kind === 'audio');
    expect(media.length).toBeGreaterThanOrEqual(4);
    for (const text of media) expect(agrees(bytes(text))).toBe(true);
  });

  it('reads the track (inbound when none) and the payload in any key order and whitespace', () => {
    const fast = (t: string) => comparable(fastMediaAudio(bytes(t), alloc));
    expect(fast(' {\n\t"media" : { "payload" : "AAE=" , "track" : "outbound_track" } ,\r"event" : "media" } \n')).toEqual({ kind: 'audio', track: 'outbound', payload: [0, 1] });
    expect(fast('{"media":{"payload":""},"event":"media"}')).toEqual({ kind: 'audio', track: 'inbound', payload: [] });
    expect(fast('{"event":"media","x":[1,-2.5e+3,{"y":[true,false,null,"\\u00e9\\n"]},[]],"media":{"a":{},"payload":"AAE="}}')).toEqual({ kind: 'audio', track: 'inbound', payload: [0, 1] });
    expect(fast('{"event":"media","name":"caf\u00e9 \u2603","media":{"track":"inbound_track","payload":"//8"}}')).toEqual({ kind: 'audio', track: 'inbound', payload: [255, 255] });
  });

  it('leaves to the full parse whatever it does not take as it is', () => {
    const fallbacks = [
      '{"event":"start","media":{"payload":"AAE="}}', // another event
      '{"event":"mark","mark":{"name":"m"}}',
      '{"\\u0065vent":"media","media":{"payload":"AAE="}}', // an escaped key: the full parse reads it as "event"
      '{"event":"medi\\u0061","media":{"payload":"AAE="}}', // an escaped event
      '{"event":"media","media":{"payload":"AA\\/E"}}', // an escaped payload ("AA/E")
      '{"event":"media","media":{"track":"inbo\\u0075nd","payload":"AAE="}}',
      '{"event":"media","event":"stop","media":{"payload":"AAE="}}', // the full parse keeps the last event
      '{"event":"media","media":{"payload":"AAE="},"media":{"payload":"AAAA"}}',
      '{"event":"media","media":{"payload":"AAE=","payload":"AAAA"}}',
      '{"event":"media","media":{"track":"outbound","track":"inbound","payload":"AAE="}}',
      '{"event":"media","media":{"track":null,"payload":"AAE="}}', // null ?? 'inbound': the full parse says inbound
      '{"event":"media","media":{"track":"both","payload":"AAE="}}', // an unknown track
      '{"event":"media","media":{"track":1,"payload":"AAE="}}',
      '{"event":"media","media":{"payload":"A"}}', // not base64 a decoder reads whole
      '{"event":"media","media":{"payload":"AA=A"}}',
      '{"event":"media","media":{"payload":3}}',
      '{"event":"media","media":{}}', // no payload
      '{"event":"media"}', // no media
      '{"event":"media","media":["AAE="]}',
      '{"event":"media","media":null}',
      '{"event":"media","media":{"payload":"AAE="}} x', // not JSON
      '{"event":"media","media":{"payload":"AAE="},}',
      '{"event":"media","media":{"payload":"AAE="}',
      '{"event":"media","media":{"payload":"AAE="}, "n": 01}',
      '{"event":"media","media":{"payload":"AAE="}, "n": 1.}',
      '{"event":"media","media":{"payload":"AAE="}, "n": tru}',
      '{"event":"media","media":{"payload":"AAE="}, "s": "\\x"}',
      '{"event":"media","media":{"payload":"AAE="}, "s": "a\tb"}', // a raw control character in a string
      '\ufeff{"event":"media","media":{"payload":"AAE="}}', // a byte-order mark
      '{"event":"media","media":{"payload":"AAE="},"deep":' + '['.repeat(70) + ']'.repeat(70) + '}', // deeper than it walks
      '[{"event":"media","media":{"payload":"AAE="}}]',
      '',
    ];
    for (const text of fallbacks) expect({ text, fast: fastMediaAudio(bytes(text), alloc) }).toEqual({ text, fast: null });
    // and nesting it walks is read
    expect(fastMediaAudio(bytes('{"event":"media","media":{"payload":"AAE="},"deep":' + '['.repeat(60) + ']'.repeat(60) + '}'), alloc)).not.toBeNull();
  });

  it('agrees with the full parse on generated and mangled messages', () => {
    const random = rng(12);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    // mostly JSON, sometimes not (whitespace JSON does not allow, bad escapes, control characters, bad numbers)
    const rare = () => random() < 0.004;
    const ws = () => (rare() ? pick(['\u000b', '\u00a0', '\f']) : pick(['', '', '', ' ', '\n', '\t', '\r\n  ']));
    const str = () => (rare() ? pick(['"\\q"', '"\u0001"', '"\\u12"', '"a']) : pick(['"x"', '"media"', '"inbound"', '"\\u0041"', '"a\\"b"', '""', '"caf\u00e9"', '"\\/\\\\"']));
    const scalar = () => (rare() ? pick(['01', '1.', '-', 'nul', '+1', '.5', '1e']) : pick(['1', '-0', '0.5e-3', '12E+2', 'true', 'false', 'null', str(), str()]));
    const value = (depth: number): string => {
      const r = random();
      if (depth > 2 || r < 0.6) return scalar();
      if (r < 0.8) return `[${Array.from({ length: Math.floor(random() * 3) }, () => ws() + value(depth + 1) + ws()).join(',')}]`;
      return `{${Array.from({ length: Math.floor(random() * 3) }, () => `${ws()}${str()}${ws()}:${ws()}${value(depth + 1)}`).join(',')}}`;
    };
    const payloads = [PAYLOAD, 'AAE=', 'AA==', 'AAA', 'AA', '', 'A', '=', '==', 'AA=A', '@@', 'AA\\/A', '////', 'AAAAA=', 'A==='];
    const member = (key: string, v: string) => `${ws()}"${key}"${ws()}:${ws()}${v}${ws()}`;
    const message = (): string => {
      const media: string[] = [];
      if (random() < 0.9) media.push(member('payload', random() < 0.9 ? `"${pick(payloads)}"` : scalar()));
      if (random() < 0.6) media.push(member('track', random() < 0.85 ? `"${pick(['inbound', 'outbound', 'inbound_track', 'outbound_track', 'both', ''])}"` : scalar()));
      for (const key of ['chunk', 'timestamp', 'x']) if (random() < 0.4) media.push(member(key, value(1)));
      if (random() < 0.05) media.push(member(pick(['payload', 'track']), `"AAAA"`));
      media.sort(() => random() - 0.5);
      const top: string[] = [];
      if (random() < 0.95) top.push(member(random() < 0.95 ? 'event' : 'ev\\u0065nt', random() < 0.9 ? '"media"' : pick(['"start"', '"mark"', '1', 'null', '"medi\\u0061"'])));
      if (random() < 0.95) top.push(member('media', random() < 0.9 ? `{${media.join(',')}}` : value(0)));
      for (const key of ['streamSid', 'sequenceNumber', 'extra_headers', 'y']) if (random() < 0.5) top.push(member(key, value(0)));
      if (random() < 0.05) top.push(member(pick(['event', 'media']), pick(['"media"', '{"payload":"AAAA"}'])));
      top.sort(() => random() - 0.5);
      return `${ws()}{${top.join(',')}}${ws()}`;
    };
    let taken = 0;
    let audio = 0;
    let total = 0;
    const check = (b: Uint8Array) => {
      total++;
      if (agrees(b)) taken++;
      if (fullParse(b)?.kind === 'audio') audio++;
    };
    for (let n = 0; n < 4000; n++) check(bytes(message()));
    // byte-level mangling of real messages: a byte replaced, dropped or doubled (also bytes from 0x80)
    const real = [...REAL, ...REAL, ...REAL, ...fixtureMessages()].map(bytes);
    for (let n = 0; n < 4000; n++) {
      const b = pick(real);
      const at = Math.floor(random() * b.length);
      const kind = random();
      const mangled = kind < 0.4
        ? Uint8Array.from(b, (x, k) => (k === at ? pick([0x22, 0x5c, 0x2c, 0x7b, 0x7d, 0x3a, 0x20, 0x3d, 0x41, 0x80, 0xff, 0xc3, 0x00, Math.floor(random() * 256)]) : x))
        : kind < 0.7 ? Uint8Array.from([...b.subarray(0, at), ...b.subarray(at + 1)])
        : Uint8Array.from([...b.subarray(0, at), b[at]!, ...b.subarray(at)]);
      check(mangled);
    }
    // the generators reach both paths often: most audio the full parse reads is taken, and much is left to it
    expect(taken).toBeGreaterThan(audio * 0.6);
    expect(total - taken).toBeGreaterThan(total * 0.3);
  });
});

describe('base64 from a message\'s bytes', () => {
  it('gives the bytes Node\'s decoder gives for every payload the framings accept, and null for any other', () => {
    const random = rng(7);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const cases = ['', 'AA', 'AAA', 'AAAA', 'AA==', 'AAA=', 'A=', '==', '=', 'AAAAA=', '//8=', '/w', PAYLOAD, 'A', 'AA=A', 'A===', 'AAAA====', '-_AA', 'AA\\/A', 'A A=', 'AA"A'];
    for (let n = 0; n < 3000; n++) {
      const len = Math.floor(random() * 24);
      let s = '';
      // now and then a character outside the alphabet
      for (let k = 0; k < len; k++) s += random() < 0.01 ? String.fromCharCode(Math.floor(random() * 128)) : alphabet[Math.floor(random() * 64)];
      s += '='.repeat(Math.floor(random() * 3));
      cases.push(s);
    }
    let valid = 0;
    for (const s of cases) {
      const framed = bytes(`"${s}"`);
      const decoded = base64SpanBytes(framed, 1, framed.length - 1, alloc);
      const expected = isBase64Payload(s) ? Array.from(Buffer.from(s, 'base64')) : null;
      if (expected) valid++;
      expect({ s, bytes: decoded && Array.from(decoded) }).toEqual({ s, bytes: expected });
    }
    expect(valid).toBeGreaterThan(cases.length / 2);
    expect(valid).toBeLessThan(cases.length);
  });
});
