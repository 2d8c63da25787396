import { afterAll, describe, expect, it } from '@jest/globals';
import type { VadEvent } from '../../core/ports/voice-activity-detector.port.js';
import { EnergyVoiceActivityDetector } from '../../core/voice/energy-vad.js';
import { NON_SPEECH_FIXTURES, SPEECH_FIXTURES, readAudioFixture } from '../../test/fixtures/audio/fixtures.js';
import { SileroBatcher, type SileroBatchClient, type SileroBatchOffload } from './silero-batcher.js';
import { SILERO_STATE_LENGTH, sharedSileroSession, sileroInputLength, type SileroSession } from './silero-session.js';
import { SileroInferenceThread, type SileroThreadResult } from './silero-thread.js';
import { distFile, runNode } from '../../test/support/process.js';
import { SileroVoiceActivityDetector, SileroVoiceActivityDetectorFactory, type SileroVadSettings } from './silero-vad.js';

const threads: SileroInferenceThread[] = [];
const factories: SileroVoiceActivityDetectorFactory[] = [];
afterAll(async () => {
  await Promise.all([...threads.map((t) => t.close()), ...factories.map((f) => f.close())]);
});

async function startedThread(): Promise<SileroInferenceThread> {
  const t = new SileroInferenceThread(sharedSileroSession().modelPath);
  threads.push(t);
  expect(await t.ready).toBe(true);
  return t;
}

/** A factory scoring on its own inference thread (ready), with failures recorded. */
async function threadedFactory(settings: Omit<SileroVadSettings, 'inference' | 'onThreadFailure'> = {}) {
  const failures: string[] = [];
  const f = new SileroVoiceActivityDetectorFactory({ ...settings, inference: 'thread', onThreadFailure: (m) => failures.push(m) });
  factories.push(f);
  f.warmUp();
  expect(await f.inferenceThread!.ready).toBe(true);
  return { f, failures };
}

/** Resolves once `check()` holds (polled every `everyMs`; fails the test after 5 s). */
async function until(check: () => boolean, everyMs = 5): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The worker under the thread, to kill it as a crash would. */
const workerOf = (t: SileroInferenceThread) => (t as unknown as { worker: { terminate(): Promise<number> } }).worker;

/** One window at a time, scored during `push` on this thread: the reference. */
const inline = new SileroVoiceActivityDetectorFactory({ maxWaitMs: 0 });
function aloneEvents(pcm: Int16Array): VadEvent[] {
  const d = inline.create({ sampleRate: 8000 });
  const events: VadEvent[] = [];
  for (let i = 0; i < pcm.length; i += 160) events.push(...d.push(pcm.subarray(i, i + 160)));
  return events;
}

/**
 * Feeds the calls frame by frame, interleaved, through `f`; every `every` frames (160 ms at 8) it lets the
 * event loop run until the windows asked for are scored, as a live service's frames arrive over time.
 */
async function interleaved(f: SileroVoiceActivityDetectorFactory, audios: Int16Array[], every = 8) {
  const calls = audios.map(() => {
    const events: VadEvent[] = [];
    const d = f.create({ sampleRate: 8000, onEvent: (e) => events.push(e) }) as SileroVoiceActivityDetector;
    return { d, events };
  });
  const longest = Math.max(...audios.map((a) => a.length));
  for (let i = 0, frame = 0; i < longest; i += 160, frame++) {
    audios.forEach((a, k) => {
      if (i < a.length) calls[k].events.push(...calls[k].d.push(a.subarray(i, i + 160)));
    });
    if (frame % every === every - 1) await f.settled();
  }
  await f.settled();
  return calls;
}

