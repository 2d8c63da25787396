import { describe, expect, it } from '@jest/globals';
import { MemoryMediaChannel } from '../../test/fakes/memory-media-channel.js';
import { speechAudio } from '../../test/fakes/scripted-speech.js';
import { VirtualTimeline } from '../../test/fakes/virtual-timeline.js';
import type { TimerHandle, Timers } from '../ports/timers.port.js';
import { MULAW_8K, bytesPerMs } from './audio-format.js';
import { toSessionAudio } from './carrier-audio.js';
import { PlayoutPacer, type Playout } from './playout-pacer.js';

/** Timers that count how many of the pacer's timers are armed at once. */
function countingTimers(base: Timers): Timers & { live: number; maxLive: number; total: number } {
  const t = {
    live: 0,
    maxLive: 0,
    total: 0,
    now: () => base.now(),
    setTimeout(fn: () => void, ms: number): TimerHandle {
      t.live++;
      t.total++;
      t.maxLive = Math.max(t.maxLive, t.live);
      let done = false;
      const h = base.setTimeout(() => {
        done = true;
        t.live--;
        fn();
      }, ms);
      return {
        cancel() {
          if (!done) t.live--;
          done = true;
          h.cancel();
        },
      };
    },
  };
  return t;
}

function wire(pacer: PlayoutPacer, channel: MemoryMediaChannel, name: string): Playout {
  const playout = pacer.open(
    {
      sendFrame: (frame) => channel.sendAudio(frame),
      sendMark: (mark) => channel.sendMark(mark),
      clear: () => channel.clear(),
    },
    name,
  );
  channel.onMark((mark, played) => playout.markReported(mark, played));
  return playout;
}

