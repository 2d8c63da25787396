import { describe, expect, it } from '@jest/globals';
import { SILENCE_DBFS, frameLevelsDbfs, rmsDbfs } from './energy.js';

describe('rmsDbfs', () => {
  it('is 0 dBFS for a full-scale square wave, about -3 dBFS for a full-scale sine, and the floor for silence', () => {
    expect(rmsDbfs(Int16Array.from({ length: 160 }, (_, i) => (i % 2 ? 32767 : -32768)))).toBeCloseTo(0, 3);
    const sine = Int16Array.from({ length: 8000 }, (_, i) => Math.round(32767 * Math.sin((2 * Math.PI * 1000 * i) / 8000)));
    expect(rmsDbfs(sine)).toBeCloseTo(-3.01, 1);
    expect(rmsDbfs(new Int16Array(160))).toBe(SILENCE_DBFS);
    expect(rmsDbfs(new Int16Array(0))).toBe(SILENCE_DBFS);
    expect(rmsDbfs(Int16Array.of(0, 0, 328, 328), 2)).toBeCloseTo(-40, 1);
  });

  it('measures whole frames only', () => {
    const pcm = new Int16Array(500);
    pcm.fill(3277, 160, 320); // frame 1 at -20 dBFS
    const levels = frameLevelsDbfs(pcm, 160);
    expect(levels.length).toBe(3);
    expect([levels[0], Math.round(levels[1]), levels[2]]).toEqual([SILENCE_DBFS, -20, SILENCE_DBFS]);
    expect(() => frameLevelsDbfs(pcm, 0)).toThrow(RangeError);
  });
});
