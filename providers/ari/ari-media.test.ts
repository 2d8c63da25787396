import { describe, expect, it } from '@jest/globals';
import { checkMediaFixture, loadMediaFixture } from '../../test/support/media-framing-fixtures.js';
import { ariMediaFraming } from './ari-media.js';
import { ariManifest } from './ari.manifest.js';

describe('Asterisk chan_websocket media framing, both ways', () => {
  it('parses what the carrier sends and serializes what we send as recorded (fixtures/media/stream.json)', () => {
    checkMediaFixture(ariMediaFraming, loadMediaFixture(new URL('./fixtures/media/stream.json', import.meta.url)));
  });

  it('declares what it does: μ-law both ways, native marks (MARK_MEDIA) and clear (FLUSH_MEDIA), HANGUP; the token on the URL', () => {
    expect(ariMediaFraming).toMatchObject({
      provider: 'ari', tokenIn: 'query', startMeansInProgress: false, stopMeansCompleted: false,
      media: { inFormat: { encoding: 'mulaw', sampleRate: 8000 }, outFormat: { encoding: 'mulaw', sampleRate: 8000 }, marks: 'native', clear: 'native', hangUp: 'close' },
    });
    expect(ariManifest.media).toBe(ariMediaFraming.media);
  });

  it('reads slin formats as L16 at their rate, round-trips any mark name, never throws', () => {
    expect(ariMediaFraming.parse(Buffer.from('MEDIA_START connection_id:c format:slin16'), false)).toMatchObject({ kind: 'start', start: { format: { encoding: 'audio/l16', sampleRate: 16000 } } });
    expect(ariMediaFraming.parse(Buffer.from('MEDIA_START connection_id:c format:slin'), false)).toMatchObject({ kind: 'start', start: { format: { encoding: 'audio/l16', sampleRate: 8000 } } });
    for (const name of ['a b', 'x:y%z', 'ünï', 'm-1']) {
      const [frame] = ariMediaFraming.serialize({ kind: 'mark', name }, {});
      const echo = String(frame!.data).replace('MARK_MEDIA', 'MEDIA_MARK_PROCESSED');
      expect(ariMediaFraming.parse(Buffer.from(echo), false)).toEqual({ kind: 'mark', name });
    }
    for (let i = 0; i < 200; i++) expect(() => ariMediaFraming.parse(Buffer.from(Array.from({ length: i }, () => Math.floor(Math.random() * 256))), i % 2 === 0)).not.toThrow();
  });
});
