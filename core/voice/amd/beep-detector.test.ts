import { describe, expect, it } from '@jest/globals';
import { readAudioFixture, SPEECH_FIXTURES } from '../../../test/fixtures/audio/fixtures.js';
import { BeepDetector, type BeepEvent } from './beep-detector.js';
import { concatPcm } from '../../../test/support/pcm.js';

const RATE = 8000;

function tone(hz: number, ms: number, amplitude = 8000): Int16Array {
  const out = new Int16Array((ms * RATE) / 1000);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}

function noise(ms: number, amplitude: number, seed = 1): Int16Array {
  const out = new Int16Array((ms * RATE) / 1000);
  let s = seed;
  for (let i = 0; i < out.length; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    out[i] = Math.round(((s / 0x7fffffff) * 2 - 1) * amplitude);
  }
  return out;
}

const concat = (...parts: Int16Array[]) => concatPcm(parts);

/** Feeds `pcm` in 20 ms frames starting at time 0, as a carrier would. */
function run(pcm: Int16Array, detector = new BeepDetector()): BeepEvent[] {
  const events: BeepEvent[] = [];
  for (let i = 0; i < pcm.length; i += 160) events.push(...detector.push(pcm.subarray(i, i + 160), (i / RATE) * 1000));
  return events;
}

describe('BeepDetector', () => {
  it.each([440, 850, 1000, 1400, 1012, 1937, 620])('finds a %i Hz beep with its onset within 40 ms and its end', (hz) => {
    const events = run(concat(noise(700, 300), tone(hz, 500), noise(400, 300)));
    const beep = events.find((e) => e.type === 'beep');
    expect(beep).toBeDefined();
    expect(Math.abs(beep!.onsetMs - 700)).toBeLessThanOrEqual(40);
    expect(Math.abs(beep!.frequencyHz - hz)).toBeLessThanOrEqual(25);
    // reported once it lasted the minimum, not at the end
    expect(beep!.type === 'beep' && beep!.atMs).toBeLessThan(700 + 200);
    const end = events.find((e) => e.type === 'beep_end');
    expect(end).toBeDefined();
    expect(Math.abs((end as { endMs: number }).endMs - 1200)).toBeLessThanOrEqual(40);
    expect(events.filter((e) => e.type === 'beep')).toHaveLength(1);
  });

  it('finds a beep that starts mid-frame and a quiet one (-30 dBFS)', () => {
    const events = run(concat(new Int16Array(1234), tone(1000, 300, 1036)));
    const beep = events.find((e) => e.type === 'beep');
    expect(beep).toBeDefined();
    expect(Math.abs(beep!.onsetMs - 1234 / 8)).toBeLessThanOrEqual(40);
  });

  it('does not call a 60 ms tone or a click a beep', () => {
    expect(run(concat(noise(300, 200), tone(1000, 60), noise(300, 200)))).toEqual([]);
    const click = new Int16Array(4000);
    click.fill(20000, 2000, 2016);
    expect(run(click)).toEqual([]);
  });

  it('does not call noise or silence a beep', () => {
    expect(run(noise(2000, 6000))).toEqual([]);
    expect(run(new Int16Array(16000))).toEqual([]);
  });

  it('does not call a gliding tone a beep (its frequency does not hold)', () => {
    const out = new Int16Array(4000);
    let phase = 0;
    for (let i = 0; i < out.length; i++) {
      const hz = 500 + (1000 * i) / out.length; // 500 → 1500 Hz over 500 ms
      phase += (2 * Math.PI * hz) / RATE;
      out[i] = Math.round(8000 * Math.sin(phase));
    }
    expect(run(out)).toEqual([]);
  });

  it.each(SPEECH_FIXTURES)('finds no beep in the speech fixture %s', (name) => {
    expect(run(readAudioFixture(name).samples)).toEqual([]);
  });
});
