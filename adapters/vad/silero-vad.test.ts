import { describe, expect, it } from '@jest/globals';
import type { VadEvent } from '../../core/ports/voice-activity-detector.port.js';
import { createResampler } from '../../core/voice/resample.js';
import { NON_SPEECH_FIXTURES, SPEECH_FIXTURES, readAudioFixture, speechBoundsMs } from '../../test/fixtures/audio/fixtures.js';
import { EnergyVoiceActivityDetector } from '../../core/voice/energy-vad.js';
import { SileroBatcher, type SileroBatchClient } from './silero-batcher.js';
import { SILERO_STATE_LENGTH, sharedSileroSession, sileroInputLength, sileroSessionsCreated, type SileroSession } from './silero-session.js';
import { SileroVoiceActivityDetector, SileroVoiceActivityDetectorFactory } from './silero-vad.js';
import { longestSustainedSpeechMs } from '../../test/support/sustained-speech.js';
import { SOUND_FLOOR_DBFS } from '../../core/voice/energy.js';
import { SILERO_GATE_DBFS } from './silero-vad.js';

/** Pushes `pcm` in 20 ms frames, as a carrier delivers it (scores synchronously: maxWaitMs 0). */
function feed(d: { push(p: Int16Array): VadEvent[] }, pcm: Int16Array, frame = 160): VadEvent[] {
  const events: VadEvent[] = [];
  for (let i = 0; i < pcm.length; i += frame) events.push(...d.push(pcm.subarray(i, i + frame)));
  return events;
}

/** One window at a time, scored during `push`, as before batching. */
const factory = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 0 });

/** A detector of `f` whose events (returned or delivered later) land in `events`. */
function listening(f: SileroVoiceActivityDetectorFactory, rate: 8000 | 16000 = 8000) {
  const events: VadEvent[] = [];
  const d = f.create({ sampleRate: rate, onEvent: (e) => events.push(e) }) as SileroVoiceActivityDetector;
  return { d, events, push: (pcm: Int16Array) => void events.push(...d.push(pcm)) };
}

/** Feeds several calls frame by frame, interleaved, through one batching factory; a batch runs every `every` frames. */
function interleaved(f: SileroVoiceActivityDetectorFactory, audios: Int16Array[], every = 1) {
  const calls = audios.map(() => listening(f));
  const longest = Math.max(...audios.map((a) => a.length));
  for (let i = 0, frame = 0; i < longest; i += 160, frame++) {
    audios.forEach((a, k) => {
      if (i < a.length) calls[k].push(a.subarray(i, i + 160));
    });
    if (frame % every === every - 1) f.flush();
  }
  f.flush();
  return calls;
}