describe('Silero inference on a worker thread', () => {
  it('scores the fixture windows, batch after batch with the states carried, as the inline session does (≤ 1e-5)', async () => {
    const thread = await startedThread();
    const session = sharedSileroSession();
    const fixtures = [...SPEECH_FIXTURES, ...NON_SPEECH_FIXTURES];
    const audios = fixtures.map((name) => readAudioFixture(name).samples);
    const len = sileroInputLength(8000);
    const n = audios.length;
    const inlineState = new Float32Array(n * SILERO_STATE_LENGTH);
    let threadState: Float32Array = new Float32Array(n * SILERO_STATE_LENGTH);
    let input: Float32Array = new Float32Array(n * len);
    const windows = Math.min(...audios.map((a) => Math.floor(a.length / 256)));
    let maxDiff = 0;
    let speechWindows = 0;
    for (let w = 1; w < windows; w++) {
      audios.forEach((a, k) => {
        for (let i = 0; i < len; i++) input[k * len + i] = a[w * 256 - 32 + i] / 32768;
      });
      const expected = Float32Array.from(session.run(8000, n, input, inlineState));
      const r = await thread.run(8000, n, input, threadState);
      expect(input.length).toBe(0); // transferred
      expect(r.failed).toBeNull();
      expect(r.runs).toBe(1);
      input = r.input;
      threadState = r.state;
      for (let k = 0; k < n; k++) maxDiff = Math.max(maxDiff, Math.abs(r.probabilities[k] - expected[k]));
      for (let i = 0; i < inlineState.length; i++) maxDiff = Math.max(maxDiff, Math.abs(threadState[i] - inlineState[i]));
      speechWindows += expected.filter((p) => p > 0.5).length;
    }
    expect(windows).toBeGreaterThan(40);
    expect(speechWindows).toBeGreaterThan(20);
    expect(maxDiff).toBeLessThanOrEqual(1e-5);
    // 16 kHz rows too
    const len16 = sileroInputLength(16000);
    const row = Float32Array.from({ length: 2 * len16 }, (_, i) => Math.sin(i / 7) * 0.3);
    const expected16 = Float32Array.from(session.run(16000, 2, row.slice(), new Float32Array(2 * SILERO_STATE_LENGTH)));
    const r16 = await thread.run(16000, 2, row.slice(), new Float32Array(2 * SILERO_STATE_LENGTH));
    expect(Math.abs(r16.probabilities[0] - expected16[0])).toBeLessThanOrEqual(1e-5);
    expect(Math.abs(r16.probabilities[1] - expected16[1])).toBeLessThanOrEqual(1e-5);
  });

  it('retries a batch it fails on window by window: only the window that fails alone comes back failed, its state untouched', async () => {
    const thread = await startedThread();
    const len = sileroInputLength(8000);
    // three windows asked for, but the third row is cut short: the batch fails, windows 0 and 1 pass alone
    const rows = Float32Array.from({ length: 2 * len + len / 2 }, (_, i) => Math.sin(i / 5) * 0.2);
    const state = new Float32Array(3 * SILERO_STATE_LENGTH).fill(0.25);
    const r = await thread.run(8000, 3, rows, state);
    expect(Array.from(r.failed ?? [])).toEqual([0, 0, 1]);
    expect(r.failedRuns).toBe(2);
    expect(r.runs).toBe(2);
    const expected = sharedSileroSession().run(8000, 2, Float32Array.from(r.input.subarray(0, 2 * len)), new Float32Array(2 * SILERO_STATE_LENGTH).fill(0.25));
    expect(Math.abs(r.probabilities[0] - expected[0])).toBeLessThanOrEqual(1e-5);
    expect(Math.abs(r.probabilities[1] - expected[1])).toBeLessThanOrEqual(1e-5);
    expect(r.state.subarray(2 * SILERO_STATE_LENGTH).every((x) => x === 0.25)).toBe(true);
    expect(r.state.subarray(0, SILERO_STATE_LENGTH).every((x) => x === 0.25)).toBe(false);
  });

  it('a batch that cannot be sent rejects and leaves nothing behind (the thread is idle, the next batch is scored)', async () => {
    const thread = await startedThread();
    // rows and states in one buffer: it cannot be transferred twice in one message
    const both = new Float32Array(sileroInputLength(8000) + SILERO_STATE_LENGTH);
    await expect(thread.run(8000, 1, both, both)).rejects.toThrow();
    expect((thread as unknown as { waiting: Map<number, unknown> }).waiting.size).toBe(0); // nothing holds the worker
    const r = await thread.run(8000, 1, new Float32Array(sileroInputLength(8000)), new Float32Array(SILERO_STATE_LENGTH));
    expect(r.failed).toBeNull();
  });

  it('close() lets the batch being scored finish (terminating a native run would abort the process) and ends the thread', async () => {
    const thread = await startedThread();
    const len = sileroInputLength(8000);
    const big = () => thread.run(8000, 64, new Float32Array(64 * len).fill(0.1), new Float32Array(64 * SILERO_STATE_LENGTH));
    const away = [big(), big(), big()].map((batch) => batch.then(() => 'scored', (e: Error) => e.message));
    await new Promise((r) => setTimeout(r, 1)); // the first is being scored
    let exited = false;
    (thread as unknown as { worker: { once(e: 'exit', f: () => void): void } }).worker.once('exit', () => (exited = true));
    await thread.close();
    expect(exited).toBe(true);
    expect(thread.available).toBe(false);
    for (const outcome of await Promise.all(away)) expect(outcome).toMatch(/closed/);
    await thread.close(); // idempotent
  });

  it('a thread whose model cannot load reports it once and takes no batches', async () => {
    const failures: string[] = [];
    const t = new SileroInferenceThread('/nonexistent/silero.onnx', (m) => failures.push(m));
    threads.push(t);
    expect(await t.ready).toBe(false);
    expect(t.available).toBe(false);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/could not start/);
    await expect(t.run(8000, 1, new Float32Array(288), new Float32Array(SILERO_STATE_LENGTH))).rejects.toThrow();
  });
});

describe('a process that exits while its inference thread is in native code', () => {
  // Terminating a worker inside a native onnxruntime call aborts the whole process (status 134, "terminate called
  // after throwing an instance of 'Napi::Error'"); a process that exits must get the exit it asked for.
  it.each([
    ['loading', 30],
    ['loading', 90],
    ['loading', 180],
    ['scoring', 150],
    ['scoring', 400],
  ])('exits with its own status (%s, after %i ms), not an abort', async (mode, ms) => {
    const out = await runNode([distFile('test/support/silero-exit.child.js'), mode, String(ms)], {});
    expect(out.stderr).not.toContain('terminate called');
    expect(out.code).toBe(3);
    if (mode === 'scoring') expect((JSON.parse(out.stdout.trim()) as { batches: number }).batches).toBeGreaterThan(0);
  });
});

