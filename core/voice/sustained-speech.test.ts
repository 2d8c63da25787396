import { describe, expect, it } from '@jest/globals';
import { SustainedSpeech } from './sustained-speech.js';
import { EnergyVoiceActivityDetector } from './energy-vad.js';
import { readAudioFixture } from '../../test/fixtures/audio/fixtures.js';
import { longestSustainedSpeechMs } from '../../test/support/sustained-speech.js';

const loud = new Int16Array(160).fill(8000);
const quiet = new Int16Array(160);

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

