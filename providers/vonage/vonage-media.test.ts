import { describe, expect, it } from '@jest/globals';
import { checkMediaFixture, loadMediaFixture } from '../../test/support/media-framing-fixtures.js';
import { vonageMediaFraming } from './vonage-media.js';
import { vonageManifest } from './vonage.manifest.js';

describe('Vonage media framing, both ways', () => {
  it('parses what the carrier sends and serializes what we send as recorded (fixtures/media/stream.json)', () => {
    checkMediaFixture(vonageMediaFraming, loadMediaFixture(new URL('./fixtures/media/stream.json', import.meta.url)));
  });

  it('declares what it does: L16 16 kHz in 640-byte frames both ways, emulated marks, native clear; the token on the URL', () => {
    expect(vonageMediaFraming).toMatchObject({
      provider: 'vonage', tokenIn: 'query', outFrameBytes: 640, startMeansInProgress: false, stopMeansCompleted: false,
      media: { inFormat: { encoding: 'l16', sampleRate: 16000 }, outFormat: { encoding: 'l16', sampleRate: 16000 }, marks: 'emulated', clear: 'native', hangUp: 'close' },
    });
    expect(vonageManifest.media).toBe(vonageMediaFraming.media);
  });

  it('reads the rate of the content-type, refuses other audio and never throws', () => {
    const text = (v: unknown) => Buffer.from(JSON.stringify(v));
    expect(vonageMediaFraming.parse(text({ event: 'websocket:connected', 'content-type': 'audio/l16;rate=8000' }), false)).toMatchObject({ kind: 'start', start: { format: { encoding: 'audio/l16', sampleRate: 8000 } } });
    expect(vonageMediaFraming.parse(text({ event: 'websocket:connected', 'content-type': 'audio/pcmu' }), false)).toEqual({ kind: 'ignored', reason: 'websocket:connected without an audio/l16 content-type' });
    expect(vonageMediaFraming.parse(text({ event: 'websocket:dtmf' }), false)).toEqual({ kind: 'ignored', reason: 'dtmf without a digit' });
    expect(vonageMediaFraming.parse(Buffer.from('{'), false)).toEqual({ kind: 'ignored', reason: 'not JSON' });
    for (let i = 0; i < 200; i++) expect(() => vonageMediaFraming.parse(Buffer.from(Array.from({ length: i }, () => Math.floor(Math.random() * 256))), i % 2 === 0)).not.toThrow();
  });
});