describe('detectors on the inference thread', () => {
  it('give the events each call gets scored inline, alone, one window at a time; the batches ran on the thread', async () => {
    const fixtures = [...SPEECH_FIXTURES, 'noise-hiss-2s'] as const;
    const audios = fixtures.map((name) => readAudioFixture(name).samples);
    const { f, failures } = await threadedFactory({ maxWaitMs: 16 });
    const calls = await interleaved(f, audios);
    expect(calls.map((c) => c.events)).toEqual(audios.map(aloneEvents));
    const stats = f.sharedBatcher.stats;
    expect(stats.offloaded).toBeGreaterThan(0);
    expect(stats.offloaded).toBe(stats.batches);
    expect(stats.windows).toBe(calls.reduce((sum, c) => sum + c.d.counts.inferred, 0));
    expect(failures).toEqual([]);
  });

  it('score inline while the worker that died mid-call is restarted, then on the thread again: the events are unchanged', async () => {
    const audios = (['barge-in-long', 'hello-who-is-this', 'can-you-repeat-that'] as const).map((name) => readAudioFixture(name).samples);
    const restarts: string[] = [];
    const { f, failures } = await threadedFactory({ maxWaitMs: 16, awaitLiveMs: 0, threadRestart: { delayMs: 30 }, onThreadRestart: (m) => restarts.push(m) });
    const thread = f.inferenceThread!;
    const firstThread = thread.threadId;
    const stats = f.sharedBatcher.stats;
    const calls = audios.map(() => {
      const events: VadEvent[] = [];
      const d = f.create({ sampleRate: 8000, onEvent: (e) => events.push(e) }) as SileroVoiceActivityDetector;
      return { d, events };
    });
    const longest = Math.max(...audios.map((a) => a.length));
    let killedAt = -1;
    let offloadedBeforeRestart = -1;
    for (let i = 0, frame = 0; i < longest; i += 160, frame++) {
      audios.forEach((a, k) => {
        if (i < a.length) calls[k].events.push(...calls[k].d.push(a.subarray(i, i + 160)));
      });
      // between batches (terminating it inside a native run would abort this process: the batch lost while
      // away is the deferred offload's test below)
      if (killedAt < 0 && stats.offloaded >= 3 && !f.sharedBatcher.batchInFlight) {
        await workerOf(thread).terminate();
        await until(() => !thread.available);
        killedAt = frame;
      }
      // some frames later (scored inline meanwhile) the thread is back
      if (killedAt >= 0 && frame === killedAt + 12) {
        expect(thread.available).toBe(false);
        expect(stats.batches).toBeGreaterThan(stats.offloaded); // inline batches since the death
        await until(() => thread.available);
        offloadedBeforeRestart = stats.offloaded;
      }
      if (frame % 4 === 3) await f.settled();
    }
    await f.settled();
    expect(offloadedBeforeRestart).toBeGreaterThanOrEqual(3);
    expect(stats.offloaded).toBeGreaterThan(offloadedBeforeRestart); // batches answered by the thread again
    expect(thread.threadId).not.toBe(firstThread);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/stopped: exited with code 1; .* starts again in 30 ms/);
    expect(restarts).toHaveLength(1);
    expect(restarts[0]).toMatch(/running again/);
    expect(thread.stats).toEqual({ started: 2, restarted: 1, gaveUp: false });
    expect(stats.lost).toBe(0);
    expect(calls.map((c) => c.events)).toEqual(audios.map(aloneEvents));
    expect(calls.every((c) => c.d.counts.failed === 0)).toBe(true);
  });
});

describe('restarting the inference thread', () => {
  /** A thread on a test clock, with its failures and restarts recorded. */
  async function restartingThread(restart: { delayMs: number; maxRestarts?: number; windowMs?: number }) {
    const clock = { now: 0 };
    const failures: string[] = [];
    const restarts: string[] = [];
    const t = new SileroInferenceThread(sharedSileroSession().modelPath, (m) => failures.push(m), { restart, onRestart: (m) => restarts.push(m), now: () => clock.now });
    threads.push(t);
    expect(await t.ready).toBe(true);
    return { t, clock, failures, restarts };
  }
  /** Kills the worker as a crash would (it is idle: no native call under way), and waits until the thread knows. */
  const kill = async (t: SileroInferenceThread) => {
    await workerOf(t).terminate();
    await until(() => !t.available);
  };
  const score = (t: SileroInferenceThread) => t.run(8000, 1, new Float32Array(sileroInputLength(8000)), new Float32Array(SILERO_STATE_LENGTH));

  it('backs off (the delay doubles) and stops restarting after maxRestarts deaths within the window, saying so once', async () => {
    const { t, clock, failures, restarts } = await restartingThread({ delayMs: 20, maxRestarts: 2, windowMs: 60_000 });
    await kill(t);
    expect(t.restartPending).toBe(true);
    await expect(score(t)).rejects.toThrow(/failed/);
    await until(() => t.available);
    clock.now = 1000;
    await kill(t);
    await until(() => t.available);
    expect((await score(t)).failed).toBeNull(); // scoring there again
    clock.now = 2000;
    await kill(t);
    expect(t.restartPending).toBe(false);
    await new Promise((r) => setTimeout(r, 100)); // past every back-off: nothing starts
    expect(t.available).toBe(false);
    expect(t.stats).toEqual({ started: 3, restarted: 2, gaveUp: true });
    expect(failures.map((m) => m.replace(/^.*; /, ''))).toEqual([
      'calls are scored on the event loop, the thread starts again in 20 ms',
      'calls are scored on the event loop, the thread starts again in 40 ms',
      'not started again: it was restarted 2 times within 60 s, so calls stay on the event loop for the rest of the process\'s life',
    ]);
    expect(restarts).toHaveLength(2);
    await expect(score(t)).rejects.toThrow(/failed/);
  });

  it('forgets deaths older than the window: a thread that dies now and then comes back every time', async () => {
    const { t, clock, failures } = await restartingThread({ delayMs: 20, maxRestarts: 1, windowMs: 1000 });
    for (const at of [0, 1500, 3000]) {
      clock.now = at;
      await kill(t);
      await until(() => t.available);
    }
    expect(failures.every((m) => m.endsWith('starts again in 20 ms'))).toBe(true); // no back-off across windows
    clock.now = 3500; // the second death in one window
    await kill(t);
    expect(t.stats).toEqual({ started: 4, restarted: 3, gaveUp: true });
  });

  it('restarts in a process whose main thread never loaded onnxruntime (the thread holds the binding loaded itself)', async () => {
    const out = await runNode([distFile('test/support/silero-restart.child.js')], {});
    expect(out.stderr).not.toContain('self-register');
    expect(out.code).toBe(0);
    const r = JSON.parse(out.stdout.trim()) as { restarted: boolean; failures: string[]; scored: number };
    expect(r).toEqual({ restarted: true, failures: [expect.stringMatching(/stopped: exited with code 1; .* starts again in 10 ms$/)], scored: 1 });
  });

  it('close() while a restart waits calls it off: no worker starts, nothing is left running', async () => {
    const { t } = await restartingThread({ delayMs: 50 });
    await kill(t);
    expect(t.restartPending).toBe(true);
    await t.close();
    expect(t.restartPending).toBe(false);
    await new Promise((r) => setTimeout(r, 120));
    expect(t.stats.started).toBe(1);
    expect(t.available).toBe(false);
  });

  it('close() while the restarted worker loads its model lets it finish loading and end (never terminated in native code)', async () => {
    const { t } = await restartingThread({ delayMs: 10 });
    const first = workerOf(t);
    await kill(t);
    await until(() => t.stats.started === 2, 1);
    const second = workerOf(t) as unknown as { once(e: 'exit', f: (code: number) => void): void };
    expect(second).not.toBe(first);
    let exitCode = -1;
    second.once('exit', (code) => (exitCode = code));
    await t.close();
    expect(exitCode).toBe(0); // it ended by itself after 'stop', not by terminate() (1)
    expect(t.stats.restarted).toBe(0);
    expect(t.available).toBe(false);
  });
});

