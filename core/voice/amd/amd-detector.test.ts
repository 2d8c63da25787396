import { describe, expect, it } from '@jest/globals';
import { AmdDetector, type AmdEvent } from './amd-detector.js';

const decision = (events: AmdEvent[]) => events.find((e) => e.type === 'decision');

/** Loud noise-like PCM (speech level for the long-greeting rule) or silence, in 20 ms frames from `fromMs`. */
function feed(d: AmdDetector, fromMs: number, toMs: number, loud: boolean): AmdEvent[] {
  const events: AmdEvent[] = [];
  for (let t = fromMs; t < toMs; t += 20) {
    const pcm = new Int16Array(160);
    if (loud) for (let i = 0; i < pcm.length; i++) pcm[i] = (i * 7919) % 4001 - 2000;
    events.push(...d.audio(pcm, t));
  }
  return events;
}

describe('AmdDetector', () => {
  it('a short "Hello?" then silence is a human, decided once the pause is long enough', () => {
    const d = new AmdDetector();
    const events = [...d.speechStarted(400), ...d.transcript('Hello?', true, 900), ...d.speechStopped(800)];
    expect(decision(events)).toBeUndefined();
    events.push(...d.advance(1400));
    expect(decision(events)).toBeUndefined();
    events.push(...d.advance(1500));
    expect(decision(events)).toMatchObject({ result: { verdict: 'human', source: 'heuristic', decidedAtMs: 1500 } });
    expect(d.result?.reason).toMatch(/short greeting \(400 ms\)/);
  });

  it('speech going on past 2.6 s is a machine, decided at that moment; pauses under 700 ms do not break it', () => {
    const d = new AmdDetector();
    const events = [...d.speechStarted(300), ...d.speechStopped(1500), ...d.advance(2000), ...d.speechStarted(2000)];
    expect(decision(events)).toBeUndefined();
    events.push(...d.advance(2899));
    expect(decision(events)).toBeUndefined();
    events.push(...d.advance(2900));
    expect(decision(events)).toMatchObject({ result: { verdict: 'machine', decidedAtMs: 2900 } });
    expect(d.result?.reason).toMatch(/longer than 2600 ms/);
  });

  it('with audio, the long-greeting rule counts loud audio, not the VAD hangover after the speech ended', () => {
    const d = new AmdDetector();
    d.speechStarted(0);
    // 2.4 s of speech, then silence; the VAD reports the stop 300 ms later, at 2.7 s of audio
    const events = [...feed(d, 0, 2400, true), ...feed(d, 2400, 2700, false), ...d.speechStopped(2400)];
    expect(decision(events)).toBeUndefined();
    const d2 = new AmdDetector();
    d2.speechStarted(0);
    expect(decision(feed(d2, 0, 2700, true))).toMatchObject({ result: { verdict: 'machine', decidedAtMs: 2600 } });
  });

  it('a strong voicemail phrase decides at once, even in an interim', () => {
    const d = new AmdDetector();
    d.speechStarted(200);
    const events = d.transcript("Hi, you've reached Sam, please leave a", false, 1100);
    expect(decision(events)).toBeUndefined();
    expect(decision(d.transcript("Hi, you've reached Sam, please leave a message", false, 1300))).toMatchObject({
      result: { verdict: 'machine', reason: 'voicemail phrase "leave a message"', decidedAtMs: 1300 },
    });
  });

  it('a medium greeting: a weak phrase, many words or a late start → machine; few words → human', () => {
    const weak = new AmdDetector();
    weak.speechStarted(300);
    weak.transcript("You've reached Acme Dental", true, 2200);
    weak.speechStopped(2100);
    expect(decision(weak.advance(2800))).toMatchObject({ result: { verdict: 'machine', reason: expect.stringContaining('you have reached') } });

    const many = new AmdDetector();
    many.speechStarted(300);
    many.transcript('Hi there, Sam and Alex here, we are out today, talk soon', true, 2300);
    many.speechStopped(2200);
    expect(decision(many.advance(2900))).toMatchObject({ result: { verdict: 'machine', reason: expect.stringContaining('12 words') } });

    const late = new AmdDetector();
    late.speechStarted(2600);
    late.transcript('Hello, Sam speaking', true, 4500);
    late.speechStopped(4400);
    expect(decision(late.advance(5100))).toMatchObject({ result: { verdict: 'machine', reason: expect.stringContaining('2600 ms of silence') } });

    const few = new AmdDetector();
    few.speechStarted(300);
    few.transcript('Hello, Sam speaking, yes?', true, 2200);
    few.speechStopped(2100);
    expect(decision(few.advance(2800))).toMatchObject({ result: { verdict: 'human', reason: expect.stringContaining('4 words') } });
  });

  it('with a classifier, an unsure greeting asks once and the answer decides', () => {
    const d = new AmdDetector({ classifier: true });
    d.speechStarted(300);
    d.transcript('Good afternoon, Sam speaking', true, 2200);
    d.speechStopped(2100);
    const events = [...d.advance(2800), ...d.advance(2900)];
    expect(events.filter((e) => e.type === 'classify')).toEqual([{ type: 'classify', text: 'Good afternoon, Sam speaking', atMs: 2800 }]);
    expect(decision(events)).toBeUndefined();
    expect(decision(d.classified('machine', 3400))).toMatchObject({ result: { verdict: 'machine', source: 'llm', decidedAtMs: 3400 } });
  });

  it('with a classifier, a long greeting is judged by the model first (a person who talks on)', () => {
    const d = new AmdDetector({ classifier: true });
    d.speechStarted(300);
    d.transcript('Hello, yes, this is Sam Carter speaking', false, 2500);
    const events = d.advance(2900);
    expect(events).toEqual([{ type: 'classify', text: 'Hello, yes, this is Sam Carter speaking', atMs: 2900 }]);
    expect(decision(d.classified('human', 3300))).toMatchObject({ result: { verdict: 'human', source: 'llm' } });

    const failing = new AmdDetector({ classifier: true });
    failing.speechStarted(300);
    failing.transcript('Thanks for calling Acme Dental', false, 2500);
    failing.advance(2900);
    expect(decision(failing.classified(null, 3300))).toMatchObject({ result: { verdict: 'machine', source: 'heuristic', reason: 'a greeting longer than 2600 ms' } });
  });

  it('a classifier that fails falls back to the word rule', () => {
    const d = new AmdDetector({ classifier: true });
    d.speechStarted(300);
    d.transcript('Good afternoon, Sam speaking', true, 2200);
    d.speechStopped(2100);
    d.advance(2800);
    expect(decision(d.classified(null, 3000))).toMatchObject({ result: { verdict: 'human', source: 'heuristic' } });
  });

  it('no speech → unknown at 4 s; undecided → unknown at 5 s (relative to startMs)', () => {
    const silent = new AmdDetector({ startMs: 10_000 });
    expect(decision(silent.advance(13_999))).toBeUndefined();
    expect(decision(silent.advance(14_000))).toMatchObject({ result: { verdict: 'unknown', source: 'timeout', reason: 'no speech in 4000 ms', decidedAtMs: 14_000 } });

    const waiting = new AmdDetector({ classifier: true, startMs: 10_000 });
    waiting.speechStarted(10_300);
    waiting.transcript('Good afternoon, Sam speaking', true, 12_200);
    waiting.speechStopped(12_100);
    waiting.advance(12_900);
    expect(decision(waiting.advance(15_000))).toMatchObject({ result: { verdict: 'unknown', reason: 'no decision in 5000 ms' } });
  });

  it('a beep decides machine and its end is the greeting end', () => {
    const d = new AmdDetector();
    const tone = (from: number, ms: number) => {
      const events: AmdEvent[] = [];
      for (let t = 0; t < ms; t += 20) {
        const pcm = new Int16Array(160);
        for (let i = 0; i < 160; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 1000 * ((t / 1000) * 8000 + i)) / 8000));
        events.push(...d.audio(pcm, from + t));
      }
      return events;
    };
    const events = [...feed(d, 0, 1000, false), ...tone(1000, 400), ...feed(d, 1400, 1600, false)];
    expect(events.find((e) => e.type === 'beep')).toMatchObject({ frequencyHz: 1000 });
    expect(decision(events)).toMatchObject({ result: { verdict: 'machine', reason: expect.stringContaining('1000 Hz beep') } });
    const ended = events.find((e) => e.type === 'greeting_ended');
    expect(ended).toMatchObject({ beep: true, reason: 'the beep ended' });
    expect(Math.abs((ended as { atMs: number }).atMs - 1400)).toBeLessThanOrEqual(40);
  });

  it('after a machine decision without a beep, 1.5 s of silence after the greeting ends it', () => {
    const d = new AmdDetector();
    d.speechStarted(300);
    d.advance(2900);
    expect(d.result?.verdict).toBe('machine');
    d.speechStopped(5200);
    expect(d.advance(6699).some((e) => e.type === 'greeting_ended')).toBe(false);
    // speech again resets the wait
    d.speechStarted(6000);
    d.speechStopped(6400);
    expect(d.advance(7899).some((e) => e.type === 'greeting_ended')).toBe(false);
    expect(d.advance(7900)).toEqual([{ type: 'greeting_ended', atMs: 7900, beep: false, reason: '1500 ms of silence after the greeting' }]);
  });

  it('a greeting that never ends is over 20 s after the decision', () => {
    const d = new AmdDetector();
    d.speechStarted(0);
    d.advance(2600);
    expect(d.advance(22_600)).toEqual([{ type: 'greeting_ended', atMs: 22_600, beep: false, reason: 'no end of the greeting heard in 20000 ms' }]);
  });

  it('adopts a decision made elsewhere and still finds the greeting end for it', () => {
    const d = new AmdDetector();
    d.speechStarted(100);
    d.speechStopped(600);
    d.advance(1300);
    expect(d.result?.verdict).toBe('human');
    d.adopt({ verdict: 'machine', source: 'carrier', reason: 'answered_by=machine_start' }, 1400);
    expect(d.advance(2100)).toEqual([{ type: 'greeting_ended', atMs: 2100, beep: false, reason: '1500 ms of silence after the greeting' }]);
  });
});
