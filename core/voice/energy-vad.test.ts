import { describe, expect, it } from '@jest/globals';
import type { VadEvent } from '../ports/voice-activity-detector.port.js';
import { BURST_FIXTURES, NON_SPEECH_FIXTURES, SPEECH_FIXTURES, readAudioFixture, speechBoundsMs } from '../../test/fixtures/audio/fixtures.js';
import { ENERGY_VAD_SPEECH_DBFS, EnergyVoiceActivityDetector, EnergyVoiceActivityDetectorFactory } from './energy-vad.js';
import { VAD_DEFAULTS, resolveVadOptions } from './vad-hysteresis.js';

const W = 256; // 32 ms at 8 kHz
/** A signal made of 32 ms windows: 'S' loud (-20 dBFS), '.' silent. */
const pattern = (p: string): Int16Array => {
  const pcm = new Int16Array(p.length * W);
  for (let w = 0; w < p.length; w++) if (p[w] === 'S') for (let i = 0; i < W; i++) pcm[w * W + i] = i % 2 ? 3277 : -3277;
  return pcm;
};

describe('EnergyVoiceActivityDetector (and the shared hysteresis)', () => {
  it('starts after minSpeechMs of consecutive loud windows, dated at the onset; stops after minSilenceMs, dated where speech ended', () => {
    const d = new EnergyVoiceActivityDetector({ sampleRate: 8000, minSpeechMs: 64, minSilenceMs: 96 });
    expect(d.push(pattern('..S.'))).toEqual([]); // one window is not enough
    expect(d.speaking).toBe(false);
    expect(d.push(pattern('SSS..S...'))).toEqual([
      { type: 'speech_start', atMs: 4 * 32 },
      { type: 'speech_stop', atMs: 10 * 32 }, // the silence after the second burst
    ]);
    expect(d.speaking).toBe(false);
  });

  it('dates the end of speech at the last loud 8 ms block of the last speech window and counts minSilenceMs from there, not from whole windows', () => {
    // three loud windows, then a window loud only in its first 8 ms (still speech as a whole: -26 dBFS), then silence
    const pcm = pattern('SSS' + '.'.repeat(20));
    for (let i = 3 * W; i < 3 * W + 64; i++) pcm[i] = i % 2 ? 3277 : -3277;
    const d = new EnergyVoiceActivityDetector({ sampleRate: 8000, minSpeechMs: 32, minSilenceMs: 300 });
    // the speech ended at 3 * 32 + 8 = 104 ms: 300 ms of silence are heard once the window ending at 416 ms is in
    // (13 windows), one window sooner than ten whole silent windows after the speech window (448 ms)
    expect(d.push(pcm.subarray(0, 12 * W))).toEqual([{ type: 'speech_start', atMs: 0 }]);
    expect(d.push(pcm.subarray(12 * W, 13 * W))).toEqual([{ type: 'speech_stop', atMs: 104 }]);
  });

  it('stops inside a window, at the first push that completes minSilenceMs of silence, when what the window holds so far is silent', () => {
    const pcm = pattern('SSS' + '.'.repeat(20));
    for (let i = 3 * W; i < 3 * W + 64; i++) pcm[i] = i % 2 ? 3277 : -3277; // speech ends at 104 ms
    const d = new EnergyVoiceActivityDetector({ sampleRate: 8000, minSpeechMs: 32, minSilenceMs: 290 });
    // 20 ms frames: 290 ms of silence have passed at 394 ms; the frame ending at 400 ms brings that (16 ms into
    // the window that ends at 416 ms, whose end came with the next frame)
    const stopAt: number[] = [];
    for (let at = 0; at < pcm.length; at += 160) if (d.push(pcm.subarray(at, at + 160)).some((e) => e.type === 'speech_stop')) stopAt.push((at + 160) / 8);
    expect(stopAt).toEqual([400]);
    // and nothing louder than the speech level in the part so far: a sound there keeps the speech going
    const loud = pattern('SSS' + '.'.repeat(20));
    for (let i = 3 * W; i < 3 * W + 64; i++) loud[i] = i % 2 ? 3277 : -3277;
    for (let i = 12 * W; i < 12 * W + 64; i++) loud[i] = i % 2 ? 3277 : -3277; // 384-392 ms: a click
    const d2 = new EnergyVoiceActivityDetector({ sampleRate: 8000, minSpeechMs: 32, minSilenceMs: 290 });
    const stops2: number[] = [];
    for (let at = 0; at < loud.length; at += 160) if (d2.push(loud.subarray(at, at + 160)).some((e) => e.type === 'speech_stop')) stops2.push((at + 160) / 8);
    expect(stops2[0]).toBeGreaterThan(400);
  });

  it('never counts less silence than minSilenceMs, and a window loud to its end starts the silence at its end', () => {
    const d = new EnergyVoiceActivityDetector({ sampleRate: 8000, minSpeechMs: 32, minSilenceMs: 300 });
    const pcm = pattern('SS' + '.'.repeat(20));
    // 64 ms of speech, then 300 ms of silence from 64 ms: the window ending at 384 ms holds only 320 - 64 = 256 ms
    expect(d.push(pcm.subarray(0, 11 * W))).toEqual([{ type: 'speech_start', atMs: 0 }]);
    expect(d.push(pcm.subarray(11 * W, 12 * W))).toEqual([{ type: 'speech_stop', atMs: 64 }]);
  });

  it('a short pause inside speech does not stop it', () => {
    const d = new EnergyVoiceActivityDetector({ sampleRate: 8000, minSpeechMs: 32, minSilenceMs: 300 });
    const events = d.push(pattern('SS........SS..........'));
    expect(events).toEqual([{ type: 'speech_start', atMs: 0 }, { type: 'speech_stop', atMs: 12 * 32 }]);
  });

  it('gives the same events whatever the push sizes, and carries partial windows across pushes', () => {
    const pcm = pattern('..SSSS...........SS.SSSS...........');
    const whole = new EnergyVoiceActivityDetector({ sampleRate: 8000 }).push(pcm);
    expect(whole.length).toBe(4);
    for (const size of [1, 160, 300, 1000]) {
      const d = new EnergyVoiceActivityDetector({ sampleRate: 8000 });
      const events: VadEvent[] = [];
      for (let i = 0; i < pcm.length; i += size) events.push(...d.push(pcm.subarray(i, i + size)));
      expect(events).toEqual(whole);
    }
  });

  it('uses 512-sample windows at 16 kHz and refuses other rates and bad bounds', () => {
    expect(resolveVadOptions({ sampleRate: 16000 })).toEqual({ sampleRate: 16000, ...VAD_DEFAULTS, windowSamples: 512 });
    expect(() => resolveVadOptions({ sampleRate: 44100 as 8000 })).toThrow(RangeError);
    expect(() => resolveVadOptions({ sampleRate: 8000, threshold: 1 })).toThrow(RangeError);
    expect(() => resolveVadOptions({ sampleRate: 8000, minSilenceMs: -1 })).toThrow(RangeError);
    const d = new EnergyVoiceActivityDetectorFactory().create({ sampleRate: 16000, minSpeechMs: 32 });
    const loud = new Int16Array(512).fill(3277);
    expect(d.push(loud.subarray(0, 511))).toEqual([]);
    expect(d.push(loud.subarray(0, 1))).toEqual([{ type: 'speech_start', atMs: 0 }]);
  });

  it('finds the fixtures\' utterances inside their bounds and nothing in silence, quiet noise or hiss', () => {
    for (const name of SPEECH_FIXTURES) {
      const wav = readAudioFixture(name);
      const { startMs, endMs } = speechBoundsMs(wav);
      const events = new EnergyVoiceActivityDetector({ sampleRate: 8000 }).push(wav.samples);
      expect(events[0]).toEqual({ type: 'speech_start', atMs: expect.any(Number) });
      expect(events[0].atMs).toBeGreaterThanOrEqual(startMs - 40);
      expect(events.at(-1)!.type).toBe('speech_stop');
      expect(events.at(-1)!.atMs).toBeLessThanOrEqual(endMs);
    }
    for (const name of NON_SPEECH_FIXTURES) {
      expect(new EnergyVoiceActivityDetector({ sampleRate: 8000 }).push(readAudioFixture(name).samples)).toEqual([]);
    }
  });

  it('rejecting flat (noise-like) windows moves no utterance\'s onset or end by more than two windows', () => {
    for (const name of SPEECH_FIXTURES) {
      const pcm = readAudioFixture(name).samples;
      const events = new EnergyVoiceActivityDetector({ sampleRate: 8000 }).push(pcm);
      const loudnessOnly = new EnergyVoiceActivityDetector({ sampleRate: 8000 }, ENERGY_VAD_SPEECH_DBFS, Infinity).push(pcm);
      expect(Math.abs(events[0].atMs - loudnessOnly[0].atMs)).toBeLessThanOrEqual(2 * 32);
      expect(Math.abs(events.at(-1)!.atMs - loudnessOnly.at(-1)!.atMs)).toBeLessThanOrEqual(2 * 32);
    }
    // the hiss is loud enough to be speech by loudness alone: flatness is what rejects it
    expect(new EnergyVoiceActivityDetector({ sampleRate: 8000 }, ENERGY_VAD_SPEECH_DBFS, Infinity).push(readAudioFixture('noise-hiss-2s').samples)[0]?.type).toBe('speech_start');
  });

  it('rejects steady white noise at any level, at 8 and 16 kHz, ', () => {
    let seed = 7;
    const noise = (n: number, amplitude: number) => {
      const pcm = new Int16Array(n);
      for (let i = 0; i < n; i++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        pcm[i] = Math.round(((seed / 0x7fffffff) * 2 - 1) * amplitude);
      }
      return pcm;
    };
    for (const rate of [8000, 16000] as const) {
      for (const amplitude of [1000, 4000, 16000]) {
        expect(new EnergyVoiceActivityDetector({ sampleRate: rate }).push(noise(rate * 5, amplitude))).toEqual([]);
      }
    }
  });

  it('a cough-like burst is loud and peaked: speech to a VAD (the barge-in rule\'s minimum duration keeps it from interrupting)', () => {
    for (const name of BURST_FIXTURES) {
      const wav = readAudioFixture(name);
      const { startMs, endMs } = speechBoundsMs(wav);
      const events = new EnergyVoiceActivityDetector({ sampleRate: 8000 }).push(wav.samples);
      expect(events.map((e) => e.type)).toEqual(['speech_start', 'speech_stop']);
      expect(events[0].atMs).toBeGreaterThanOrEqual(startMs - 40);
      expect(events[1].atMs).toBeLessThanOrEqual(endMs + 40);
      expect(events[1].atMs - events[0].atMs).toBeLessThan(300);
    }
  });
});
