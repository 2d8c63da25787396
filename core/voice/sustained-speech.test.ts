import { describe, expect, it } from '@jest/globals';
import { SustainedSpeech } from './sustained-speech.js';
import { EnergyVoiceActivityDetector } from './energy-vad.js';
import { readAudioFixture } from '../../test/fixtures/audio/fixtures.js';
import { longestSustainedSpeechMs } from '../../test/support/sustained-speech.js';
import { concatPcm } from '../../test/support/pcm.js';

const loud = new Int16Array(160).fill(8000);
const quiet = new Int16Array(160);

/** `n` samples of uniform white noise whose RMS is `dbfs` (a fixed seed: the same noise every run). */
function whiteNoise(n: number, dbfs: number, seed = 7): Int16Array {
  const amplitude = Math.sqrt(3) * 32768 * 10 ** (dbfs / 20); // uniform on [-a, a]: RMS a / √3
  const pcm = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    pcm[i] = Math.round(((seed / 0x7fffffff) * 2 - 1) * amplitude);
  }
  return pcm;
}

/** `pcm` pushed in 20 ms frames from stream time 0; the run's onset after its first loud frame and that frame's start. */
function onsetOf(pcm: Int16Array, s = new SustainedSpeech()): { startMs: number | undefined; firstLoudMs: number | undefined } {
  let firstLoudMs: number | undefined;
  for (let i = 0; i < pcm.length && firstLoudMs === undefined; i += 160) {
    s.push(pcm.subarray(i, i + 160), (i + 160) / 8, 20);
    if (s.startMs !== undefined) firstLoudMs = i / 8;
  }
  return { startMs: s.startMs, firstLoudMs };
}

const join = (...parts: Int16Array[]) => concatPcm(parts);
const tone = (ms: number, amplitude: number) => Int16Array.from({ length: ms * 8 }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * 200 * i) / 8000)));

