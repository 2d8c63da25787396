import { describe, expect, it } from '@jest/globals';
import { ariMediaFraming } from '../../providers/ari/ari-media.js';
import { plivoMediaFraming } from '../../providers/plivo/plivo-media.js';
import { simulatorMediaFraming } from '../../providers/simulator/simulator-media.js';
import { telnyxMediaFraming } from '../../providers/telnyx/telnyx-media.js';
import { twilioMediaFraming } from '../../providers/twilio/twilio-media.js';
import { vonageMediaFraming } from '../../providers/vonage/vonage-media.js';
import type { MediaFraming } from '../calls/media-session.js';
import { l16Bytes, l16Samples } from './carrier-audio.js';
import { mulawDecode, mulawEncode } from './g711.js';
import { WebSocketMediaChannel, type PlayoutTimers } from './websocket-media-channel.js';

/** A fake clock with timers that fire when the test advances it. */
function fakeTimers(): PlayoutTimers & { advance(ms: number): void; pending(): number } {
  let now = 1000;
  let timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
  return {
    now: () => now,
    setTimeout(fn, ms) {
      const t = { at: now + ms, fn, live: true };
      timers.push(t);
      return { cancel: () => void (t.live = false) };
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const due = timers.filter((t) => t.live && t.at <= until).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        now = due.at;
        due.live = false;
        due.fn();
      }
      now = until;
      timers = timers.filter((t) => t.live);
    },
    pending: () => timers.filter((t) => t.live).length,
  };
}

function harness(framing: MediaFraming, streamId = 'S1', hangUpCall?: (reason: string) => Promise<void>) {
  const sent: Array<{ data: string | Uint8Array; binary: boolean }> = [];
  const closes: Array<[number, string]> = [];
  const timers = fakeTimers();
  const channel = new WebSocketMediaChannel(
    { send: (data, binary) => void sent.push({ data, binary }), close: (code, reason) => void closes.push([code, reason]) },
    { framing, stream: { streamId }, timers, ...(hangUpCall ? { hangUpCall } : {}) },
  );
  const marks: Array<[string, boolean]> = [];
  channel.onMark((name, played) => marks.push([name, played]));
  const json = () => sent.filter((f) => !f.binary).map((f) => JSON.parse(String(f.data)) as Record<string, unknown>);
  return { channel, sent, closes, timers, marks, json };
}

const ulaw = (ms: number, byte = 0x55) => new Uint8Array(8 * ms).fill(byte);

