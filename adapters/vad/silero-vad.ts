import type { VadOptions, VoiceActivityDetector, VoiceActivityDetectorFactory } from '../../core/ports/voice-activity-detector.port.js';
import { SOUND_FLOOR_DBFS, rmsDbfs } from '../../core/voice/energy.js';
import { ENERGY_VAD_SPEECH_DBFS } from '../../core/voice/energy-vad.js';
import { DeferredScoreVoiceActivityDetector } from '../../core/voice/vad-hysteresis.js';
import { SILERO_BATCH_DEFAULTS, SileroBatcher, type SileroBatchClient, type SileroBatchSettings } from './silero-batcher.js';
import { SILERO_CONTEXT_SAMPLES, SILERO_STATE_LENGTH, defaultSileroModelPath, sharedSileroSession, sileroInputLength, type SileroSession } from './silero-session.js';
import { SileroInferenceThread, type SileroThreadRestartPolicy } from './silero-thread.js';

/**
 * Silero VAD v5 behind the VoiceActivityDetector port (docs/voice.md "Audio path"): native 32 ms windows (256
 * samples at 8 kHz, 512 at 16 kHz) scored by the process's one shared inference session, each call with its own
 * recurrent state and context. An energy gate comes first: a window quieter than `gateDbfs` scores 0 without
 * inference (silence and line noise are most of a call), and after a second of gated windows the recurrent
 * state starts afresh, as at the start of a stream. The windows that pass the gate are scored by the factory's
 * batcher together with the other calls' (adapters/vad/silero-batcher.ts), so their events come up to
 * `maxWaitMs` after the audio, through `VadOptions.onEvent`; a call's windows (gated or not) are settled
 * strictly in order. A window the runtime fails on is scored by loudness (the energy detector's level), so a
 * broken runtime leaves calls with an energy VAD instead of a deaf one. Hysteresis (`threshold`,
 * `minSpeechMs`, `minSilenceMs`) is the shared one of core/voice/vad-hysteresis.ts.
 */
export const SILERO_GATE_DBFS = SOUND_FLOOR_DBFS;
const FRESH_STATE_AFTER_GATED_WINDOWS = 31; // ~1 s

export interface SileroVadSettings extends Partial<SileroBatchSettings> {
  /** Windows quieter than this (RMS dBFS) are scored 0 without inference. -Infinity disables the gate. */
  gateDbfs?: number;
  /** Another model file (default: the packaged silero_vad_v5.onnx). */
  modelPath?: string;
  /**
   * Where the model runs (docs/voice.md "Voice activity detection"): `thread`, on a worker thread of its own
   * (the service's setting: the event loop only cuts windows and copies rows), falling back to inline when the
   * thread cannot start or stops; `inline` (default here), on the calling thread during `flush()`, which offline
   * replays and tests that flush synchronously rely on.
   */
  inference?: 'thread' | 'inline';
  /**
   * Told when the inference thread cannot start or stops (calls are then scored inline); the message says whether
   * and when it starts again.
   */
  onThreadFailure?: (message: string) => void;
  /** Told when the inference thread is running again after a death (calls are scored there again). */
  onThreadRestart?: (message: string) => void;
  /** When a thread that died starts again (default `SILERO_THREAD_RESTART_DEFAULTS`). */
  threadRestart?: Partial<SileroThreadRestartPolicy>;
  /**
   * Told of an error thrown by a detector's listener (`onEvent`, `onWindow`) while the batcher delivered a score;
   * that detector was reset (it starts afresh), the other calls were not touched. Default: a process warning.
   */
  onCallbackError?: (error: unknown) => void;
}

/** A window cut and waiting for its turn: its level, and its model input unless the gate skips it. */
interface Entry {
  level: number;
  row: Float32Array | null;
}

export class SileroVoiceActivityDetector extends DeferredScoreVoiceActivityDetector {
  private readonly context: Float32Array;
  private readonly rowLength: number;
  /** Windows not settled yet, oldest first; the head is the one being scored when `scoring`. */
  private readonly queue: Entry[] = [];
  private readonly spareRows: Float32Array[] = [];
  private readonly client: SileroBatchClient & { input: Float32Array };
  private scoring = false;
  /** `expedite(true)`: this call's windows are urgent (the batcher scores them at once; see silero-batcher.ts). */
  private urgent = false;
  private gatedRun = 0;
  /** Windows scored by the model / skipped by the gate / whose inference failed (scored by loudness). */
  readonly counts = { inferred: 0, gated: 0, failed: 0 };

  constructor(
    private readonly batcher: SileroBatcher,
    options: VadOptions,
    private readonly gateDbfs = SILERO_GATE_DBFS,
  ) {
    // audio under the gate is not speech to Silero: where it begins inside a speech window, the speech ended
    super(options, gateDbfs);
    const rate = this.options.sampleRate;
    this.context = new Float32Array(SILERO_CONTEXT_SAMPLES[rate]);
    this.rowLength = sileroInputLength(rate);
    this.client = {
      sampleRate: rate,
      input: new Float32Array(0),
      state: new Float32Array(SILERO_STATE_LENGTH),
      scored: (p) => this.scored(p, false),
      failed: () => this.scored(-1, true),
      // a listener threw while this call's score was delivered: the hysteresis and the model state may be half
      // stepped, so the detector starts afresh, as after reset() (its windows waiting are dropped)
      callbackThrew: () => this.reset(),
    };
  }

