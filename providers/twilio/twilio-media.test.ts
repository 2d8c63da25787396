import { describe, expect, it } from '@jest/globals';
import { checkMediaFastPath, checkMediaFixture, loadMediaFixture } from '../../test/support/media-framing-fixtures.js';
import { parseTwilioMediaMessage, twilioMediaFraming } from './twilio-media.js';
import { twilioManifest } from './twilio.manifest.js';

const text = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const parse = (v: unknown) => parseTwilioMediaMessage(text(v), false);

describe('parseTwilioMediaMessage (Twilio Media Streams messages)', () => {
  it('reads connected, start, media, mark, dtmf and stop as Twilio sends them', () => {
    expect(parse({ event: 'connected', protocol: 'Call', version: '1.0.0' })).toEqual({ kind: 'connected' });
    expect(parse({
      event: 'start', sequenceNumber: '1', streamSid: 'MZ1',
      start: {
        streamSid: 'MZ1', accountSid: 'AC1', callSid: 'CA1', tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }, customParameters: { run_id: '7', token: 't', n: 3 },
      },
    })).toEqual({
      kind: 'start',
      start: { streamId: 'MZ1', providerCallId: 'CA1', tracks: ['inbound'], format: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }, parameters: { run_id: '7', token: 't' } },
    });
    const audio = parse({ event: 'media', sequenceNumber: '3', streamSid: 'MZ1', media: { track: 'outbound', chunk: '1', timestamp: '5', payload: Buffer.from([0, 255, 127]).toString('base64') } });
    expect(audio).toMatchObject({ kind: 'audio', track: 'outbound' });
    expect(Buffer.from((audio as { payload: Uint8Array }).payload)).toEqual(Buffer.from([0, 255, 127]));
    expect(parse({ event: 'mark', streamSid: 'MZ1', mark: { name: 'm1' } })).toEqual({ kind: 'mark', name: 'm1' });
    expect(parse({ event: 'dtmf', streamSid: 'MZ1', dtmf: { track: 'inbound_track', digit: '5' } })).toEqual({ kind: 'dtmf', digit: '5' });
    expect(parse({ event: 'stop', streamSid: 'MZ1', stop: { accountSid: 'AC1', callSid: 'CA1' } })).toEqual({ kind: 'stop' });
  });

  it('ignores anything else with a reason and never throws', () => {
    const cases: Array<[Uint8Array, boolean, string]> = [
      [text('not json {'), false, 'not JSON'],
      [text([1, 2]), false, 'not a JSON object'],
      [text('null'), false, 'not a JSON object'],
      [text({}), false, 'no event'],
      [text({ event: 'clear' }), false, 'unknown event "clear"'], // ours to send, never Twilio's
      [text({ event: 'start' }), false, 'start without a start object'],
      [text({ event: 'start', start: { mediaFormat: 'x' } }), false, 'start without a readable mediaFormat'],
      [text({ event: 'media', media: { payload: '@@@' } }), false, 'media without a base64 payload'],
      [text({ event: 'media', media: { track: 'sideways', payload: 'AA==' } }), false, 'media on an unknown track'],
      [text({ event: 'mark', mark: {} }), false, 'mark without a name'],
      [Buffer.from([1, 2, 3]), true, 'binary frame (Twilio sends JSON text)'],
    ];
    for (const [data, binary, reason] of cases) expect(parseTwilioMediaMessage(data, binary)).toEqual({ kind: 'ignored', reason });
    for (let i = 0; i < 200; i++) expect(() => parseTwilioMediaMessage(Buffer.from(Array.from({ length: i }, () => Math.floor(Math.random() * 256))), i % 2 === 0)).not.toThrow();
  });
});

describe('Twilio media framing, both ways', () => {
  it('parses what Twilio sends and serializes what we send as recorded (fixtures/media/stream.json)', () => {
    checkMediaFixture(twilioMediaFraming, loadMediaFixture(new URL('./fixtures/media/stream.json', import.meta.url)));
  });

  it('reads its media messages through the fast path, and the same message it does not take through the full parse', () => {
    checkMediaFastPath(twilioMediaFraming, loadMediaFixture(new URL('./fixtures/media/stream.json', import.meta.url)));
  });

  it('declares what it does: μ-law 8 kHz both ways, native marks and clear, hang-up by closing; the token in start', () => {
    expect(twilioMediaFraming).toMatchObject({
      provider: 'twilio', tokenIn: 'start', startMeansInProgress: true, stopMeansCompleted: false,
      media: { transport: 'websocket', inFormat: { encoding: 'mulaw', sampleRate: 8000 }, outFormat: { encoding: 'mulaw', sampleRate: 8000 }, marks: 'native', clear: 'native', hangUp: 'close' },
    });
    expect(twilioManifest.media).toBe(twilioMediaFraming.media);
  });
});

describe('twilio media audio frames', () => {
  it('serialize only the view\'s own bytes and escape the stream id (the frame text is built by hand)', () => {
    const backing = Uint8Array.from({ length: 400 }, (_, i) => (i * 37) & 0xff);
    const frame = backing.subarray(17, 177);
    const sid = 'MZ"odd\\id\n';
    const [out] = twilioMediaFraming.serialize({ kind: 'audio', payload: frame }, { streamId: sid });
    expect(out!.binary).toBe(false);
    const payload = Buffer.from(frame).toString('base64');
    expect(JSON.parse(out!.data as string)).toEqual({ event: 'media', streamSid: sid, media: { payload } });
  });
});
