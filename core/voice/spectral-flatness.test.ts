import { describe, expect, it } from '@jest/globals';
import { readAudioFixture } from '../../test/fixtures/audio/fixtures.js';
import { rmsDbfs } from './energy.js';
import { spectralFlatness } from './spectral-flatness.js';

const tone = (hz: number, n = 256, rate = 8000) => Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate)));

/** Flatness of each loud (≥ -40 dBFS) 32 ms window of a fixture. */
function loudWindows(name: Parameters<typeof readAudioFixture>[0]): number[] {
  const pcm = readAudioFixture(name).samples;
  const out: number[] = [];
  for (let i = 0; i + 256 <= pcm.length; i += 256) {
    const w = pcm.subarray(i, i + 256);
    if (rmsDbfs(w) >= -40) out.push(spectralFlatness(w, 8000));
  }
  return out;
}

describe('spectralFlatness', () => {
  it('is near 0 for tones (also one near Nyquist, outside the band) and 1 for digital silence', () => {
    for (const hz of [300, 440, 1000, 3000]) expect(spectralFlatness(tone(hz), 8000)).toBeLessThan(0.05);
    expect(spectralFlatness(tone(440, 512, 16000), 16000)).toBeLessThan(0.05);
    expect(spectralFlatness(Int16Array.from({ length: 256 }, (_, i) => (i % 2 ? 3277 : -3277)), 8000)).toBe(0);
    expect(spectralFlatness(new Int16Array(256), 8000)).toBeCloseTo(1, 9);
  });

  it('tells the hiss fixture (every window flat) from the vowels of the speech fixtures', () => {
    const hiss = loudWindows('noise-hiss-2s');
    expect(hiss.length).toBe(62);
    expect(Math.min(...hiss)).toBeGreaterThan(0.65);
    // most windows of an utterance are voiced: peaked
    for (const name of ['yes-i-will-attend', 'uh-huh', 'mm-hmm', 'barge-in-long'] as const) {
      const speech = loudWindows(name);
      expect(speech.filter((f) => f < 0.3).length / speech.length).toBeGreaterThan(0.85);
    }
  });

  it('refuses windows that are not a power of two', () => {
    expect(() => spectralFlatness(new Int16Array(160), 8000)).toThrow(RangeError);
  });
});