describe('WebSocketMediaChannel over native-mark carriers (Twilio shape)', () => {
  it('frames audio, marks and clear as the carrier expects, naming the stream', () => {
    const { channel, json } = harness(twilioMediaFraming, 'MZ1');
    expect(channel.inFormat).toEqual({ encoding: 'mulaw', sampleRate: 8000 });
    expect(channel.outFormat).toEqual({ encoding: 'mulaw', sampleRate: 8000 });
    channel.sendAudio(ulaw(20));
    channel.sendMark('m1');
    channel.clear();
    expect(json()).toEqual([
      { event: 'media', streamSid: 'MZ1', media: { payload: Buffer.from(ulaw(20)).toString('base64') } },
      { event: 'mark', streamSid: 'MZ1', mark: { name: 'm1' } },
      { event: 'clear', streamSid: 'MZ1' },
    ]);
  });

  it('reports a mark played when the carrier echoes it (and every mark before it); a clear reports the rest not played, in order, and ignores late echoes', () => {
    const { channel, marks } = harness(twilioMediaFraming);
    for (const name of ['a', 'b', 'c', 'd']) {
      channel.sendAudio(ulaw(100));
      channel.sendMark(name);
    }
    channel.receive({ kind: 'mark', name: 'b' });
    expect(marks).toEqual([['a', true], ['b', true]]);
    channel.receive({ kind: 'mark', name: 'zzz' }); // not ours
    channel.clear();
    expect(marks).toEqual([['a', true], ['b', true], ['c', false], ['d', false]]);
    channel.receive({ kind: 'mark', name: 'c' }); // Twilio echoes cleared marks: already reported
    channel.receive({ kind: 'cleared' });
    expect(marks).toHaveLength(4);
  });

  it('Plivo, Telnyx and Asterisk speak their own shapes through the same channel', () => {
    const plivo = harness(plivoMediaFraming, 'ST1');
    plivo.channel.sendAudio(ulaw(20));
    plivo.channel.sendMark('m');
    plivo.channel.clear();
    expect(plivo.json().map((m) => m.event)).toEqual(['playAudio', 'checkpoint', 'clearAudio']);
    expect(plivo.marks).toEqual([['m', false]]);

    const telnyx = harness(telnyxMediaFraming);
    telnyx.channel.sendAudio(ulaw(20));
    telnyx.channel.sendMark('m');
    telnyx.channel.receive({ kind: 'mark', name: 'm' });
    expect(telnyx.json()).toEqual([{ event: 'media', media: { payload: Buffer.from(ulaw(20)).toString('base64') } }, { event: 'mark', mark: { name: 'm' } }]);
    expect(telnyx.marks).toEqual([['m', true]]);

    const ari = harness(ariMediaFraming);
    ari.channel.sendAudio(ulaw(20));
    ari.channel.sendMark('m 1');
    ari.channel.clear();
    expect(ari.sent.map((f) => (f.binary ? `binary:${(f.data as Uint8Array).length}` : f.data))).toEqual(['binary:160', 'MARK_MEDIA correlation_id:m%201', 'FLUSH_MEDIA']);
  });

  it('passes the caller audio, DTMF and the stream end to its listeners; after the end nothing is sent and marks are not played', async () => {
    const { channel, sent, marks } = harness(twilioMediaFraming);
    const audio: Uint8Array[] = [];
    const digits: string[] = [];
    const closed: string[] = [];
    channel.onAudio((a) => audio.push(a));
    channel.onAudio(() => {
      throw new Error('a broken listener');
    });
    channel.onDtmf((d) => digits.push(d));
    channel.onClose((r) => closed.push(r));
    channel.receive({ kind: 'audio', track: 'inbound', payload: ulaw(20, 1) });
    channel.receive({ kind: 'audio', track: 'outbound', payload: ulaw(20, 2) }); // what the caller hears: not the caller
    channel.receive({ kind: 'dtmf', digit: '5' });
    channel.sendMark('pending');
    channel.receive({ kind: 'stop' });
    channel.closed('closed'); // idempotent
    expect(audio).toEqual([ulaw(20, 1)]);
    expect(digits).toEqual(['5']);
    expect(closed).toEqual(['stop']);
    expect(marks).toEqual([['pending', false]]);
    const before = sent.length;
    channel.sendAudio(ulaw(20));
    channel.clear();
    channel.sendMark('late');
    await Promise.resolve();
    expect(sent).toHaveLength(before);
    expect(marks).toEqual([['pending', false], ['late', false]]);
    const lateClose: string[] = [];
    channel.onClose((r) => lateClose.push(r));
    await Promise.resolve();
    expect(lateClose).toEqual(['stop']);
  });
});

describe('WebSocketMediaChannel over Vonage (L16 16 kHz, 640-byte frames, emulated marks)', () => {
  it('sends μ-law 8 kHz as L16 16 kHz in whole 640-byte binary frames, carrying the remainder to the next send', () => {
    const { channel, sent } = harness(vonageMediaFraming);
    channel.sendAudio(ulaw(20));
    expect(sent.map((f) => [f.binary, (f.data as Uint8Array).length])).toEqual([[true, 640]]);
    channel.sendAudio(ulaw(10));
    expect(sent).toHaveLength(1); // 320 bytes wait for the rest of their frame
    channel.sendAudio(ulaw(30));
    expect(sent.map((f) => (f.data as Uint8Array).length)).toEqual([640, 640, 640]);
  });

  it('resamples a tone without losing it: 8 kHz in, 16 kHz out, the same frequency and level', () => {
    const { channel, sent } = harness(vonageMediaFraming);
    const tone = new Int16Array(8000).map((_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 8000)));
    const bytes = mulawEncode(tone);
    for (let at = 0; at < bytes.length; at += 160) channel.sendAudio(bytes.subarray(at, at + 160));
    expect(sent).toHaveLength(50);
    const out = l16Samples(Buffer.concat(sent.map((f) => f.data as Uint8Array)));
    expect(out).toHaveLength(16000);
    const steady = out.subarray(1600);
    const peak = steady.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expect(peak).toBeGreaterThan(5600);
    expect(peak).toBeLessThan(6400);
    let crossings = 0;
    for (let i = 1; i < 3200; i++) if ((steady[i - 1]! < 0) !== (steady[i]! < 0)) crossings++;
    expect(Math.abs(crossings - 120)).toBeLessThanOrEqual(1); // 300 Hz: 60 periods, 120 crossings in 200 ms
  });

  it('hands the caller L16 16 kHz to its listeners as μ-law 8 kHz (160 bytes per 20 ms frame)', () => {
    const { channel } = harness(vonageMediaFraming);
    const got: Uint8Array[] = [];
    channel.onAudio((a) => got.push(a));
    const pcm = new Int16Array(320 * 10).map((_, i) => Math.round(4000 * Math.sin((2 * Math.PI * 500 * i) / 16000)));
    const wire = l16Bytes(pcm);
    for (let at = 0; at < wire.length; at += 640) channel.receive({ kind: 'audio', track: 'inbound', payload: wire.subarray(at, at + 640) });
    expect(got.map((a) => a.length)).toEqual(Array(10).fill(160));
    const decoded = mulawDecode(Buffer.concat(got)).subarray(400);
    expect(decoded.reduce((m, v) => Math.max(m, Math.abs(v)), 0)).toBeGreaterThan(3600);
  });

  it('emulates marks from its playout clock: played once the audio sent before them has had time to play', () => {
    const { channel, marks, timers } = harness(vonageMediaFraming);
    channel.sendAudio(ulaw(200));
    channel.sendMark('first');
    channel.sendAudio(ulaw(100));
    channel.sendMark('second');
    expect(channel.bufferedMs).toBe(300);
    timers.advance(199);
    expect(marks).toEqual([]);
    timers.advance(1);
    expect(marks).toEqual([['first', true]]);
    timers.advance(100);
    expect(marks).toEqual([['first', true], ['second', true]]);
    expect(timers.pending()).toBe(0);
    // nothing buffered: a mark is played at once (on the next timer turn)
    channel.sendMark('idle');
    timers.advance(0);
    expect(marks.at(-1)).toEqual(['idle', true]);
  });

  it('clears with {"action":"clear"}: the unsent remainder and the playout clock are dropped, waiting marks are not played', () => {
    const { channel, sent, marks, timers, json } = harness(vonageMediaFraming);
    channel.sendAudio(ulaw(210)); // 10 frames sent, 10 ms waiting for its frame
    channel.sendMark('cut');
    timers.advance(50);
    channel.clear();
    expect(json()).toEqual([{ action: 'clear' }]);
    expect(marks).toEqual([['cut', false]]);
    expect(channel.bufferedMs).toBe(0);
    timers.advance(1000);
    expect(marks).toEqual([['cut', false]]);
    channel.sendAudio(ulaw(10));
    expect(sent.filter((f) => f.binary)).toHaveLength(10); // the old 10 ms were dropped: 10 new ms make no frame yet
  });
});