describe('Silero VAD on the speech fixtures', () => {
  it('measures the quick "yeah" and the cough under the 300 ms barge-in default, "uh-huh" and "mm-hmm" over it', () => {
    const longest = (name: 'yeah' | 'cough' | 'uh-huh' | 'mm-hmm') => longestSustainedSpeechMs((options) => factory.create(options), readAudioFixture(name).samples);
    expect(longest('yeah')).toBeLessThan(300);
    expect(longest('cough')).toBeLessThan(300);
    expect(longest('uh-huh')).toBeGreaterThanOrEqual(300);
    expect(longest('mm-hmm')).toBeGreaterThanOrEqual(300);
    // the barge-in onset's sound floor (core/voice/sustained-speech.ts) is the gate's level: under it, no speech
    expect(SOUND_FLOOR_DBFS).toBe(SILERO_GATE_DBFS);
  });

  it('dates the end of speech where the sound falls under the gate (8 ms blocks), not at the start of the first silent window', () => {
    // "yes, I will attend" fades out to digital silence; the sound ends at the last 8 ms block of -50 dBFS or more
    const { samples } = readAudioFixture('yes-i-will-attend');
    let lastSound = 0;
    for (let i = 0; i + 64 <= samples.length; i += 64) {
      let sum = 0;
      for (let k = i; k < i + 64; k++) sum += samples[k] * samples[k];
      if (10 * Math.log10(sum / 64 / 32768 ** 2) >= -50) lastSound = ((i + 64) * 1000) / 8000;
    }
    const stops = (gateDbfs: number) => feed(new SileroVoiceActivityDetectorFactory({ maxWaitMs: 0, gateDbfs }).create({ sampleRate: 8000 }), samples).filter((e) => e.type === 'speech_stop');
    const gated = stops(-50).at(-1)!.atMs;
    expect(gated).toBe(lastSound);
    // without a gate every block is sound: the end falls on a window boundary, after the sound
    const ungated = stops(-Infinity).at(-1)!.atMs;
    expect(ungated % 32).toBe(0);
    expect(ungated).toBeGreaterThan(lastSound);
  });

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
    const f = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 0 });
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

  it('a runtime that fails on every window leaves the call with the energy detector; push never throws', () => {
    const real = sharedSileroSession();
    let fail = true;
    const flaky: SileroSession = { modelPath: real.modelPath, inferences: 0, runs: 0, run: (...args) => {
      if (fail) throw new Error('runtime failed');
      return real.run(...args);
    } };
    const d = new SileroVoiceActivityDetector(new SileroBatcher(flaky, { maxWaitMs: 0 }), { sampleRate: 8000 });
    const pcm = readAudioFixture('barge-in-long').samples;
    expect(feed(d, pcm)).toEqual(new EnergyVoiceActivityDetector({ sampleRate: 8000 }).push(pcm));
    expect(d.counts.inferred).toBe(0);
    expect(d.counts.failed).toBeGreaterThan(0);
    fail = false;
    const again = feed(d, readAudioFixture('yes-i-will-attend').samples);
    expect(again.map((e) => e.type)).toEqual(['speech_start', 'speech_stop']);
    expect(d.counts.inferred).toBeGreaterThan(0);
  });

  it('a batch the runtime fails on is retried window by window: only the call it fails on falls back', () => {
    const real = sharedSileroSession();
    // the runtime refuses any batch holding a full-scale sample (the "bad" call's audio)
    const picky: SileroSession = { modelPath: real.modelPath, inferences: 0, runs: 0, run: (rate, count, input, state) => {
      const rows = input.subarray(0, count * sileroInputLength(rate));
      if (rows.some((x) => Math.abs(x) > 0.99)) throw new Error('runtime failed');
      return real.run(rate, count, input, state);
    } };
    const f = new SileroVoiceActivityDetectorFactory();
    (f as unknown as { batcher: SileroBatcher }).batcher = new SileroBatcher(picky, { maxWaitMs: 1000 });
    const good = readAudioFixture('hello-who-is-this').samples;
    const bad = Int16Array.from(readAudioFixture('can-you-repeat-that').samples, (x) => (x > 2000 ? 32767 : x < -2000 ? -32768 : x));
    const [g, b] = interleaved(f, [good, bad]);
    expect(g.events).toEqual(feed(factory.create({ sampleRate: 8000 }), good));
    expect(g.d.counts.failed).toBe(0);
    expect(b.d.counts.failed).toBeGreaterThan(0);
    expect(b.events.map((e) => e.type)).toEqual(new EnergyVoiceActivityDetector({ sampleRate: 8000 }).push(bad).map((e) => e.type));
  });

  it('a model file that is not Silero v5 is refused when the session is created', () => {
    const f = new SileroVoiceActivityDetectorFactory({ modelPath: '/nonexistent/silero.onnx' });
    expect(() => f.create({ sampleRate: 8000 })).toThrow();
    expect(() => factory.create({ sampleRate: 44100 as 8000 })).toThrow(RangeError);
  });
});

