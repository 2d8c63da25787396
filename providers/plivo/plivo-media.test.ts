import { describe, expect, it } from '@jest/globals';
import { checkMediaFastPath, checkMediaFixture, loadMediaFixture } from '../../test/support/media-framing-fixtures.js';
import { parsePlivoMediaMessage, plivoMediaFraming } from './plivo-media.js';

const text = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const parse = (v: unknown) => parsePlivoMediaMessage(text(v), false);

describe('parsePlivoMediaMessage (Plivo audio stream messages)', () => {
  it('reads start, media, playedStream, dtmf and stop as Plivo sends them', () => {
    expect(parse({
      event: 'start', sequenceNumber: 0,
      start: { callId: 'c-1', streamId: 's-1', accountId: 'MA1', tracks: ['inbound'], mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 } },
      extra_headers: '{}',
    })).toEqual({
      kind: 'start',
      start: { streamId: 's-1', providerCallId: 'c-1', tracks: ['inbound'], format: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }, parameters: {} },
    });
    const audio = parse({ event: 'media', sequenceNumber: 1, streamId: 's-1', media: { track: 'inbound', timestamp: '1715076000123', chunk: 1, payload: Buffer.from([0, 255, 127]).toString('base64') } });
    expect(audio).toMatchObject({ kind: 'audio', track: 'inbound' });
    expect(Buffer.from((audio as { payload: Uint8Array }).payload)).toEqual(Buffer.from([0, 255, 127]));
    expect(parse({ event: 'playedStream', streamId: 's-1', name: 'greeting' })).toEqual({ kind: 'mark', name: 'greeting' });
    expect(parse({ event: 'dtmf', streamId: 's-1', dtmf: { digit: '7', track: 'inbound' } })).toEqual({ kind: 'dtmf', digit: '7' });
    expect(parse({ event: 'stop', streamId: 's-1' })).toEqual({ kind: 'stop' });
  });

  it('ignores anything else with a reason and never throws', () => {
    const cases: Array<[Uint8Array, boolean, string]> = [
      [text('not json {'), false, 'not JSON'],
      [text([1]), false, 'not a JSON object'],
      [text({}), false, 'no event'],
      [text({ event: 'start' }), false, 'start without a start object'],
      [text({ event: 'start', start: { mediaFormat: { encoding: 'audio/x-mulaw' } } }), false, 'start without a readable mediaFormat'],
      [text({ event: 'media', media: { payload: '@@@' } }), false, 'media without a base64 payload'],
      [text({ event: 'media', media: { track: 'sideways', payload: 'AA==' } }), false, 'media on an unknown track'],
      [text({ event: 'playedStream' }), false, 'playedStream without a name'],
      [Buffer.from([1, 2, 3]), true, 'binary frame (Plivo sends JSON text)'],
    ];
    for (const [data, binary, reason] of cases) expect(parsePlivoMediaMessage(data, binary)).toEqual({ kind: 'ignored', reason });
  });

  it('takes the token from the URL, marks the call connected on start and leaves the end to the call callbacks', () => {
    expect(plivoMediaFraming).toMatchObject({ provider: 'plivo', tokenIn: 'query', startMeansInProgress: true, stopMeansCompleted: false });
    expect(Object.isFrozen(plivoMediaFraming)).toBe(true);
  });
});

describe('Plivo media framing, both ways', () => {
  it('parses what arrives and serializes what we send as recorded (fixtures/media/stream.json)', () => {
    checkMediaFixture(plivoMediaFraming, loadMediaFixture(new URL('./fixtures/media/stream.json', import.meta.url)));
  });

  it('reads its media messages through the fast path, and the same message it does not take through the full parse', () => {
    checkMediaFastPath(plivoMediaFraming, loadMediaFixture(new URL('./fixtures/media/stream.json', import.meta.url)));
  });
});

describe('plivo media audio frames', () => {
  it('serialize only the view\'s own bytes and escape the stream id (the frame text is built by hand)', () => {
    const backing = Uint8Array.from({ length: 400 }, (_, i) => (i * 37) & 0xff);
    const frame = backing.subarray(17, 177);
    const sid = 'MZ"odd\\id\n';
    const [out] = plivoMediaFraming.serialize({ kind: 'audio', payload: frame }, { streamId: sid });
    expect(out!.binary).toBe(false);
    const payload = Buffer.from(frame).toString('base64');
    expect(JSON.parse(out!.data as string)).toEqual({ event: 'playAudio', media: { contentType: 'audio/x-mulaw', sampleRate: 8000, payload } });
  });
});