/**
 * An offload that scores with a session on this thread but answers later, when the test says (`answer()`), as
 * the thread does: a failed batch retried window by window, failed windows flagged.
 */
function deferredOffload(session: SileroSession) {
  const pending: Array<() => void> = [];
  const sizes: number[] = [];
  let available = true;
  const offload: SileroBatchOffload = {
    get available() {
      return available;
    },
    run(rate, count, input, state) {
      sizes.push(count);
      const rows = input.slice();
      const states = state.slice();
      input.fill(NaN); // the sender must not read them back (a transfer detaches them)
      return new Promise<SileroThreadResult>((resolve, reject) => {
        pending.push(() => {
          if (!available) return reject(new Error('thread stopped'));
          const len = sileroInputLength(rate);
          const probabilities = new Float32Array(count);
          let failed: Uint8Array | null = null;
          let failedRuns = 0;
          let runs = 0;
          try {
            probabilities.set(session.run(rate, count, rows, states).subarray(0, count));
            runs++;
          } catch {
            failedRuns++;
            for (let b = 0; b < count; b++) {
              try {
                probabilities[b] = session.run(rate, 1, rows.subarray(b * len, (b + 1) * len), states.subarray(b * SILERO_STATE_LENGTH, (b + 1) * SILERO_STATE_LENGTH))[0];
                runs++;
              } catch {
                failedRuns++;
                (failed ??= new Uint8Array(count))[b] = 1;
              }
            }
          }
          resolve({ probabilities, failed, input: rows, state: states, failedRuns, runs });
        });
      });
    },
  };
  return {
    offload,
    sizes,
    stop: () => (available = false),
    /** Answers the batch in flight and lets its callbacks run. */
    answer: async () => {
      pending.shift()?.();
      await new Promise((r) => setImmediate(r));
    },
  };
}