describe('batched inference', () => {
  it('gives every window its verdict, in order, when a batch scores several windows of a call at once (onWindow)', () => {
    const { samples } = readAudioFixture('barge-in-long');
    const verdicts = (f: SileroVoiceActivityDetectorFactory, every: number) => {
      const seen: Array<[boolean, number]> = [];
      const d = f.create({ sampleRate: 8000, onWindow: (speech, endMs) => seen.push([speech, endMs]) });
      for (let i = 0, frame = 0; i < samples.length; i += 160, frame++) {
        d.push(samples.subarray(i, i + 160));
        if (frame % every === every - 1) f.flush();
      }
      f.flush();
      d.close();
      return seen;
    };
    const sync = verdicts(factory, 1);
    // frames come in bursts of eight (160 ms): up to five of a call's windows are scored in one flush
    const burst = verdicts(new SileroVoiceActivityDetectorFactory({ maxWaitMs: 60_000, awaitLiveMs: 0 }), 8);
    expect(sync.length).toBe(Math.floor(samples.length / 256));
    expect(sync.map(([, endMs]) => endMs)).toEqual(sync.map((_, k) => (k + 1) * 32));
    expect(sync.some(([speech]) => speech)).toBe(true);
    expect(sync.some(([speech]) => !speech)).toBe(true);
    expect(burst).toEqual(sync);
  });

  const fixtures = [...SPEECH_FIXTURES, 'noise-hiss-2s'] as const;

  it('one inference over a batch gives the probabilities and states of one window at a time (float tolerance)', () => {
    const session = sharedSileroSession();
    const len = sileroInputLength(8000);
    const audios = fixtures.map((name) => readAudioFixture(name).samples);
    const n = audios.length;
    const batchState = new Float32Array(n * SILERO_STATE_LENGTH);
    const aloneStates = audios.map(() => new Float32Array(SILERO_STATE_LENGTH));
    const windows = Math.min(...audios.map((a) => Math.floor(a.length / 256)));
    let maxDiff = 0;
    for (let w = 1; w < windows; w++) {
      const input = new Float32Array(n * len);
      audios.forEach((a, k) => {
        for (let i = 0; i < len; i++) input[k * len + i] = a[w * 256 - 32 + i] / 32768;
      });
      const batch = Float32Array.from(session.run(8000, n, input, batchState));
      audios.forEach((_, k) => {
        const p = session.run(8000, 1, input.subarray(k * len, (k + 1) * len), aloneStates[k])[0];
        maxDiff = Math.max(maxDiff, Math.abs(p - batch[k]));
        const state = batchState.subarray(k * SILERO_STATE_LENGTH, (k + 1) * SILERO_STATE_LENGTH);
        for (let i = 0; i < SILERO_STATE_LENGTH; i++) maxDiff = Math.max(maxDiff, Math.abs(state[i] - aloneStates[k][i]));
      });
    }
    expect(windows).toBeGreaterThan(40);
    expect(maxDiff).toBeLessThan(1e-4);
  });

  it('calls batched together get the speech segments each gets scored alone, one window at a time', () => {
    const audios = fixtures.map((name) => readAudioFixture(name).samples);
    const alone = audios.map((a) => feed(factory.create({ sampleRate: 8000 }), a));
    for (const every of [1, 3]) {
      // every 3 frames: each batch holds up to two windows of a call, scored in order across two runs
      const f = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 1000 });
      const calls = interleaved(f, audios, every);
      expect(calls.map((c) => c.events)).toEqual(alone);
      expect(f.sharedBatcher.stats.windows).toBe(calls.reduce((sum, c) => sum + c.d.counts.inferred, 0));
      // speech overlaps in about half the windows (the fixtures differ in length): fewer runs than windows
      expect(f.sharedBatcher.stats.batches).toBeLessThan(0.7 * f.sharedBatcher.stats.windows);
    }
    expect(alone.filter((e) => e.length > 0).length).toBe(SPEECH_FIXTURES.length);
  });

  it('events come through onEvent once the batch runs (maxWaitMs later), in order and in stream time', async () => {
    const f = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 5, awaitLiveMs: 0 }); // no early batches: a lone call waits too
    const pcm = readAudioFixture('yes-i-will-attend').samples;
    const c = listening(f);
    let returned = 0;
    for (let i = 0; i < pcm.length; i += 160) {
      const events = c.d.push(pcm.subarray(i, i + 160));
      returned += events.length;
      c.events.push(...events);
      await new Promise((r) => setTimeout(r, 1));
    }
    await new Promise((r) => setTimeout(r, 30));
    expect(c.events).toEqual(feed(factory.create({ sampleRate: 8000 }), pcm));
    expect(c.events.length).toBe(2);
    expect(returned).toBeLessThan(2); // at least one event came later, through the listener
  });

  it('a closed detector gets no more events and leaves the batch; the other calls are scored as before', () => {
    const f = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 1000, awaitLiveMs: 0 });
    const a = listening(f);
    const b = listening(f);
    const pcm = readAudioFixture('barge-in-long').samples;
    for (let i = 0; i < 16000; i += 160) {
      a.push(pcm.subarray(i, i + 160));
      b.push(pcm.subarray(i, i + 160));
    }
    expect(f.sharedBatcher.waitingWindows).toBe(2);
    a.d.close();
    expect(f.sharedBatcher.waitingWindows).toBe(1);
    const before = a.events.length;
    f.flush();
    a.push(pcm.subarray(16000, 20000));
    f.flush();
    expect(a.events.length).toBe(before);
    expect(b.events[0]?.type).toBe('speech_start');
  });

  it('without a listener, events scored later are returned by the next push', () => {
    const f = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 1000 });
    const d = f.create({ sampleRate: 8000 });
    const pcm = readAudioFixture('yes-i-will-attend').samples;
    const events: VadEvent[] = [];
    for (let i = 0; i < pcm.length; i += 160) {
      events.push(...d.push(pcm.subarray(i, i + 160)));
      f.flush();
    }
    events.push(...d.push(new Int16Array(0)));
    expect(events).toEqual(feed(factory.create({ sampleRate: 8000 }), pcm));
  });
});