  protected acceptWindow(window: Int16Array): void {
    const level = rmsDbfs(window);
    let row: Float32Array | null = null;
    if (level >= this.gateDbfs) {
      row = this.spareRows.pop() ?? new Float32Array(this.rowLength);
      row.set(this.context);
      const ctx = this.context.length;
      for (let i = 0; i < window.length; i++) row[ctx + i] = window[i] / 32768;
    }
    // the next window's context: the last samples of this one, whatever the gate decided
    const ctx = this.context.length;
    const n = window.length;
    for (let i = 0; i < ctx; i++) this.context[i] = window[n - ctx + i] / 32768;
    this.queue.push({ level, row });
    this.drain();
  }

  /** Settles windows from the head of the queue until one needs the model (then asks the batcher for it). */
  private drain(): void {
    while (!this.scoring && this.queue.length > 0) {
      const head = this.queue[0];
      if (head.row === null) {
        this.queue.shift();
        this.counts.gated++;
        if (++this.gatedRun === FRESH_STATE_AFTER_GATED_WINDOWS) this.client.state.fill(0);
        this.settle(0);
        continue;
      }
      this.scoring = true;
      this.client.input = head.row;
      this.batcher.request(this.client, this.urgent); // may score at once (and drain further from there)
    }
  }

  /**
   * While on, each window is scored as soon as it is cut: the batch leaves at once, and a window the inference
   * thread is late with is scored inline (the batcher's hedge). The window waiting now, if any, is hurried too.
   */
  expedite(on: boolean): void {
    this.urgent = on;
    if (on && this.scoring) this.batcher.hurry(this.client);
  }

  private scored(p: number, failed: boolean): void {
    if (!this.scoring) return;
    this.scoring = false;
    const head = this.queue.shift()!;
    this.spareRows.push(head.row!);
    this.gatedRun = 0;
    if (failed) {
      this.counts.failed++;
      p = head.level >= ENERGY_VAD_SPEECH_DBFS ? 1 : 0;
    } else this.counts.inferred++;
    this.settle(p);
    this.drain();
  }

  private dropQueue(): void {
    this.batcher.cancel(this.client);
    this.scoring = false;
    for (const e of this.queue.splice(0)) if (e.row) this.spareRows.push(e.row);
  }

  protected resetModel(): void {
    this.dropQueue();
    this.client.state.fill(0);
    this.context.fill(0);
    this.gatedRun = 0;
  }

  protected override closeModel(): void {
    this.dropQueue();
  }
}

export class SileroVoiceActivityDetectorFactory implements VoiceActivityDetectorFactory {
  private batcher: SileroBatcher | null = null;
  private thread: SileroInferenceThread | null = null;

  constructor(private readonly settings: SileroVadSettings = {}) {}

  /**
   * Loads the shared session now (at start-up), so a missing runtime or model is reported there; with
   * `inference: 'thread'` also starts the inference thread, which loads its own copy (until it is ready, and
   * if it fails, batches are scored inline by this session).
   */
  warmUp(): SileroSession {
    if (!this.batcher) {
      const modelPath = this.settings.modelPath ?? defaultSileroModelPath();
      const session = sharedSileroSession(modelPath);
      if (this.settings.inference === 'thread') {
        this.thread = new SileroInferenceThread(modelPath, this.settings.onThreadFailure, {
          ...(this.settings.onThreadRestart ? { onRestart: this.settings.onThreadRestart } : {}),
          ...(this.settings.threadRestart ? { restart: this.settings.threadRestart } : {}),
        });
      }
      this.batcher = new SileroBatcher(session, {
        maxWaitMs: this.settings.maxWaitMs ?? SILERO_BATCH_DEFAULTS.maxWaitMs,
        maxBatch: this.settings.maxBatch ?? SILERO_BATCH_DEFAULTS.maxBatch,
        awaitLiveMs: this.settings.awaitLiveMs ?? SILERO_BATCH_DEFAULTS.awaitLiveMs,
        hedgeMs: this.settings.hedgeMs ?? SILERO_BATCH_DEFAULTS.hedgeMs,
      }, undefined, this.thread, this.settings.onCallbackError);
    }
    return this.batcher.session;
  }

  /** The inference thread (`inference: 'thread'`, after `warmUp`), else null. */
  get inferenceThread(): SileroInferenceThread | null {
    return this.thread;
  }

  /**
   * Stops the inference thread (the service's stop hook), and any restart of it that was waiting; later batches
   * are scored inline. Idempotent.
   */
  async close(): Promise<void> {
    await this.thread?.close();
  }

  /** Resolves once every window asked for so far is scored (its events delivered), wherever it runs. */
  async settled(): Promise<void> {
    await this.batcher?.settled();
  }

  /** The batcher every detector of this factory shares. */
  get sharedBatcher(): SileroBatcher {
    this.warmUp();
    return this.batcher!;
  }

  create(options: VadOptions): VoiceActivityDetector {
    return new SileroVoiceActivityDetector(this.sharedBatcher, options, this.settings.gateDbfs ?? SILERO_GATE_DBFS);
  }

  /** Scores every window waiting now (their events go to the detectors' listeners). For offline replays and tests. */
  flush(): void {
    this.batcher?.flush();
  }
}
