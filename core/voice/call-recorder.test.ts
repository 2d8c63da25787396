import { describe, expect, it } from '@jest/globals';
import { InMemoryCallRecorder } from '../../test/fakes/in-memory-call-recorder.js';
import { MemoryRecordingOutput } from '../../test/fakes/memory-recording-output.js';
import { readWav } from './wav.js';
import { CallRecorder } from './call-recorder.js';
import { prng } from '../../test/support/prng.js';

const frame = (value: number, n = 160): Int16Array => new Int16Array(n).fill(value);

type Op = ['caller', Int16Array, number] | ['agent', Int16Array, number] | ['clear', number];

/** Feeds the same events to the streaming recorder and to the in-memory reference; answers both files. */
function both(ops: Op[], startMs = 0): { streamed: Uint8Array; reference: Uint8Array; rec: CallRecorder } {
  const out = new MemoryRecordingOutput();
  const rec = new CallRecorder({ startMs, output: out });
  const ref = new InMemoryCallRecorder({ startMs });
  for (const op of ops) {
    if (op[0] === 'caller') {
      rec.writeCaller(op[1], op[2]);
      ref.writeCaller(op[1], op[2]);
    } else if (op[0] === 'agent') {
      rec.writeAgent(op[1], op[2]);
      ref.writeAgent(op[1], op[2]);
    } else {
      rec.clear(op[1]);
      ref.clear(op[1]);
    }
  }
  rec.end();
  expect(rec.durationMs).toBe(ref.durationMs);
  return { streamed: out.wav(), reference: ref.wav(), rec };
}

/** Byte equality of two files (a failure says where they first differ; jest's deep equality is slow on MBs). */
function expectSameBytes(a: Uint8Array, b: Uint8Array): void {
  let i = 0;
  const n = Math.min(a.length, b.length);
  while (i < n && a[i] === b[i]) i++;
  expect({ length: a.length, firstDifference: i === n && a.length === b.length ? null : i }).toEqual({ length: b.length, firstDifference: null });
}

/**
 * A call as the session drives its recorder, on a fake clock in 20 ms ticks: caller frames arrive with jitter
 * (within the gap tolerance), now and then after a gap (a carrier hiccup, up to 3 s) or not at all for a while
 * (a stalled inbound stream while the agent talks); the agent talks in spurts paced at most 200 ms ahead
 * (play time = the end of what was sent, or now); a barge-in clears at the current time, dropping what was
 * sent ahead. `emit` sees each event in order; events are generated on the fly (a long call holds nothing).
 */
function simulateCall(seed: number, minutes: number, emit: (op: Op) => void): void {
  const rnd = prng(seed);
  const endMs = minutes * 60_000;
  let now = 0;
  let nextCaller = 20;
  let stallUntil = -1;
  let agentLeft = 0; // ms of the current spurt still to send
  let playEnd = 0;
  let nextSpurt = 500;
  let value = 1;
  while (now < endMs) {
    now += 20;
    if (now >= nextCaller && now >= stallUntil) {
      const r = rnd();
      emit(['caller', frame(value++ % 3000), now]);
      // jitter within tolerance; 2 %: a gap; 0.5 %: the stream stalls for up to 5 s
      nextCaller = now + 20 + (r < 0.02 ? 100 + Math.floor(rnd() * 2900) : Math.floor(rnd() * 3) * 10 - 10);
      if (r > 0.995) stallUntil = now + Math.floor(rnd() * 5000);
    }
    if (agentLeft === 0 && now >= nextSpurt) agentLeft = 200 + Math.floor(rnd() * 40) * 100;
    if (agentLeft > 0 && rnd() < 0.002) {
      // barge-in: what was sent ahead never plays
      emit(['clear', now]);
      playEnd = now;
      agentLeft = 0;
      nextSpurt = now + 1000 + Math.floor(rnd() * 4000);
    }
    while (agentLeft > 0) {
      const startAt = Math.max(playEnd, now);
      if (startAt + 20 - now > 200) break;
      emit(['agent', frame(-(value++ % 3000)), startAt]);
      playEnd = startAt + 20;
      agentLeft -= 20;
      if (agentLeft === 0) nextSpurt = now + 300 + Math.floor(rnd() * 6000);
    }
  }
}

