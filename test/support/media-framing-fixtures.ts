/**
 * Runs a carrier's recorded-style media framing fixture (providers/<id>/fixtures/media-*.json) against its
 * framing: every inbound wire message must parse to the expected `MediaMessage`, every outbound message
 * must serialize to exactly the expected wire frames. Audio travels as base64 in the fixtures
 * (`payload_base64`), text frames as JSON (`json`) or raw text (`text`), binary frames as base64 (`binary`).
 */
import { readFileSync } from 'node:fs';
import { expect, jest } from '@jest/globals';
import type { MediaFraming, MediaMessage, MediaStreamIds, OutboundMedia, WireFrame } from '../../core/calls/media-session.js';

type WireSpec = { json: unknown } | { text: string } | { binary: string };
type MessageSpec = Record<string, unknown> & { kind: string; payload_base64?: string };

export interface MediaFramingFixture {
  description: string;
  inbound: Array<{ wire: WireSpec; expected: MessageSpec }>;
  outbound: Array<{ stream: MediaStreamIds; send: MessageSpec; expected: WireSpec[] }>;
}

export const loadMediaFixture = (url: URL): MediaFramingFixture => JSON.parse(readFileSync(url, 'utf8')) as MediaFramingFixture;

function wireBytes(w: WireSpec): { data: Uint8Array; binary: boolean } {
  if ('binary' in w) return { data: Buffer.from(w.binary, 'base64'), binary: true };
  if ('text' in w) return { data: Buffer.from(w.text, 'utf8'), binary: false };
  return { data: Buffer.from(JSON.stringify(w.json), 'utf8'), binary: false };
}

/** A parsed message with its audio as base64, comparable with a fixture's `expected`. */
function comparable(m: MediaMessage): Record<string, unknown> {
  if (m.kind !== 'audio') return { ...m };
  const { payload, ...rest } = m;
  return { ...rest, payload_base64: Buffer.from(payload).toString('base64') };
}

function outbound(spec: MessageSpec): OutboundMedia {
  if (spec.kind === 'audio') return { kind: 'audio', payload: Buffer.from(spec.payload_base64 ?? '', 'base64') };
  return spec as unknown as OutboundMedia;
}

function frameSpec(f: WireFrame): WireSpec {
  if (f.binary) return { binary: Buffer.from(f.data as Uint8Array).toString('base64') };
  const text = typeof f.data === 'string' ? f.data : Buffer.from(f.data).toString('utf8');
  try {
    return { json: JSON.parse(text) };
  } catch {
    return { text };
  }
}

/** Asserts every case of `fixture` against `framing`. */
export function checkMediaFixture(framing: MediaFraming, fixture: MediaFramingFixture): void {
  expect(fixture.inbound.length + fixture.outbound.length).toBeGreaterThan(0);
  for (const c of fixture.inbound) {
    const { data, binary } = wireBytes(c.wire);
    expect({ wire: c.wire, parsed: comparable(framing.parse(data, binary)) }).toEqual({ wire: c.wire, parsed: c.expected });
  }
  for (const c of fixture.outbound) {
    expect({ send: c.send, frames: framing.serialize(outbound(c.send), c.stream).map(frameSpec) }).toEqual({ send: c.send, frames: c.expected });
  }
}

/**
 * Asserts that `framing` reads each of the fixture's `media` messages (event `media`) through the fast path (no `JSON.parse`,
 * docs/voice.md "Audio path") to what the fixture expects, and that the same message the fast path does not take
 * (its `event` key written with an escape, which the full parse reads as `event`) goes through the full parse
 * to the same message.
 */
export function checkMediaFastPath(framing: MediaFraming, fixture: MediaFramingFixture): void {
  const media = fixture.inbound.filter((c) => 'json' in c.wire && (c.wire.json as { event?: unknown }).event === 'media' && c.expected.kind === 'audio');
  expect(media.length).toBeGreaterThan(0);
  const parse = jest.spyOn(JSON, 'parse');
  try {
    for (const c of media) {
      const text = JSON.stringify((c.wire as { json: unknown }).json);
      parse.mockClear();
      expect({ text, parsed: comparable(framing.parse(Buffer.from(text, 'utf8'), false)), parses: parse.mock.calls.length }).toEqual({ text, parsed: c.expected, parses: 0 });
      const escaped = text.replace('"event"', '"\\u0065vent"');
      expect(escaped).not.toBe(text);
      parse.mockClear();
      expect({ escaped, parsed: comparable(framing.parse(Buffer.from(escaped, 'utf8'), false)), parses: parse.mock.calls.length }).toEqual({ escaped, parsed: c.expected, parses: 1 });
    }
  } finally {
    parse.mockRestore();
  }
}
