import { describe, expect, it } from '@jest/globals';
import { UtteranceGate } from './utterance-gate.js';

/** 20 ms frames of 8 bytes a ms, each filled with its own number (frame i: bytes = i % 256). */
const frame = (i: number) => new Uint8Array(160).fill(i % 256);
const frameNumbers = (chunks: Uint8Array[]) => {
  const all = chunks.flatMap((c) => [...c]);
  const out: number[] = [];
  for (let i = 0; i < all.length; i += 160) out.push(all[i]!);
  return out;
};

describe('UtteranceGate: a per-utterance STT hears speech, not the silence around it', () => {
  it('passes nothing before a start, then the kept audio from the pre-roll before the start, then everything until the stop', () => {
    const got: Uint8Array[] = [];
    const gate = new UtteranceGate((b) => got.push(b), { bytesPerMs: 8, keepMs: 1000, prerollMs: 100 });
    for (let i = 0; i < 100; i++) gate.push(frame(i)); // 2 s of silence: kept 1 s, passed nothing
    expect(got).toEqual([]);
    // the VAD says the speech started 60 ms before the newest audio (frame 99 ends at 2,000 ms): 60 + 100 ms back
    gate.speechStarted(60);
    expect(gate.passing).toBe(true);
    expect(frameNumbers(got)).toEqual([92, 93, 94, 95, 96, 97, 98, 99]);
    gate.push(frame(100));
    gate.push(frame(101));
    gate.speechStopped();
    gate.push(frame(102)); // after the stop: kept, not passed
    expect(frameNumbers(got)).toEqual([92, 93, 94, 95, 96, 97, 98, 99, 100, 101]);
    // the next utterance reaches back only to audio after the stop
    gate.push(frame(103));
    gate.speechStarted(20);
    expect(frameNumbers(got).slice(10)).toEqual([102, 103]);
  });

  it('reaches back at most what it keeps, across the ring\'s wrap', () => {
    const got: Uint8Array[] = [];
    const gate = new UtteranceGate((b) => got.push(b), { bytesPerMs: 8, keepMs: 100, prerollMs: 300 });
    for (let i = 0; i < 13; i++) gate.push(frame(i)); // 260 ms into a 100 ms ring: it wrapped
    gate.speechStarted(500);
    expect(frameNumbers(got)).toEqual([8, 9, 10, 11, 12]);
    expect(got.reduce((n, c) => n + c.length, 0)).toBe(800);
  });

  it('a chunk longer than what it keeps leaves its newest end, and a start at once passes it', () => {
    const got: Uint8Array[] = [];
    const gate = new UtteranceGate((b) => got.push(b), { bytesPerMs: 8, keepMs: 40, prerollMs: 0 });
    const long = new Uint8Array(800).map((_, i) => Math.floor(i / 160));
    gate.push(long);
    gate.speechStarted(40);
    expect(frameNumbers(got)).toEqual([3, 4]);
  });
});
