import { describe, expect, it } from '@jest/globals';
import { dtmfDigit, isBase64Payload, mediaAudio, mediaFormatOf, readJsonMessage, startTracks, unknownEvent } from './media-json-framing.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('media JSON framing steps', () => {
  it('reads only JSON objects', () => {
    expect(readJsonMessage('{"event":"stop"}')).toEqual({ message: { event: 'stop' } });
    expect(readJsonMessage('{')).toEqual({ ignored: { kind: 'ignored', reason: 'not JSON' } });
    expect(readJsonMessage('[1]')).toEqual({ ignored: { kind: 'ignored', reason: 'not a JSON object' } });
    expect(readJsonMessage('null')).toEqual({ ignored: { kind: 'ignored', reason: 'not a JSON object' } });
  });

  it('reads a media format with the sample rate under the first key that is set', () => {
    expect(mediaFormatOf({ encoding: 'audio/x-mulaw', sampleRate: 8000 })).toEqual({ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 });
    expect(mediaFormatOf({ encoding: 'audio/x-mulaw', sample_rate: 8000 })).toBeNull();
    expect(mediaFormatOf({ encoding: 'audio/x-mulaw', sample_rate: 8000 }, ['sampleRate', 'sample_rate'])).toEqual({ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 });
    expect(mediaFormatOf({ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1.5 })).toBeNull();
    expect(mediaFormatOf({ sampleRate: 8000 })).toBeNull();
    expect(mediaFormatOf([])).toBeNull();
  });

  it('keeps known tracks, inbound when none', () => {
    expect(startTracks(['outbound_track', 'x', 'inbound'])).toEqual(['outbound', 'inbound']);
    expect(startTracks(['x'])).toEqual(['inbound']);
    expect(startTracks(undefined)).toEqual(['inbound']);
  });

  it('turns media and dtmf objects into messages, ignoring malformed ones', () => {
    expect(mediaAudio({ payload: 'AAE=' }, bytes)).toEqual({ kind: 'audio', track: 'inbound', payload: bytes('AAE=') });
    expect(mediaAudio({ track: 'outbound', payload: '' }, bytes)).toEqual({ kind: 'audio', track: 'outbound', payload: bytes('') });
    expect(mediaAudio({ track: 'both', payload: 'AAE=' }, bytes)).toEqual({ kind: 'ignored', reason: 'media on an unknown track' });
    expect(mediaAudio({ payload: 'A' }, bytes)).toEqual({ kind: 'ignored', reason: 'media without a base64 payload' });
    expect(isBase64Payload('AA=A')).toBe(false);
    expect(isBase64Payload(12)).toBe(false);
    expect(dtmfDigit({ digit: '5' })).toEqual({ kind: 'dtmf', digit: '5' });
    expect(dtmfDigit({ digit: '' })).toEqual({ kind: 'ignored', reason: 'dtmf without a digit' });
    expect(unknownEvent('x'.repeat(50))).toEqual({ kind: 'ignored', reason: `unknown event "${'x'.repeat(40)}"` });
    expect(unknownEvent(undefined)).toEqual({ kind: 'ignored', reason: 'no event' });
  });
});