describe('SustainedSpeech', () => {
  it('measures a voiced run through short gaps and forgets it after a pause', () => {
    const s = new SustainedSpeech();
    let t = 0;
    const push = (pcm: Int16Array, n: number) => {
      for (let i = 0; i < n; i++) s.push(pcm, (t += 20), 20);
    };
    push(quiet, 5);
    expect(s.durationMs).toBe(0);
    push(loud, 10);
    expect(s.startMs).toBe(100);
    expect(s.durationMs).toBe(200);
    push(quiet, 4); // 80 ms between words
    push(loud, 5);
    expect(s.durationMs).toBe(380);
    push(quiet, 6); // a pause: the run is over
    expect(s.durationMs).toBe(0);
    expect(s.startMs).toBeUndefined();
  });

  it('counts only what the VAD calls speech: loud noise never builds a run, however long', () => {
    const s = new SustainedSpeech();
    let t = 0;
    let judgedTo = 0;
    let longest = 0;
    /** 20 ms frames; a VAD verdict per 32 ms window, `speech` deciding it. */
    const play = (pcm: Int16Array, ms: number, speech: (windowEnd: number) => boolean) => {
      for (let end = t + 20; end <= t + ms; end += 20) {
        s.push(pcm, end, 20);
        while (judgedTo + 32 <= end) {
          judgedTo += 32;
          s.judge(speech(judgedTo), judgedTo);
        }
        longest = Math.max(longest, s.durationMs);
      }
      t += ms;
    };
    play(loud, 10_000, () => false); // 10 s of hiss
    expect(longest).toBeLessThanOrEqual(100 + 32);
    play(quiet, 400, () => false);
    longest = 0;
    // speech whose first two windows sound like noise (an "s") keeps its onset at the first loud frame
    const onset = t;
    play(loud, 600, (end) => end - onset > 64);
    expect(s.startMs).toBe(onset);
    expect(s.durationMs).toBe(600);
    // speech that turns into noise stops counting one window after the VAD's last speech verdict
    const speechEnd = t + 200;
    play(loud, 600, (end) => end <= speechEnd);
    expect(s.durationMs).toBeLessThanOrEqual(speechEnd - onset + 32);
  });

  it("dates a soft onset where its sound becomes audible: the bench's barge-in fixture 8 ms before its first loud frame", () => {
    // bench/voice.mjs plays barge-in-long without its first 500 ms: 4 ms blocks of -100, -100, -69.6, -41.6, -38.8
    // dBFS (-44.0 as a frame: not loud), then a frame of -39.6 (loud). Audible (≥ -50 dBFS) from 12 ms.
    const audio = join(new Int16Array(800), readAudioFixture('barge-in-long').samples.subarray(4000));
    expect(onsetOf(audio)).toEqual({ startMs: 100 + 12, firstLoudMs: 100 + 20 });
    // without the look-back (the rule until 2026-11-29) the run is dated at its first loud frame
    expect(onsetOf(audio, new SustainedSpeech(undefined, undefined, undefined, undefined, 0)).startMs).toBe(120);
    // a synthetic one: 8 ms of silence and 12 ms of breath at -45 dBFS before a loud frame
    expect(onsetOf(join(new Int16Array(800 + 64), whiteNoise(96, -45), tone(100, 8000))).startMs).toBe(108);
  });

  it('keeps a hard onset where it was: at its loud frame, never later inside it nor earlier', () => {
    expect(onsetOf(join(new Int16Array(800), tone(100, 8000)))).toEqual({ startMs: 100, firstLoudMs: 100 });
    // the sound starts 12 ms into the frame (loud as a frame all the same): the run keeps the frame's start
    expect(onsetOf(join(new Int16Array(800 + 96), tone(100, 8000)))).toEqual({ startMs: 100, firstLoudMs: 100 });
    // a click under the floor (-60 dBFS) just before it moves nothing
    expect(onsetOf(join(new Int16Array(800 - 32), whiteNoise(32, -60), tone(100, 8000))).startMs).toBe(100);
  });

  it('looks back at most one frame, and only to where the sound began: a line of -45 dBFS noise adds no speech', () => {
    // steady noise between the floor (-50) and the loud level (-40): sound in every block, so the stretch into the
    // loud frame began long before; dating it a frame early would count 20 ms of noise on every run
    expect(onsetOf(join(whiteNoise(8000, -45), tone(300, 8000))).startMs).toBe(1000);
    // noise that began only 8 ms before the speech cannot be told from a breath: the run is dated with it (bounded)
    expect(onsetOf(join(new Int16Array(8000 - 64), whiteNoise(64, -45), tone(300, 8000))).startMs).toBe(992);
    // a soft onset longer than the look-back (30 ms at -45 dBFS): no credit at all, as before
    expect(onsetOf(join(new Int16Array(8000 - 240), whiteNoise(240, -45), tone(300, 8000))).startMs).toBe(1000);
    // noise hovering at the floor dips under it now and then: runs on it are dated up to one frame early, never
    // more, and on average a few ms (3.1 over these 200 seeds)
    let earlyMs = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const early = 1000 - onsetOf(join(whiteNoise(8000, -50, seed), tone(300, 8000))).startMs!;
      expect(early).toBeGreaterThanOrEqual(0);
      expect(early).toBeLessThanOrEqual(20);
      earlyMs += early;
    }
    expect(earlyMs / 200).toBeLessThan(5);
  });

  it('with the energy VAD, the quick "yeah" and the cough stay under the 300 ms default; "uh-huh" and "mm-hmm" pass it', () => {
    const longest = (name: 'yeah' | 'cough' | 'uh-huh' | 'mm-hmm') => longestSustainedSpeechMs((options) => new EnergyVoiceActivityDetector(options), readAudioFixture(name).samples);
    // shorter than interruption_min_speech_ms: these never interrupt the agent, whatever the STT
    expect(longest('yeah')).toBeLessThan(300);
    expect(longest('cough')).toBeLessThan(300);
    // longer: at the default only their words can spare the agent (a streaming STT's words in time), else the
    // barge-in is judged false afterwards and the agent resumes (docs/voice.md, rule 2)
    expect(longest('uh-huh')).toBeGreaterThanOrEqual(300);
    expect(longest('mm-hmm')).toBeGreaterThanOrEqual(300);
  });
});