describe('CallRecorder', () => {
  it('puts a caller frame arriving at t and agent audio playing from t-20 on the same samples', () => {
    const ops: Op[] = [];
    for (let t = 1020; t <= 2000; t += 20) ops.push(['caller', frame(t === 1520 ? 7 : 1), t]);
    // Agent audio paced at 1480 to play at 1500, for 20 ms.
    ops.push(['agent', frame(9), 1500]);
    const { streamed, reference } = both(ops, 1000);
    const wav = readWav(streamed);
    expect(wav.channels).toBe(2);
    expect(wav.sampleRate).toBe(8000);
    expect(wav.samples.length).toBe(2 * 8000);
    const at = 4000; // 500 ms into the call
    expect([wav.samples[2 * at], wav.samples[2 * at + 1], wav.samples[2 * at - 2], wav.samples[2 * at - 1]]).toEqual([7, 9, 1, 0]);
    expectSameBytes(streamed, reference);
  });

  it('appends contiguous agent frames back to back, and a clear removes what was sent ahead but not played', () => {
    const ops: Op[] = [['caller', frame(0), 20]];
    for (let i = 0; i < 10; i++) ops.push(['agent', frame(5), 20 + i * 20]); // 200 ms paced ahead
    ops.push(['clear', 60]); // barge-in 40 ms into the agent's audio
    const { streamed, reference } = both(ops);
    const wav = readWav(streamed);
    expect(wav.samples.length / 2).toBe(480);
    expect(wav.samples[2 * 479 + 1]).toBe(5);
    expectSameBytes(streamed, reference);
  });

  it('fills an inbound gap with silence so the caller leg keeps to wall time', () => {
    const { streamed, reference, rec } = both([['caller', frame(1), 20], ['caller', frame(2), 1020]]); // a second with no frames
    const wav = readWav(streamed);
    expect(wav.samples.length / 2).toBe(8160);
    expect([wav.samples[2 * 8000], wav.samples[2 * 4000]]).toEqual([2, 0]);
    expect(rec.durationMs).toBe(1020);
    expectSameBytes(streamed, reference);
  });

  it('writes the same WAV as the in-memory recorder for whole calls with jitter, gaps, stalls and barge-ins', () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const ops: Op[] = [];
      simulateCall(seed, 3, (op) => ops.push(op));
      const { streamed, reference, rec } = both(ops);
      expect([seed, rec.lateSamples]).toEqual([seed, 0]);
      expectSameBytes(streamed, reference);
    }
  });

  it('holds a bounded window over a 30-minute call and hands everything else on as it goes', () => {
    let handedOn = 0;
    let maxHeld = 0;
    let maxChunk = 0;
    const rec = new CallRecorder({ startMs: 0, output: { write: (c) => { handedOn += c.length; maxChunk = Math.max(maxChunk, c.length); } } });
    let events = 0;
    simulateCall(7, 30, (op) => {
      if (op[0] === 'caller') rec.writeCaller(op[1], op[2]);
      else if (op[0] === 'agent') rec.writeAgent(op[1], op[2]);
      else rec.clear(op[1]);
      if (++events % 50 === 0) maxHeld = Math.max(maxHeld, rec.heldBytes);
      // behind the latest event by at most the window: hold 1 s + batch 0.5 s + the pacer's lead + a stall's agent audio
      if (events % 500 === 0) expect(rec.durationMs * 32 - handedOn).toBeLessThan(10 * 32_000);
    });
    maxHeld = Math.max(maxHeld, rec.heldBytes);
    rec.end();
    // 30 minutes are ~57.6 MB of stereo PCM; the recorder never held more than its window
    // (the media clock runs a little behind the fake wall clock: frames arriving early under jitter add 20 ms each)
    expect(rec.durationMs).toBeGreaterThan(25 * 60_000);
    expect(handedOn).toBe(rec.dataBytes);
    expect(handedOn).toBe(Math.round(rec.durationMs * 8) * 4);
    expect(maxHeld).toBeLessThanOrEqual(256 * 1024);
    expect(maxChunk).toBeLessThanOrEqual(256 * 1024);
    expect(rec.lateSamples).toBe(0);
  });

  it('holds two legs of ~1.7 s (64 kB) on a steady call', () => {
    let held = 0;
    const rec = new CallRecorder({ startMs: 0, output: { write: () => undefined } });
    let playEnd = 0;
    for (let now = 20; now <= 10 * 60_000; now += 20) {
      rec.writeCaller(frame(1), now);
      while (Math.max(playEnd, now) + 20 - now <= 200) {
        rec.writeAgent(frame(2), Math.max(playEnd, now));
        playEnd = Math.max(playEnd, now) + 20;
      }
      held = Math.max(held, rec.heldBytes);
    }
    expect(held).toBe(64 * 1024);
    expect(rec.dataBytes).toBeGreaterThan((10 * 60_000 - 2000) * 32);
  });

  it('keeps recording the agent while the inbound stream is stalled, and lands the caller at wall time after it', () => {
    const ops: Op[] = [];
    for (let t = 20; t <= 1000; t += 20) ops.push(['caller', frame(1), t]);
    for (let t = 1000; t < 61_000; t += 20) ops.push(['agent', frame(2), t]); // a minute of agent audio, no caller frame
    ops.push(['caller', frame(3), 61_020]);
    const out = new MemoryRecordingOutput();
    const rec = new CallRecorder({ startMs: 0, output: out });
    let held = 0;
    for (const op of ops) {
      if (op[0] === 'caller') rec.writeCaller(op[1], op[2]);
      else if (op[0] === 'agent') rec.writeAgent(op[1], op[2]);
      held = Math.max(held, rec.heldBytes);
    }
    expect(held).toBeLessThanOrEqual(64 * 1024);
    const { streamed, reference } = both(ops);
    expectSameBytes(streamed, reference);
    const wav = readWav(streamed);
    expect(wav.samples[2 * 488_000]).toBe(3);
  });

  it('goes back to its 64 kB window after a stall of the event loop made it grow, and writes the same WAV', () => {
    // a steady call; at 10 s the process stalls for 5 s: the carrier's frames of those 5 s then arrive at once
    const ops: Op[] = [];
    let playEnd = 0;
    const steady = (from: number, to: number) => {
      for (let now = from; now <= to; now += 20) {
        ops.push(['caller', frame(1), now]);
        while (Math.max(playEnd, now) + 20 - now <= 200) {
          ops.push(['agent', frame(2), Math.max(playEnd, now)]);
          playEnd = Math.max(playEnd, now) + 20;
        }
      }
    };
    steady(20, 10_000);
    for (let i = 0; i < 250; i++) ops.push(['caller', frame(3), 15_000]);
    steady(15_020, 60_000);
    const rec = new CallRecorder({ startMs: 0, output: { write: () => undefined } });
    let held = 0;
    for (const op of ops) {
      if (op[0] === 'caller') rec.writeCaller(op[1], op[2]);
      else if (op[0] === 'agent') rec.writeAgent(op[1], op[2]);
      held = Math.max(held, rec.heldBytes);
    }
    // the first frame after the stall lands 5 s past the window's start: the window grows for it (to 160 kB),
    // hands the 5 s on and goes back to 64 kB in the same write (before, it stayed at 160 kB to the call's end)
    expect(held).toBe(64 * 1024);
    const { streamed, reference } = both(ops);
    expectSameBytes(streamed, reference);
  });

  it('cuts, counts and survives audio that arrives for a part already handed on', () => {
    const out = new MemoryRecordingOutput();
    const rec = new CallRecorder({ startMs: 0, output: out });
    for (let t = 20; t <= 5000; t += 20) rec.writeCaller(frame(1), t);
    const before = rec.dataBytes;
    expect(before).toBeGreaterThan(0);
    rec.writeAgent(frame(9, 800), 1000); // 4 s in the past: long handed on
    rec.clear(1000);
    expect(rec.lateSamples).toBe(800);
    rec.end();
    const wav = readWav(out.wav());
    expect(wav.samples.length / 2).toBe(40_000);
    expect(wav.samples.filter((s, i) => i % 2 === 1 && s !== 0)).toHaveLength(0);
  });

  it('keeps going when its output throws, handing it nothing more', () => {
    let calls = 0;
    const rec = new CallRecorder({ startMs: 0, output: { write: () => { calls++; throw new Error('disk full'); } } });
    for (let t = 20; t <= 10_000; t += 20) rec.writeCaller(frame(1), t);
    rec.end();
    expect(calls).toBe(1);
    expect(rec.durationMs).toBe(10_000);
    expect(rec.heldBytes).toBeLessThanOrEqual(64 * 1024);
  });
});