describe('the batcher with an asynchronous offload', () => {
  const len = sileroInputLength(8000);
  const rowOf = (pcm: Int16Array, w: number) => Float32Array.from({ length: len }, (_, i) => (w === 0 && i < 32 ? 0 : pcm[w * 256 - 32 + i] / 32768));

  /**
   * A client playing `pcm`'s windows one after the other, recording probabilities; with `batcher`, it asks for
   * its next window from its callback (as a detector does), up to `limit` windows.
   */
  function player(pcm: Int16Array, batcher?: SileroBatcher, limit = 0) {
    const probabilities: number[] = [];
    let w = 0;
    const client: SileroBatchClient & { input: Float32Array } = {
      sampleRate: 8000, input: rowOf(pcm, 0), state: new Float32Array(SILERO_STATE_LENGTH),
      scored: (p) => {
        probabilities.push(p);
        client.input = rowOf(pcm, ++w);
        if (batcher && probabilities.length < limit) batcher.request(client);
      },
      failed: () => probabilities.push(-1),
    };
    return { client, probabilities };
  }

  /** Each window of `pcm` scored inline, alone, in order: the reference. */
  function reference(pcm: Int16Array, windows: number): number[] {
    const session = sharedSileroSession();
    const state = new Float32Array(SILERO_STATE_LENGTH);
    return Array.from({ length: windows }, (_, w) => session.run(8000, 1, rowOf(pcm, w), state)[0]);
  }

  it('scores each call\'s windows in order with its state carried; windows asked for in flight make the next batch', async () => {
    const o = deferredOffload(sharedSileroSession());
    // awaitLiveMs: both calls ask within it, so a batch leaves as soon as both have a window waiting
    const batcher = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 60_000, awaitLiveMs: 60_000 }, undefined, o.offload);
    const pcmA = readAudioFixture('barge-in-long').samples;
    const pcmB = readAudioFixture('yes-i-will-attend').samples;
    const a = player(pcmA, batcher, 20);
    const b = player(pcmB, batcher, 20);
    batcher.request(a.client); // alone so far: it leaves at once
    expect(batcher.batchInFlight).toBe(true);
    batcher.request(b.client); // waits: one batch in flight at a time
    expect(o.sizes).toEqual([1]);
    expect(batcher.waitingWindows).toBe(1);
    for (let round = 0; round < 40 && (a.probabilities.length < 20 || b.probabilities.length < 20); round++) {
      if (!batcher.batchInFlight) batcher.flush(); // a call that is done is no longer waited for: its timer
      await o.answer();
    }
    // b's window and a's next (asked for in a's callback) left together as soon as the answer was in
    expect(o.sizes.slice(0, 3)).toEqual([1, 2, 2]);
    const expectClose = (got: number[], want: number[]) => {
      expect(got).toHaveLength(want.length);
      got.forEach((p, i) => expect(Math.abs(p - want[i])).toBeLessThan(1e-5));
    };
    expect(a.probabilities).toHaveLength(20);
    expect(b.probabilities).toHaveLength(20);
    expectClose(a.probabilities, reference(pcmA, 20));
    expectClose(b.probabilities, reference(pcmB, 20));
    expect(batcher.stats.offloaded).toBe(o.sizes.length);
    expect(batcher.stats.windows).toBe(40);
  });

  it('a call whose window is in flight is not taken as waiting: a window asked for meanwhile waits for the calls\' next windows', async () => {
    let now = 0;
    const fake: SileroSession = { modelPath: 'fake', inferences: 0, runs: 0, run: (_rate, count) => new Float32Array(count).fill(0.9) };
    const o = deferredOffload(fake);
    // (a timer that never fires here: only the early-batch rule sends)
    const batcher = new SileroBatcher(fake, { maxWaitMs: 60_000, maxBatch: 64, awaitLiveMs: 96 }, () => now, o.offload);
    const scored: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name): SileroBatchClient => ({
      sampleRate: 8000, input: new Float32Array(len), state: new Float32Array(SILERO_STATE_LENGTH), scored: () => scored.push(name), failed: () => scored.push(`${name} failed`),
    }));
    batcher.request(a!); // alone: it leaves at once
    batcher.request(b!);
    batcher.request(c!);
    batcher.flush(); // b and c are due: they leave with the answer
    await o.answer();
    await o.answer();
    expect(o.sizes).toEqual([1, 2]);
    // all three live now; 32 ms on, a and b are sent (c's next window is late: the timer's case)
    now = 32;
    batcher.request(a!);
    batcher.request(b!);
    batcher.flush();
    expect(o.sizes).toEqual([1, 2, 2]);
    now = 34;
    batcher.request(c!); // a and b are away, not waiting: c waits for their next windows ...
    await o.answer();
    expect(o.sizes).toEqual([1, 2, 2]); // ... not sent alone the moment their answer came
    expect(batcher.waitingWindows).toBe(1);
    now = 64;
    batcher.request(a!);
    batcher.request(b!); // every live call waits: one batch of three
    expect(o.sizes).toEqual([1, 2, 2, 3]);
    await o.answer();
    expect(scored).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b']);
  });

  it('a call that fell behind (its next window already cut) gets it sent as soon as the answer is in, not after the timer', async () => {
    const o = deferredOffload(sharedSileroSession());
    // no early batches, a timer that never fires here: only a backlog sends at once
    const batcher = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 60_000, awaitLiveMs: 0 }, undefined, o.offload);
    const pcm = readAudioFixture('barge-in-long').samples;
    const late = player(pcm, batcher, 4); // asks for its next window from each callback: three windows behind
    batcher.request(late.client);
    batcher.flush();
    for (let k = 0; k < 4; k++) await o.answer();
    expect(o.sizes).toEqual([1, 1, 1, 1]);
    expect(late.probabilities).toHaveLength(4);
    reference(pcm, 4).forEach((p, i) => expect(Math.abs(late.probabilities[i] - p)).toBeLessThan(1e-5));
    expect(batcher.waitingWindows).toBe(0);
  });

  it('drops the result of a window cancelled while its batch is in flight; the other windows of the batch are delivered', async () => {
    const o = deferredOffload(sharedSileroSession());
    const batcher = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 1000, awaitLiveMs: 0 }, undefined, o.offload);
    const a = player(readAudioFixture('barge-in-long').samples);
    const b = player(readAudioFixture('barge-in-long').samples);
    const stateBefore = a.client.state.slice();
    batcher.request(a.client);
    batcher.request(b.client);
    batcher.flush();
    batcher.cancel(a.client);
    await o.answer();
    expect(a.probabilities).toEqual([]);
    expect(a.client.state).toEqual(stateBefore);
    expect(b.probabilities).toHaveLength(1);
    // a call that reset and asked again while the old window was away gets only the new window's score
    batcher.request(a.client);
    batcher.flush();
    batcher.cancel(a.client);
    batcher.request(a.client);
    batcher.flush(); // due
    await o.answer();
    expect(a.probabilities).toEqual([]);
    await o.answer();
    expect(a.probabilities).toHaveLength(1);
    expect(batcher.waitingWindows).toBe(0);
  });

  it('a batch failed on the offload is retried window by window there: only the call whose window fails falls back', async () => {
    const real = sharedSileroSession();
    const picky: SileroSession = { modelPath: real.modelPath, inferences: 0, runs: 0, run: (rate, count, input, state) => {
      if (input.subarray(0, count * sileroInputLength(rate)).some((x) => Math.abs(x) > 0.99)) throw new Error('runtime failed');
      return real.run(rate, count, input, state);
    } };
    const o = deferredOffload(picky);
    const batcher = new SileroBatcher(real, { maxWaitMs: 1000, awaitLiveMs: 0 }, undefined, o.offload);
    const good = readAudioFixture('hello-who-is-this').samples;
    const g = player(good);
    const bad = player(new Int16Array(8000).fill(32767));
    for (let round = 0; round < 5; round++) {
      batcher.request(g.client);
      batcher.request(bad.client);
      batcher.flush();
      await o.answer();
    }
    expect(bad.probabilities).toEqual([-1, -1, -1, -1, -1]);
    expect(g.probabilities.every((p) => p >= 0)).toBe(true);
    reference(good, 5).forEach((p, i) => expect(Math.abs(g.probabilities[i] - p)).toBeLessThan(1e-5));
    expect(batcher.stats.failedRuns).toBe(10); // per batch: the whole, then the bad window alone
  });

  it('scores a batch lost on the offload inline, and every later one inline once the offload is gone', async () => {
    const o = deferredOffload(sharedSileroSession());
    const batcher = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 1000, awaitLiveMs: 0 }, undefined, o.offload);
    const pcm = readAudioFixture('barge-in-long').samples;
    const a = player(pcm);
    batcher.request(a.client);
    batcher.flush();
    await o.answer();
    batcher.request(a.client);
    batcher.flush();
    o.stop(); // the thread dies with the batch away
    await o.answer();
    expect(batcher.stats.lost).toBe(1);
    expect(a.probabilities).toHaveLength(2);
    batcher.request(a.client);
    batcher.flush(); // inline: scored during the flush
    expect(a.probabilities).toHaveLength(3);
    expect(o.sizes).toEqual([1, 1]);
    reference(pcm, 3).forEach((p, i) => expect(Math.abs(a.probabilities[i] - p)).toBeLessThan(1e-5));
  });

  it('an urgent window leaves at once: it waits neither for the timer nor for other windows; in flight, it leaves with the answer', async () => {
    const o = deferredOffload(sharedSileroSession());
    // no early batches, timers that never fire here: only urgency sends
    const batcher = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 60_000, awaitLiveMs: 0, hedgeMs: 60_000 }, undefined, o.offload);
    const pcm = readAudioFixture('barge-in-long').samples;
    const [a, b, c] = [player(pcm), player(pcm), player(pcm)];
    batcher.request(a.client);
    expect(o.sizes).toEqual([]);
    batcher.request(b.client, true);
    expect(o.sizes).toEqual([2]); // b at once, a with it
    await o.answer();
    batcher.request(a.client);
    batcher.flush();
    batcher.request(b.client, true); // a batch is in flight: b leaves as soon as its answer is in
    expect(o.sizes).toEqual([2, 1]);
    await o.answer();
    expect(o.sizes).toEqual([2, 1, 1]);
    await o.answer();
    batcher.request(c.client);
    expect(o.sizes).toHaveLength(3);
    batcher.hurry(c.client); // a window already waiting becomes urgent
    expect(o.sizes).toEqual([2, 1, 1, 1]);
    await o.answer();
    expect([a.probabilities.length, b.probabilities.length, c.probabilities.length]).toEqual([2, 2, 1]);
    reference(pcm, 2).forEach((p, i) => expect(Math.abs(b.probabilities[i] - p)).toBeLessThan(1e-5));
    expect(batcher.stats).toMatchObject({ urgent: 3, hedged: 0 });
    // without an offload, an urgent window is scored during the request
    const inline = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 60_000, awaitLiveMs: 0 });
    const d = player(pcm);
    inline.request(d.client, true);
    expect(d.probabilities).toHaveLength(1);
  });

  it('when the batch in flight is overdue, its urgent windows and those behind it are scored here; the late answer is not delivered twice', async () => {
    const o = deferredOffload(sharedSileroSession());
    const batcher = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 60_000, awaitLiveMs: 0, hedgeMs: 5 }, undefined, o.offload);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    /** Waits (up to 3 s) for `done`: a hedge comes when the batch is overdue, whatever the machine's load. */
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 150 && !done(); i++) await sleep(20);
    };
    const pcm = readAudioFixture('barge-in-long').samples;
    const [a, b, other, gone] = [player(pcm), player(pcm), player(pcm), player(pcm)];
    batcher.request(other.client);
    batcher.flush(); // in flight, unanswered: the thread stalls
    batcher.request(a.client, true); // waits behind it
    batcher.request(gone.client, true);
    batcher.cancel(gone.client); // withdrawn: never scored
    expect(o.sizes).toEqual([1]);
    await until(() => a.probabilities.length > 0);
    expect(a.probabilities).toHaveLength(1); // scored here
    expect(gone.probabilities).toEqual([]);
    expect(batcher.stats.hedged).toBe(1);
    expect(batcher.waitingWindows).toBe(0);
    await o.answer();
    expect(other.probabilities).toHaveLength(1);
    batcher.request(b.client, true); // leaves at once ...
    expect(o.sizes).toEqual([1, 1]);
    await until(() => b.probabilities.length > 0);
    expect(b.probabilities).toHaveLength(1); // ... and is scored here when its batch is overdue
    batcher.request(b.client); // its next window, with the state of the inline score
    batcher.flush(); // due: the old batch is still away
    await o.answer(); // the old batch's answer for b: dropped (b moved on)
    expect(b.probabilities).toHaveLength(1);
    await o.answer();
    expect(b.probabilities).toHaveLength(2);
    reference(pcm, 2).forEach((p, i) => expect(Math.abs(b.probabilities[i] - p)).toBeLessThan(1e-5));
    expect(Math.abs(a.probabilities[0] - reference(pcm, 1)[0])).toBeLessThan(1e-5);
    expect(batcher.stats.hedged).toBe(2);
  });

  it('a thread that is steadily slow (every core busy) is not hedged: overdue means three times its recent round trip', async () => {
    const o = deferredOffload(sharedSileroSession());
    const batcher = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 60_000, awaitLiveMs: 0, hedgeMs: 5 }, undefined, o.offload);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const pcm = readAudioFixture('barge-in-long').samples;
    const c = player(pcm);
    for (let k = 0; k < 6; k++) {
      batcher.request(c.client);
      batcher.flush();
      await sleep(100); // each answer ~100 ms after its batch left
      await o.answer();
    }
    batcher.request(c.client, true);
    expect(o.sizes).toHaveLength(7); // at once
    await sleep(60); // late by hedgeMs, not by the thread's own pace (~3 x 74+ ms)
    expect(c.probabilities).toHaveLength(6);
    expect(batcher.stats.hedged).toBe(0);
    await o.answer();
    expect(c.probabilities).toHaveLength(7); // the thread's answer
    reference(pcm, 7).forEach((p, i) => expect(Math.abs(c.probabilities[i] - p)).toBeLessThan(1e-5));
  });
});

