/**
 * The integer-decimation kernel of `Resampler` (24k→8k, 16k→8k) in WebAssembly SIMD: four f32 products per
 * instruction where the JavaScript kernel does one f64 product per tap pair. Decimating OpenAI's 24 kHz TTS audio
 * to 8 kHz was the largest single item of the service thread's time at 50 talking calls (about a tenth); this
 * kernel does it in about a quarter of the time (`node bench/resample-micro.mjs`). The module (284 bytes, source in
 * resample-simd.wat) is compiled once per process, on first use, synchronously.
 *
 * Precision: f32 sums of 16-bit samples times taps whose magnitudes sum to ~1.2 stay within ~0.01 of the f64 sum,
 * so an output differs from the JavaScript kernel's by at most 1 (a sum within that of a half), and, like it, does
 * not depend on how the stream is chunked (each output is computed from the same window in the same order).
 *
 * One scratch memory is shared by every resampler of the process (the thread is single: a `decimate` call runs to
 * its end before another starts): the designs' taps at the bottom, one stream's window and outputs above them.
 * Where WebAssembly or its SIMD is missing, `simdDecimator()` is null and `Resampler` uses its JavaScript kernel.
 */
import { RESAMPLE_SIMD_WASM } from './resample-simd.wasm.js';

interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmGlobal {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
}

const PAGE = 65536;
/** Bytes kept for the designs' taps (16,384 f32: integer-decimation designs have at most a few hundred taps). */
const TAPS_BYTES = PAGE;

/** A design's taps placed in the kernel's memory. */
export interface SimdTaps {
  /** Byte offset of the taps, reversed and zero-padded. */
  readonly offset: number;
  /** Taps read per output: the filter's length rounded up to a multiple of 8 (the padding's taps are 0). */
  readonly kp: number;
}

export class SimdDecimator {
  private tapsEnd = 0;
  private readonly placed = new WeakMap<Float64Array, SimdTaps | null>();

  private constructor(
    private readonly memory: WasmMemory,
    private readonly kernel: (taps: number, kp: number, step: number, w: number, count: number, out: number) => void,
  ) {}

  /** Compiles the kernel; null where WebAssembly SIMD is not available (the module does not validate). */
  static create(): SimdDecimator | null {
    const wasm = (globalThis as { WebAssembly?: WasmGlobal }).WebAssembly;
    if (!wasm) return null;
    try {
      const bytes = Uint8Array.from(atob(RESAMPLE_SIMD_WASM), (c) => c.charCodeAt(0));
      const { exports } = new wasm.Instance(new wasm.Module(bytes), {});
      const memory = exports.memory as WasmMemory;
      memory.grow(1); // the taps' page below, the first window page above
      return new SimdDecimator(memory, exports.decimate as SimdDecimator['kernel']);
    } catch {
      return null;
    }
  }

  /**
   * `taps` (the filter for output n = Σ taps[i]·x[newest − i]) placed in the kernel's memory, once per array;
   * null when the taps area is full (the caller keeps its JavaScript kernel for that design).
   */
  place(taps: Float64Array, K: number): SimdTaps | null {
    const known = this.placed.get(taps);
    if (known !== undefined) return known;
    const kp = Math.ceil(K / 8) * 8;
    let result: SimdTaps | null = null;
    if (this.tapsEnd + kp * 4 <= TAPS_BYTES) {
      const f32 = new Float32Array(this.memory.buffer, this.tapsEnd, kp);
      // the window is read oldest first: tap i of the newest sample sits at K-1-i
      for (let j = 0; j < K; j++) f32[j] = taps[K - 1 - j]!;
      result = { offset: this.tapsEnd, kp };
      this.tapsEnd += kp * 4;
    }
    this.placed.set(taps, result);
    return result;
  }

  /**
   * The window for a chunk: `samples` f32 (history, then the chunk) at the bottom of the scratch area, with the
   * padding the last output's read may run into after it; valid until the next `window` call.
   */
  window(samples: number): Float32Array {
    this.ensure(TAPS_BYTES + samples * 4 + 32 + this.outBytes(samples));
    const w = new Float32Array(this.memory.buffer, TAPS_BYTES, samples + 8);
    // the padding a last output reads (times a 0 tap) must be a number: it may hold an earlier call's outputs
    w.fill(0, samples);
    return w.subarray(0, samples);
  }

  /**
   * Outputs n < `count` of the window `window(samples)` returned, output n's first input at window index
   * `first + n·M`; written into `out` (at least `count` long).
   */
  decimate(taps: SimdTaps, M: number, samples: number, first: number, count: number, out: Int16Array): void {
    // room for them was made by `window` (count <= samples): no growth here, which would detach its view
    const outOffset = TAPS_BYTES + samples * 4 + 32;
    this.kernel(taps.offset, taps.kp, M * 4, TAPS_BYTES + first * 4, count, outOffset);
    out.set(new Int16Array(this.memory.buffer, outOffset, count));
  }

  /** Output bytes a window of `samples` can need (one output per input sample at most), 16-byte aligned. */
  private outBytes(samples: number): number {
    return (samples * 2 + 15) & ~15;
  }

  private ensure(bytes: number): void {
    const have = this.memory.buffer.byteLength;
    if (bytes > have) this.memory.grow(Math.ceil((bytes - have) / PAGE));
  }
}

let shared: SimdDecimator | null | undefined;
/** The process's kernel, compiled on first use; null without WebAssembly SIMD. */
export function simdDecimator(): SimdDecimator | null {
  if (shared === undefined) shared = SimdDecimator.create();
  return shared;
}
