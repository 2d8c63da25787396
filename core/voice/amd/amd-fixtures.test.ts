import { describe, expect, it } from '@jest/globals';
import { AMD_FIXTURE_NAMES, readAmdFixture } from '../../../test/fixtures/amd/fixtures.js';
import { EnergyVoiceActivityDetector } from '../energy-vad.js';
import { replayAnswer } from './amd-replay.js';

const replay = (name: string, opts: { text?: boolean } = {}) => {
  const f = readAmdFixture(name);
  return { f, out: replayAnswer(f.samples, opts.text === false ? '' : f.transcript, { vad: new EnergyVoiceActivityDetector({ sampleRate: 8000 }) }) };
};

describe('AMD on the recorded fixtures (energy VAD, scripted STT)', () => {
  it('ships human and voicemail answers, with and without beeps', () => {
    const fixtures = AMD_FIXTURE_NAMES.map(readAmdFixture);
    expect(fixtures.filter((f) => f.expected === 'human').length).toBeGreaterThanOrEqual(3);
    expect(fixtures.filter((f) => f.expected === 'machine' && f.beep).length).toBeGreaterThanOrEqual(2);
    expect(fixtures.filter((f) => f.expected === 'machine' && !f.beep).length).toBeGreaterThanOrEqual(1);
  });

  // Known misses, pinned so a change shows: a person who talks on for 3 s is called a machine by the
  // long-greeting rule (only a configured model can save it), and a 1.3 s "Sam. Leave a message." needs its words.
  const missWithText = ['human-long-answer'];
  const missAudioOnly = ['human-long-answer', 'vm-short-beep-950'];

  it.each(AMD_FIXTURE_NAMES)('%s: the expected verdict within 5 s of the answer (audio and transcript)', (name) => {
    const { f, out } = replay(name);
    expect(out.result?.verdict === f.expected).toBe(!missWithText.includes(name));
    expect(out.result!.decidedAtMs!).toBeLessThanOrEqual(5000);
  });

  it.each(AMD_FIXTURE_NAMES)('%s: audio and timing alone (no transcript)', (name) => {
    const { f, out } = replay(name, { text: false });
    expect(out.result?.verdict === f.expected).toBe(!missAudioOnly.includes(name));
  });

  it.each(AMD_FIXTURE_NAMES.filter((n) => readAmdFixture(n).beep))('%s: the beep is found within 40 ms of its onset and the message waits for its end', (name) => {
    const { f, out } = replay(name);
    expect(out.beepOnsetMs).not.toBeNull();
    expect(Math.abs(out.beepOnsetMs! - f.beep!.onset_ms)).toBeLessThanOrEqual(40);
    const ended = out.events.find((e) => e.type === 'greeting_ended');
    expect(ended).toMatchObject({ beep: true });
    expect(out.result?.verdict).toBe('machine');
    expect(Math.abs(out.greetingEndedAtMs! - f.beep!.end_ms)).toBeLessThanOrEqual(40);
  });

  it.each(AMD_FIXTURE_NAMES.filter((n) => readAmdFixture(n).expected === 'machine' && !readAmdFixture(n).beep))(
    '%s: without a beep, the greeting ends after the speech, never during it',
    (name) => {
      const { f, out } = replay(name);
      expect(out.events.some((e) => e.type === 'beep')).toBe(false);
      expect(out.greetingEndedAtMs).not.toBeNull();
      expect(out.greetingEndedAtMs!).toBeGreaterThanOrEqual(f.speech_ms[1]);
      expect(out.greetingEndedAtMs!).toBeLessThanOrEqual(f.speech_ms[1] + 2000);
    },
  );
});