describe('expedite: a call whose next verdicts a decision waits on', () => {
  it('has its windows scored as soon as they are cut (those waiting first), and batched again once it is off', () => {
    // inline batches that run only on flush (no early batches, a timer that never fires here)
    const f = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 60_000, awaitLiveMs: 0 });
    const pcm = readAudioFixture('barge-in-long').samples;
    const { d, events, push } = listening(f);
    const reference = feed(factory.create({ sampleRate: 8000 }), pcm);
    const frames = (from: number, to: number) => {
      for (let i = from; i < to; i += 160) push(pcm.subarray(i, i + 160));
    };
    frames(0, 4000); // half a second: its windows wait
    expect(d.counts.inferred).toBe(0);
    d.expedite(true); // the waiting ones are scored now
    const cut = Math.floor(4000 / 256);
    expect(d.counts.inferred + d.counts.gated).toBe(cut);
    frames(4000, 6400); // and each new one during its push
    expect(d.counts.inferred + d.counts.gated).toBe(Math.floor(6400 / 256));
    d.expedite(false);
    frames(6400, pcm.length);
    expect(d.counts.inferred + d.counts.gated).toBe(Math.floor(6400 / 256)); // they wait again
    f.flush();
    expect(d.counts.inferred + d.counts.gated).toBe(Math.floor(pcm.length / 256));
    // the same verdicts and events as scoring each window at once
    expect(events).toEqual(reference);
    expect(f.sharedBatcher.stats.urgent).toBeGreaterThan(0);
  });
});

describe('early batches: as soon as every call in speech has its window waiting', () => {
  /**
   * A batcher on a fake clock and a fake runtime (every window scores 0.9; runs and their sizes counted);
   * awaitLiveMs 48 here (the default is 96): the times below are chosen for it.
   */
  function fakeBatcher(awaitLiveMs = 48) {
    let now = 0;
    const sizes: number[] = [];
    const session: SileroSession = { modelPath: 'fake', inferences: 0, runs: 0, run: (_rate, count) => {
      sizes.push(count);
      return new Float32Array(count).fill(0.9);
    } };
    const batcher = new SileroBatcher(session, { maxWaitMs: 16, maxBatch: 64, awaitLiveMs }, () => now);
    const client = (name: string, scored: string[]): SileroBatchClient => ({
      sampleRate: 8000, input: new Float32Array(sileroInputLength(8000)), state: new Float32Array(SILERO_STATE_LENGTH),
      scored: () => scored.push(name), failed: () => scored.push(`${name} failed`),
    });
    return { batcher, sizes, client, at: (ms: number) => (now = ms) };
  }

  it('a lone call is scored during its push, not 16 ms later', () => {
    const b = fakeBatcher();
    const scored: string[] = [];
    const a = b.client('a', scored);
    b.batcher.request(a);
    expect(scored).toEqual(['a']);
    b.at(32);
    b.batcher.request(a);
    expect(scored).toEqual(['a', 'a']);
    expect(b.sizes).toEqual([1, 1]);
    // without early batches the window waits for the timer (the behaviour before)
    const late = fakeBatcher(0);
    const none: string[] = [];
    late.batcher.request(late.client('a', none));
    expect(none).toEqual([]);
    expect(late.batcher.waitingWindows).toBe(1);
    late.batcher.flush();
  });

  it('calls in speech are batched: the batch runs once the last of them is in, and never waits for a quiet one', () => {
    const b = fakeBatcher();
    const scored: string[] = [];
    const [a, c, d] = ['a', 'c', 'd'].map((n) => b.client(n, scored));
    const ask = (ms: number, client: SileroBatchClient) => {
      b.at(ms);
      b.batcher.request(client);
    };
    ask(0, a!); // a lone call so far: at once
    ask(5, c!);
    ask(10, d!);
    expect(b.batcher.waitingWindows).toBe(2); // c and d wait for a, whose next window is due
    ask(32, a!);
    expect(b.batcher.waitingWindows).toBe(0); // all three in: one batch, before the 16 ms timer
    ask(37, c!);
    ask(42, d!);
    ask(64, a!);
    expect(b.sizes).toEqual([1, 3, 3]);
    expect(scored).toEqual(['a', 'c', 'd', 'a', 'c', 'd', 'a']);
    // d goes quiet (its windows are gated): c waits while d's next window may still come (its last was 27 ms ago) ...
    ask(69, c!);
    expect(b.batcher.waitingWindows).toBe(1);
    // ... but once d's last window is more than 48 ms old, a and c no longer wait for it
    ask(96, a!);
    expect(b.batcher.waitingWindows).toBe(0);
    expect(b.sizes).toEqual([1, 3, 3, 2]);
  });
});
