import { describe, expect, it } from '@jest/globals';
import type { VadEvent } from '../../core/ports/voice-activity-detector.port.js';
import { createResampler } from '../../core/voice/resample.js';
import { NON_SPEECH_FIXTURES, SPEECH_FIXTURES, readAudioFixture, speechBoundsMs } from '../../test/fixtures/audio/fixtures.js';
import { sharedSileroSession, sileroSessionsCreated } from './silero-session.js';
import { SileroVoiceActivityDetector, SileroVoiceActivityDetectorFactory } from './silero-vad.js';

/** Pushes `pcm` in 20 ms frames, as a carrier delivers it. */
function feed(d: { push(p: Int16Array): VadEvent[] }, pcm: Int16Array, frame = 160): VadEvent[] {
  const events: VadEvent[] = [];
  for (let i = 0; i < pcm.length; i += frame) events.push(...d.push(pcm.subarray(i, i + frame)));
  return events;
}

const factory = new SileroVoiceActivityDetectorFactory();

describe('Silero VAD on the speech fixtures', () => {
  for (const name of SPEECH_FIXTURES) {
    it(`${name}: speech starts and stops inside the utterance, at 8 kHz and at 16 kHz`, () => {
      const wav = readAudioFixture(name);
      const { startMs, endMs } = speechBoundsMs(wav);
      for (const [rate, pcm] of [[8000, wav.samples], [16000, createResampler(8000, 16000).process(wav.samples)]] as const) {
        const d = factory.create({ sampleRate: rate });
        const events = feed(d, pcm, rate / 50);
        expect(events.length).toBeGreaterThanOrEqual(2);
        expect(events[0].type).toBe('speech_start');
        expect(events.at(-1)!.type).toBe('speech_stop');
        for (const [i, e] of events.entries()) {
          expect(e.type).toBe(i % 2 === 0 ? 'speech_start' : 'speech_stop');
          expect(e.atMs).toBeGreaterThanOrEqual(startMs - 40);
          expect(e.atMs).toBeLessThanOrEqual(endMs);
        }
        // speech starts within 150 ms of the utterance's onset
        expect(events[0].atMs).toBeLessThanOrEqual(startMs + 150);
        expect(d.speaking).toBe(false);
      }
    });
  }

  for (const name of NON_SPEECH_FIXTURES) {
    it(`${name}: no speech_start`, () => {
      const wav = readAudioFixture(name);
      expect(feed(factory.create({ sampleRate: 8000 }), wav.samples)).toEqual([]);
      // without the gate, the model itself rejects it
      const ungated = new SileroVoiceActivityDetectorFactory({ gateDbfs: -Infinity }).create({ sampleRate: 8000 });
      expect(feed(ungated, wav.samples)).toEqual([]);
    });
  }

  it('the energy gate skips inference on silence and quiet noise but lets loud hiss through to the model', () => {
    const quiet = factory.create({ sampleRate: 8000 }) as SileroVoiceActivityDetector;
    feed(quiet, readAudioFixture('noise-low-2s').samples);
    expect(quiet.counts).toEqual({ inferred: 0, gated: 62, failed: 0 });
    const hiss = factory.create({ sampleRate: 8000 }) as SileroVoiceActivityDetector;
    feed(hiss, readAudioFixture('noise-hiss-2s').samples);
    expect(hiss.counts).toEqual({ inferred: 62, gated: 0, failed: 0 });
  });

  it('reports speech onset and end in stream time, whatever the push sizes', () => {
    const pcm = readAudioFixture('yes-i-will-attend').samples;
    const byFrames = feed(factory.create({ sampleRate: 8000 }), pcm);
    expect(factory.create({ sampleRate: 8000 }).push(pcm)).toEqual(byFrames);
    expect(feed(factory.create({ sampleRate: 8000 }), pcm, 37)).toEqual(byFrames);
  });
});

describe('one shared session, state per call', () => {
  it('50 detectors share one inference session; the process creates it once', () => {
    const session = sharedSileroSession();
    const f = new SileroVoiceActivityDetectorFactory();
    expect(f.warmUp()).toBe(session);
    const detectors = Array.from({ length: 50 }, () => f.create({ sampleRate: 8000 }));
    const pcm = readAudioFixture('uh-huh').samples;
    const inferencesBefore = session.inferences;
    const results = detectors.map((d) => JSON.stringify(feed(d, pcm)));
    expect(new Set(results).size).toBe(1);
    expect(session.inferences - inferencesBefore).toBe(50 * (detectors[0] as SileroVoiceActivityDetector).counts.inferred);
    expect(sileroSessionsCreated()).toBe(1);
  });

  it('two calls interleaved frame by frame get exactly what each gets alone', () => {
    const a = readAudioFixture('barge-in-long').samples;
    const b = readAudioFixture('hello-who-is-this').samples;
    const aloneA = feed(factory.create({ sampleRate: 8000 }), a);
    const aloneB = feed(factory.create({ sampleRate: 8000 }), b);
    const da = factory.create({ sampleRate: 8000 });
    const db = factory.create({ sampleRate: 8000 });
    const ea: VadEvent[] = [];
    const eb: VadEvent[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i += 160) {
      ea.push(...da.push(a.subarray(i, i + 160)));
      eb.push(...db.push(b.subarray(i, i + 160)));
    }
    expect(ea).toEqual(aloneA);
    expect(eb).toEqual(aloneB);
    expect(aloneB.length).toBe(4); // "Hello?" ... "Who is this?": two utterances
  });

  it('reset forgets the model state: the same audio afterwards gives the same events as a fresh detector', () => {
    const pcm = readAudioFixture('can-you-repeat-that').samples;
    const d = factory.create({ sampleRate: 8000 });
    const first = feed(d, pcm);
    feed(d, readAudioFixture('barge-in-long').samples.subarray(0, 12000)); // stop mid-speech
    d.reset();
    expect(d.speaking).toBe(false);
    const offset = (pcm.length + 12000) / 8; // stream time keeps running
    expect(feed(d, pcm).map((e) => ({ ...e, atMs: e.atMs - offset }))).toEqual(first);
  });

  it('an inference failure scores the window 0 and is counted; push never throws', () => {
    const real = sharedSileroSession();
    let fail = true;
    const flaky = { modelPath: real.modelPath, inferences: 0, openStream: (r: 8000 | 16000) => real.openStream(r), infer: (st: ReturnType<typeof real.openStream>) => {
      if (fail) throw new Error('runtime failed');
      return real.infer(st);
    } };
    const d = new SileroVoiceActivityDetector(flaky, { sampleRate: 8000 });
    const pcm = readAudioFixture('yes-i-will-attend').samples;
    expect(feed(d, pcm)).toEqual([]);
    expect(d.counts.failed).toBe(d.counts.inferred + d.counts.failed);
    expect(d.counts.failed).toBeGreaterThan(0);
    fail = false;
    expect(feed(d, pcm).map((e) => e.type)).toEqual(['speech_start', 'speech_stop']);
  });

  it('a model file that is not Silero v5 is refused when the session is created', () => {
    const f = new SileroVoiceActivityDetectorFactory({ modelPath: '/nonexistent/silero.onnx' });
    expect(() => f.create({ sampleRate: 8000 })).toThrow();
    expect(() => factory.create({ sampleRate: 44100 as 8000 })).toThrow(RangeError);
  });
});
