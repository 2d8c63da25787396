import { describe, expect, it } from '@jest/globals';
import { mulawDecode } from './g711.js';
import { noticeTonesDurationMs, noticeTonesMulaw } from './notice-tones.js';

describe('the notice tones', () => {
  it('are whole 20 ms frames of audible, unclipped tone, about 2.8 s for two rounds', () => {
    const audio = noticeTonesMulaw();
    expect(audio.length % 160).toBe(0);
    expect(noticeTonesDurationMs()).toBeGreaterThan(2500);
    expect(noticeTonesDurationMs()).toBeLessThan(3000);
    const pcm = mulawDecode(audio);
    let peak = 0;
    for (const s of pcm) peak = Math.max(peak, Math.abs(s));
    expect(peak).toBeGreaterThan(6000);
    expect(peak).toBeLessThan(32000);
    // the first tone's middle: 913.8 Hz, about 114 zero crossings per 100 ms... counted over 50 ms
    const mid = pcm.subarray(800, 1200);
    let crossings = 0;
    for (let i = 1; i < mid.length; i++) if ((mid[i - 1]! < 0) !== (mid[i]! < 0)) crossings++;
    expect(crossings).toBeGreaterThanOrEqual(88);
    expect(crossings).toBeLessThanOrEqual(95);
  });
});