describe('PlayoutPacer', () => {
  it('keeps every call at most 200 ms ahead of playback with one timer for all calls', async () => {
    const timeline = new VirtualTimeline();
    const timers = countingTimers(timeline);
    const pacer = new PlayoutPacer(timers);
    const calls = Array.from({ length: 20 }, (_, i) => {
      const channel = new MemoryMediaChannel(timeline);
      const playout = wire(pacer, channel, `c${i}`);
      const played: string[] = [];
      let idle = false;
      playout.onSegmentPlayed((s) => played.push(s.text));
      playout.onIdle(() => (idle = true));
      return { channel, playout, played, idle: () => idle };
    });
    const start = timeline.now();
    for (const call of calls) {
      const a = call.playout.begin({ text: 'First sentence.', nodeId: 'n' });
      call.playout.write(a, speechAudio(MULAW_8K, 1000));
      call.playout.end(a);
      const b = call.playout.begin({ text: 'Second one.', nodeId: 'n' });
      call.playout.write(b, speechAudio(MULAW_8K, 510)); // not a whole number of frames: padded
      call.playout.end(b);
    }
    // The first frames go out at once (200 ms worth), not on the next tick.
    expect(calls[0].channel.sent).toHaveLength(10);
    await timeline.advance(1000);
    expect(calls[0].played).toEqual(['First sentence.']);
    await timeline.advance(600);
    for (const call of calls) {
      expect(call.channel.maxBufferedMs).toBeLessThanOrEqual(200);
      expect(call.channel.sent).toHaveLength(76); // 50 + 26 frames
      expect(call.played).toEqual(['First sentence.', 'Second one.']);
      expect(call.idle()).toBe(true);
    }
    expect(calls[0].channel.marksReported.map((m) => m.atMs - start)).toEqual([1000, 1520]);
    expect(timers.maxLive).toBe(1);
    // Idle: the timer stops once nothing is queued.
    expect(pacer.ticking).toBe(false);
    expect(pacer.activeCount).toBe(0);
  });

  it('clear drops what is queued, clears the channel and reports the words heard by the playback clock', async () => {
    const timeline = new VirtualTimeline();
    const pacer = new PlayoutPacer(timeline);
    const channel = new MemoryMediaChannel(timeline);
    const playout = wire(pacer, channel, 'c');
    const a = playout.begin({ text: 'Hello Dana.', nodeId: 'start' });
    playout.write(a, speechAudio(MULAW_8K, 400));
    playout.end(a);
    const b = playout.begin({ text: 'Your cleaning is on Tuesday at three.', nodeId: 'start' });
    playout.write(b, speechAudio(MULAW_8K, 2000));
    playout.end(b);
    await timeline.advance(1400); // 400 ms of the first, 1000 ms of the second
    const sentBefore = channel.sent.length;
    const heard = playout.clear(timeline.now());
    expect(heard.map((h) => [h.heard, h.whole])).toEqual([
      ['Hello Dana.', true],
      ['Your cleaning is on', false],
    ]);
    expect(channel.clears).toEqual([timeline.now()]);
    await timeline.advance(1000);
    expect(channel.sent.length).toBe(sentBefore);
    expect(playout.busy).toBe(false);
  });

  it('a tick does not revisit segments already sent and played: its work does not grow with the call', async () => {
    const timeline = new VirtualTimeline();
    const pacer = new PlayoutPacer(timeline);
    const channel = new MemoryMediaChannel(timeline);
    const playout = wire(pacer, channel, 'c');
    const old = [];
    for (let i = 0; i < 300; i++) {
      const s = playout.begin({ text: `Sentence ${i}.`, nodeId: 'n' });
      playout.write(s, speechAudio(MULAW_8K, 20));
      playout.end(s);
      old.push(s);
    }
    await timeline.advance(7000);
    expect(old.every((s) => s.played)).toBe(true);
    // count every read of the old segments' state from here on
    let reads = 0;
    for (const s of old) {
      for (const key of ['marked', 'played', 'closed', 'mark'] as const) {
        let value = s[key];
        Object.defineProperty(s, key, {
          get: () => (reads++, value),
          set: (v) => (value = v),
        });
      }
    }
    const next = playout.begin({ text: 'A long answer.', nodeId: 'n' });
    playout.write(next, speechAudio(MULAW_8K, 3000));
    playout.end(next);
    await timeline.advance(4000);
    expect(next.played).toBe(true);
    expect(playout.busy).toBe(false);
    expect(reads).toBe(0);
    // the played ones were let go of: a clear reports the segments not yet played (none here)
    expect(playout.heldSegments).toBeLessThanOrEqual(17);
    expect(playout.clear(timeline.now()).filter((h) => !h.segment.played)).toHaveLength(0);
  });

  it('holds a bounded number of segments over 30 simulated minutes with no clear, and a clear then reports the unplayed ones', async () => {
    const timeline = new VirtualTimeline();
    const pacer = new PlayoutPacer(timeline);
    const channel = new MemoryMediaChannel(timeline);
    const playout = wire(pacer, channel, 'c');
    let held = 0;
    // a reply of three sentences every 6 s: 300 replies, 900 segments, 30 minutes (short audio: the pacer ticks
    // only while audio waits, so the test runs in little time; the count of segments is what matters)
    for (let reply = 0; reply < 300; reply++) {
      for (let i = 0; i < 3; i++) {
        const s = playout.begin({ text: `Reply ${reply}, sentence ${i}.`, nodeId: 'n' });
        playout.write(s, speechAudio(MULAW_8K, 100));
        playout.end(s);
      }
      await timeline.advance(6000);
      held = Math.max(held, playout.heldSegments);
    }
    expect(channel.marksReported.filter((m) => m.played).length).toBe(900);
    expect(held).toBeLessThanOrEqual(20);
    // a barge-in in the middle of the next reply: its first sentence played whole, the second half
    const first = playout.begin({ text: 'Hello Dana.', nodeId: 'n' });
    playout.write(first, speechAudio(MULAW_8K, 400));
    playout.end(first);
    const second = playout.begin({ text: 'Your cleaning is on Tuesday at three.', nodeId: 'n' });
    playout.write(second, speechAudio(MULAW_8K, 2000));
    playout.end(second);
    await timeline.advance(1400);
    expect(first.played).toBe(true);
    const heard = playout.clear(timeline.now());
    expect(heard.filter((h) => !h.segment.played).map((h) => [h.heard, h.whole])).toEqual([['Your cleaning is on', false]]);
    expect(heard.length).toBeLessThanOrEqual(20);
  });

  it('converts audio in another format as it plays: a burst of 4 s of 24 kHz PCM costs its first slices only, a clear skips the rest', async () => {
    const timeline = new VirtualTimeline();
    const pacer = new PlayoutPacer(timeline);
    const channel = new MemoryMediaChannel(timeline);
    const playout = wire(pacer, channel, 'c');
    const L16_24K = { encoding: 'l16', sampleRate: 24000, channels: 1 } as const;
    const converter = toSessionAudio(L16_24K);
    let convertedMs = 0;
    const source = {
      convert: (b: Uint8Array) => {
        const out = converter.convert(b);
        convertedMs += out.length / 8;
        return out;
      },
      bytesPerMs: bytesPerMs(L16_24K),
    };
    const pcm = new Uint8Array(24000 * 2 * 4); // 4 s
    const s = playout.begin({ text: 'A long sentence of four seconds.', nodeId: 'n' });
    playout.write(s, pcm.subarray(0, 4800), source); // the first 100 ms, then the rest at once
    playout.write(s, pcm.subarray(4800), source);
    playout.end(s);
    expect(s.receivedMs).toBe(4000);
    expect(channel.sent).toHaveLength(10); // 200 ms ahead, at once
    expect(convertedMs).toBeLessThanOrEqual(300);
    await timeline.advance(1000);
    expect(convertedMs).toBeLessThanOrEqual(1300);
    expect(convertedMs).toBeGreaterThanOrEqual(1000);
    const whole = playout.begin({ text: 'Next.', nodeId: 'n' });
    playout.clear(timeline.now());
    expect(playout.busy).toBe(false);
    await timeline.advance(4000);
    expect(convertedMs).toBeLessThanOrEqual(1300); // never converted what the clear dropped
    expect(whole.sentMs).toBe(0);

    // played through, every sample arrives: 4 s = 200 frames, then the mark
    const again = playout.begin({ text: 'Again.', nodeId: 'n' });
    const fresh = toSessionAudio(L16_24K);
    playout.write(again, pcm.subarray(0, 4800 * 3 + 2), { convert: (b) => fresh.convert(b), bytesPerMs: bytesPerMs(L16_24K) });
    playout.end(again);
    await timeline.advance(1000);
    expect(again.sentMs).toBe(320); // 301 ms of audio: 15 whole frames + the padded last one
    expect(again.played).toBe(true);
  });

  it('tops a call up only when its lead runs low: ~100 ms in one piece every ~100 ms, never below the low-water mark', async () => {
    const timeline = new VirtualTimeline();
    const pacer = new PlayoutPacer(timeline);
    const pieces: Array<{ atMs: number; playAtMs: number; frames: number }> = [];
    const channel = new MemoryMediaChannel(timeline);
    const playout = pacer.open(
      {
        sendFrame: () => {
          throw new Error('a sink with sendFrames gets pieces');
        },
        sendFrames: (audio, playAtMs) => {
          expect(audio.length % 160).toBe(0);
          pieces.push({ atMs: timeline.now(), playAtMs, frames: audio.length / 160 });
          channel.sendAudio(audio);
        },
        sendMark: (mark) => channel.sendMark(mark),
        clear: () => channel.clear(),
      },
      'c',
    );
    channel.onMark((mark, played) => playout.markReported(mark, played));
    const start = timeline.now();
    const a = playout.begin({ text: 'A long answer.', nodeId: 'n' });
    playout.write(a, speechAudio(MULAW_8K, 2000));
    playout.end(a);
    // the first 200 ms go out at once, as one piece
    expect(pieces).toEqual([{ atMs: start, playAtMs: start, frames: 10 }]);
    await timeline.advance(2400);
    expect(pieces.reduce((n, p) => n + p.frames, 0)).toBe(100);
    expect(playout.busy).toBe(false);
    // after the first: one piece per ~100 ms of audio (a 20 ms frame per tick was 90 pieces), sent while the
    // carrier still held ≥ 80 ms (the low-water mark less one tick), and never more than 200 ms ahead
    const later = pieces.slice(1);
    expect(later.length).toBeLessThanOrEqual(19);
    for (const p of later.slice(0, -1)) expect(p.frames).toBeGreaterThanOrEqual(4);
    for (const p of later) expect(p.playAtMs - p.atMs).toBeGreaterThanOrEqual(80);
    expect(channel.maxBufferedMs).toBeLessThanOrEqual(200);
    // back to back: each piece plays where the one before ends
    for (let i = 1; i < pieces.length; i++) expect(pieces[i].playAtMs).toBe(pieces[i - 1].playAtMs + pieces[i - 1].frames * 20);
  });

  it('lowWaterMs = aheadMs tops a call up on every tick: a frame a tick, as before', async () => {
    const timeline = new VirtualTimeline();
    const pacer = new PlayoutPacer(timeline, { lowWaterMs: 200 });
    const frames: number[] = [];
    const playout = pacer.open({ sendFrame: () => undefined, sendFrames: (audio) => frames.push(audio.length / 160), sendMark: () => undefined, clear: () => undefined }, 'c');
    const a = playout.begin({ text: 'A long answer.', nodeId: 'n' });
    playout.write(a, speechAudio(MULAW_8K, 1000));
    playout.end(a);
    await timeline.advance(1200);
    expect(frames[0]).toBe(10);
    expect(frames.slice(1).every((n) => n === 1)).toBe(true);
    expect(frames.reduce((n, f) => n + f, 0)).toBe(50);
  });
});