describe('a client callback that throws', () => {
  const len = sileroInputLength(8000);
  /** A client that records its scores, throws `error` from its first `scored` (after asking for its next window when `batcher` is given). */
  function thrower(error: Error, batcher?: SileroBatcher) {
    const scores: number[] = [];
    const threw: unknown[] = [];
    const client: SileroBatchClient = {
      sampleRate: 8000, input: new Float32Array(len).fill(0.1), state: new Float32Array(SILERO_STATE_LENGTH),
      scored: (p) => {
        scores.push(p);
        if (scores.length === 1) {
          batcher?.request(client);
          throw error;
        }
      },
      failed: () => scores.push(-1),
      callbackThrew: (e) => threw.push(e),
    };
    return { client, scores, threw };
  }
  const quiet = () => {
    const scores: number[] = [];
    const client: SileroBatchClient = { sampleRate: 8000, input: new Float32Array(len), state: new Float32Array(SILERO_STATE_LENGTH), scored: (p) => scores.push(p), failed: () => scores.push(-1) };
    return { client, scores };
  };
  /** Collects the process's unhandled rejections while `body` runs (a throw from the offload's answer was one). */
  async function unhandledDuring(body: () => Promise<void>): Promise<unknown[]> {
    const seen: unknown[] = [];
    const listener = (reason: unknown) => seen.push(reason);
    process.on('unhandledRejection', listener);
    try {
      await body();
      await new Promise((r) => setTimeout(r, 10));
    } finally {
      process.off('unhandledRejection', listener);
    }
    return seen;
  }

  it('in a batch answered by the offload is reported; the others of the batch get theirs; the batcher goes on', async () => {
    const o = deferredOffload(sharedSileroSession());
    const reported: unknown[] = [];
    const batcher = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 60_000, awaitLiveMs: 0 }, undefined, o.offload, (e) => reported.push(e));
    const bug = new Error('listener bug');
    const a = thrower(bug, batcher);
    const b = quiet();
    const c = quiet();
    const unhandled = await unhandledDuring(async () => {
      batcher.request(a.client);
      batcher.request(b.client);
      batcher.request(c.client);
      batcher.flush();
      await o.answer();
    });
    expect(unhandled).toEqual([]);
    expect(reported).toEqual([bug]);
    expect(a.threw).toEqual([bug]);
    expect(a.scores).toHaveLength(1);
    expect(b.scores).toHaveLength(1);
    expect(c.scores).toHaveLength(1);
    expect(batcher.waitingWindows).toBe(0); // the window a asked for before throwing was withdrawn
    expect(batcher.batchInFlight).toBe(false);
    // the batcher goes on, the client that threw included
    batcher.request(a.client);
    batcher.request(b.client);
    batcher.flush();
    await o.answer();
    expect(a.scores).toHaveLength(2);
    expect(b.scores).toHaveLength(2);
    expect(o.sizes).toEqual([3, 2]);
  });

  it('in a batch scored inline from the batch timer is reported, not an uncaught exception; the others get theirs', async () => {
    const reported: unknown[] = [];
    const batcher = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 5, awaitLiveMs: 0 }, undefined, null, (e) => reported.push(e));
    const bug = new Error('listener bug');
    const a = thrower(bug, batcher);
    const b = quiet();
    batcher.request(a.client);
    batcher.request(b.client);
    await until(() => b.scores.length === 1); // the timer's flush
    expect(reported).toEqual([bug]);
    expect(a.threw).toEqual([bug]);
    expect(batcher.waitingWindows).toBe(0);
    batcher.request(a.client);
    batcher.request(b.client);
    await until(() => b.scores.length === 2);
    expect(a.scores).toHaveLength(2);
    expect(reported).toHaveLength(1);
  });

  it('a reporter or a client recovery that throws too is contained (reported, or ignored for the reporter)', async () => {
    const o = deferredOffload(sharedSileroSession());
    const reported: unknown[] = [];
    const batcher = new SileroBatcher(sharedSileroSession(), { maxWaitMs: 60_000, awaitLiveMs: 0 }, undefined, o.offload, (e) => {
      reported.push(e);
      throw new Error('the logger is broken too');
    });
    const a = thrower(new Error('listener bug'));
    a.client.callbackThrew = () => {
      throw new Error('recovery bug');
    };
    const b = quiet();
    const unhandled = await unhandledDuring(async () => {
      batcher.request(a.client);
      batcher.request(b.client);
      batcher.flush();
      await o.answer();
    });
    expect(unhandled).toEqual([]);
    expect(reported.map((e) => (e as Error).message)).toEqual(['listener bug', 'recovery bug']);
    expect(b.scores).toHaveLength(1);
  });

  /** Speech, a second of digital silence, speech again. */
  const twoUtterances = () => {
    const first = readAudioFixture('yes-i-will-attend').samples;
    const second = readAudioFixture('hello-who-is-this').samples;
    const pcm = new Int16Array(first.length + 8000 + second.length);
    pcm.set(first);
    pcm.set(second, first.length + 8000);
    return pcm;
  };

  it.each([
    ['on the inference thread', 'thread'],
    ['inline, from the batch timer', 'inline'],
  ] as const)('in a detector\'s listener (%s): that detector starts afresh, the other call\'s events are untouched', async (_label, inference) => {
    const reported: unknown[] = [];
    const f = new SileroVoiceActivityDetectorFactory({ inference, maxWaitMs: 16, awaitLiveMs: 0, onCallbackError: (e) => reported.push(e) });
    factories.push(f);
    f.warmUp();
    if (inference === 'thread') expect(await f.inferenceThread!.ready).toBe(true);
    const pcm = twoUtterances();
    const other = readAudioFixture('barge-in-long').samples;
    const buggyEvents: VadEvent[] = [];
    let thrown = false;
    let inferredAtThrow = 0;
    const buggy = f.create({ sampleRate: 8000, onEvent: (e) => {
      if (!thrown) {
        thrown = true;
        inferredAtThrow = buggy.counts.inferred;
        throw new Error('listener bug');
      }
      buggyEvents.push(e);
    } }) as SileroVoiceActivityDetector;
    const otherEvents: VadEvent[] = [];
    const fine = f.create({ sampleRate: 8000, onEvent: (e) => otherEvents.push(e) }) as SileroVoiceActivityDetector;
    const longest = Math.max(pcm.length, other.length);
    for (let i = 0, frame = 0; i < longest; i += 160, frame++) {
      if (i < pcm.length) buggyEvents.push(...buggy.push(pcm.subarray(i, i + 160)));
      if (i < other.length) otherEvents.push(...fine.push(other.subarray(i, i + 160)));
      if (frame % 8 === 7) {
        await new Promise((r) => setTimeout(r, 20)); // the batch timer fires (16 ms)
        await f.settled();
      }
    }
    await f.settled();
    expect(thrown).toBe(true);
    expect(reported.map((e) => (e as Error).message)).toEqual(['listener bug']);
    expect(otherEvents).toEqual(aloneEvents(other));
    if (inference === 'thread') expect(f.sharedBatcher.stats.offloaded).toBeGreaterThan(0);
    // the buggy call's detector went on, afresh: after the silence its events are the reference's
    expect(buggy.counts.inferred).toBeGreaterThan(inferredAtThrow + 10);
    const reference = aloneEvents(pcm);
    expect(buggyEvents.slice(-2)).toEqual(reference.slice(-2));
    expect(reference.slice(-2).map((e) => e.type)).toEqual(['speech_start', 'speech_stop']);
  });
});