describe('WebSocketMediaChannel in the format the stream announced', () => {
  it('an Asterisk channel in slin16 gets L16 16 kHz both ways, though the manifest declares μ-law', () => {
    const sent: Array<{ data: string | Uint8Array; binary: boolean }> = [];
    const channel = new WebSocketMediaChannel(
      { send: (data, binary) => void sent.push({ data, binary }), close: () => undefined },
      { framing: ariMediaFraming, stream: {}, timers: fakeTimers(), wireFormat: { encoding: 'l16', sampleRate: 16000 } },
    );
    const heard: Uint8Array[] = [];
    channel.onAudio((a) => heard.push(a));
    channel.receive({ kind: 'audio', track: 'inbound', payload: new Uint8Array(640) });
    channel.sendAudio(ulaw(20));
    expect(heard.map((a) => a.length)).toEqual([160]);
    expect(sent.map((f) => [f.binary, (f.data as Uint8Array).length])).toEqual([[true, 640]]);
  });
});

describe('WebSocketMediaChannel hang-up', () => {
  it('closes the stream once (Twilio, Vonage, simulator), after the carrier’s own message where it has one (Asterisk HANGUP)', async () => {
    for (const framing of [twilioMediaFraming, vonageMediaFraming, simulatorMediaFraming]) {
      const { channel, sent, closes } = harness(framing);
      const closed: string[] = [];
      channel.onClose((r) => closed.push(r));
      await Promise.all([channel.hangUp('end_call'), channel.hangUp('again')]);
      await channel.hangUp('later');
      expect({ provider: framing.provider, sent, closes, closed }).toEqual({ provider: framing.provider, sent: [], closes: [[1000, 'end_call']], closed: ['hangup'] });
    }
    const ari = harness(ariMediaFraming);
    await ari.channel.hangUp('end_call');
    expect(ari.sent).toEqual([{ data: 'HANGUP', binary: false }]);
    expect(ari.closes).toEqual([[1000, 'end_call']]);
  });

  it('also hangs up through call control where the stream is only a fork (Telnyx); a failing carrier call never throws', async () => {
    const calls: string[] = [];
    const telnyx = harness(telnyxMediaFraming, 'S1', async (reason) => {
      calls.push(reason);
      throw new Error('carrier down');
    });
    await expect(telnyx.channel.hangUp('end_call')).resolves.toBeUndefined();
    expect(calls).toEqual(['end_call']);
    expect(telnyx.closes).toEqual([[1000, 'end_call']]);
    const twilioCalls: string[] = [];
    const twilio = harness(twilioMediaFraming, 'S1', async (reason) => void twilioCalls.push(reason));
    await twilio.channel.hangUp('end_call');
    expect(twilioCalls).toEqual([]); // closing a <Connect><Stream> ends the call
  });
});
