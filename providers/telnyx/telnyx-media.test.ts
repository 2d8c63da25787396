import { describe, expect, it } from '@jest/globals';
import { checkMediaFastPath, checkMediaFixture, loadMediaFixture } from '../../test/support/media-framing-fixtures.js';
import { telnyxMediaFraming } from './telnyx-media.js';
import { telnyxManifest } from './telnyx.manifest.js';

describe('Telnyx media framing, both ways', () => {
  it('parses what the carrier sends and serializes what we send as recorded (fixtures/media/stream.json)', () => {
    checkMediaFixture(telnyxMediaFraming, loadMediaFixture(new URL('./fixtures/media/stream.json', import.meta.url)));
  });

  it('reads its media messages through the fast path, and the same message it does not take through the full parse', () => {
    checkMediaFastPath(telnyxMediaFraming, loadMediaFixture(new URL('./fixtures/media/stream.json', import.meta.url)));
  });

  it('declares what it does: PCMU both ways, native marks and clear, hang-up through Call Control; the token on the URL', () => {
    expect(telnyxMediaFraming).toMatchObject({
      provider: 'telnyx', tokenIn: 'query', startMeansInProgress: false, stopMeansCompleted: false,
      media: { inFormat: { encoding: 'mulaw', sampleRate: 8000 }, outFormat: { encoding: 'mulaw', sampleRate: 8000 }, marks: 'native', clear: 'native', hangUp: 'rest' },
    });
    expect(telnyxManifest.media).toBe(telnyxMediaFraming.media);
  });

  it('ignores anything else with a reason and never throws', () => {
    const text = (v: unknown) => Buffer.from(JSON.stringify(v));
    expect(telnyxMediaFraming.parse(Buffer.from([1, 2]), true)).toEqual({ kind: 'ignored', reason: 'binary frame (Telnyx sends JSON text)' });
    expect(telnyxMediaFraming.parse(text({ event: 'start', start: { media_format: {} } }), false)).toEqual({ kind: 'ignored', reason: 'start without a readable media_format' });
    expect(telnyxMediaFraming.parse(text({ event: 'mark', mark: {} }), false)).toEqual({ kind: 'ignored', reason: 'mark without a name' });
    expect(telnyxMediaFraming.parse(text({ event: 'dance' }), false)).toEqual({ kind: 'ignored', reason: 'unknown event "dance"' });
    for (let i = 0; i < 200; i++) expect(() => telnyxMediaFraming.parse(Buffer.from(Array.from({ length: i }, () => Math.floor(Math.random() * 256))), i % 2 === 0)).not.toThrow();
  });
});

describe('telnyx media audio frames', () => {
  it('serialize only the view\'s own bytes and escape the stream id (the frame text is built by hand)', () => {
    const backing = Uint8Array.from({ length: 400 }, (_, i) => (i * 37) & 0xff);
    const frame = backing.subarray(17, 177);
    const sid = 'MZ"odd\\id\n';
    const [out] = telnyxMediaFraming.serialize({ kind: 'audio', payload: frame }, { streamId: sid });
    expect(out!.binary).toBe(false);
    const payload = Buffer.from(frame).toString('base64');
    expect(JSON.parse(out!.data as string)).toEqual({ event: 'media', media: { payload } });
  });
});
