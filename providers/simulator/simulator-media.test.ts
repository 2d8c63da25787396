import { describe, expect, it } from '@jest/globals';
import { checkMediaFastPath, checkMediaFixture, loadMediaFixture } from '../../test/support/media-framing-fixtures.js';
import { parseSimulatorMediaMessage, simulatorMediaFraming } from './simulator-media.js';

const text = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));

describe('parseSimulatorMediaMessage', () => {
  it('binary frames are caller audio; JSON start/audio/mark/stop; the rest ignored', () => {
    expect(parseSimulatorMediaMessage(Buffer.from([9, 9]), true)).toMatchObject({ kind: 'audio', track: 'inbound' });
    expect(parseSimulatorMediaMessage(text({ event: 'start' }), false)).toMatchObject({ kind: 'start', start: { format: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 } } });
    expect(parseSimulatorMediaMessage(text({ event: 'audio', track: 'outbound', payload: 'AAE=' }), false)).toMatchObject({ kind: 'audio', track: 'outbound' });
    expect(parseSimulatorMediaMessage(text({ event: 'mark', name: 'x' }), false)).toEqual({ kind: 'mark', name: 'x' });
    expect(parseSimulatorMediaMessage(text({ event: 'stop' }), false)).toEqual({ kind: 'stop' });
    expect(parseSimulatorMediaMessage(text('nope'), false)).toEqual({ kind: 'ignored', reason: 'not JSON' });
    expect(parseSimulatorMediaMessage(text({ event: 'dance' }), false)).toEqual({ kind: 'ignored', reason: 'unknown event "dance"' });
  });
});

describe('Simulator media framing, both ways', () => {
  it('parses what arrives and serializes what we send as recorded (fixtures/media/stream.json)', () => {
    checkMediaFixture(simulatorMediaFraming, loadMediaFixture(new URL('./fixtures/media/stream.json', import.meta.url)));
  });

  it('reads its media messages through the fast path, and the same message it does not take through the full parse', () => {
    checkMediaFastPath(simulatorMediaFraming, loadMediaFixture(new URL('./fixtures/media/stream.json', import.meta.url)));
  });
});

describe('simulator media audio frames', () => {
  it('serialize only the view\'s own bytes and escape the stream id (the frame text is built by hand)', () => {
    const backing = Uint8Array.from({ length: 400 }, (_, i) => (i * 37) & 0xff);
    const frame = backing.subarray(17, 177);
    const sid = 'MZ"odd\\id\n';
    const [out] = simulatorMediaFraming.serialize({ kind: 'audio', payload: frame }, { streamId: sid });
    expect(out!.binary).toBe(false);
    const payload = Buffer.from(frame).toString('base64');
    expect(JSON.parse(out!.data as string)).toEqual({ event: 'media', streamSid: sid, media: { payload } });
  });
});