describe('a detector on a broken runtime, through the offload', () => {
  it('is scored by loudness, never deaf', async () => {
    const real = sharedSileroSession();
    const broken: SileroSession = { modelPath: real.modelPath, inferences: 0, runs: 0, run: () => {
      throw new Error('runtime failed');
    } };
    const o = deferredOffload(broken);
    const d = new SileroVoiceActivityDetector(new SileroBatcher(broken, { maxWaitMs: 0 }, undefined, o.offload), { sampleRate: 8000 });
    const pcm = readAudioFixture('barge-in-long').samples;
    const events: VadEvent[] = [];
    for (let i = 0; i < pcm.length; i += 160) {
      events.push(...d.push(pcm.subarray(i, i + 160)));
      for (let k = 0; k < 5 && d.counts.inferred + d.counts.failed + d.counts.gated < Math.floor((i + 160) / 256); k++) await o.answer();
    }
    events.push(...d.push(new Int16Array(0)));
    expect(d.counts.failed).toBe(d.counts.inferred + d.counts.failed - d.counts.inferred);
    expect(d.counts.failed + d.counts.gated).toBe(Math.floor(pcm.length / 256));
    expect(d.counts.inferred).toBe(0);
    expect(events.map((e) => e.type)).toEqual(new EnergyVoiceActivityDetector({ sampleRate: 8000 }).push(pcm).map((e) => e.type));
  });
});
