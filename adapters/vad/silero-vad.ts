import type { VadOptions, VoiceActivityDetector, VoiceActivityDetectorFactory } from '../../core/ports/voice-activity-detector.port.js';
import { rmsDbfs } from '../../core/voice/energy.js';
import { WindowedVoiceActivityDetector } from '../../core/voice/vad-hysteresis.js';
import { SILERO_CONTEXT_SAMPLES, sharedSileroSession, type SileroSession, type SileroStream } from './silero-session.js';

/**
 * Silero VAD v5 behind the VoiceActivityDetector port (docs/voice.md "Audio path"): native 32 ms windows (256
 * samples at 8 kHz, 512 at 16 kHz) scored by the process's one shared inference session, each call with its own
 * recurrent state and context. An energy gate comes first: a window quieter than `gateDbfs` scores 0 without
 * inference (silence and line noise are most of a call), and after a second of gated windows the recurrent
 * state starts afresh, as at the start of a stream. Hysteresis (`threshold`, `minSpeechMs`, `minSilenceMs`) is
 * the shared WindowedVoiceActivityDetector's.
 */
export const SILERO_GATE_DBFS = -50;
const FRESH_STATE_AFTER_GATED_WINDOWS = 31; // ~1 s

export interface SileroVadSettings {
  /** Windows quieter than this (RMS dBFS) are scored 0 without inference. -Infinity disables the gate. */
  gateDbfs?: number;
  /** Another model file (default: the packaged silero_vad_v5.onnx). */
  modelPath?: string;
}

export class SileroVoiceActivityDetector extends WindowedVoiceActivityDetector {
  private readonly stream: SileroStream;
  private readonly input: Float32Array;
  private readonly context: number;
  private gatedRun = 0;
  /** Windows scored by the model / skipped by the gate / whose inference failed (scored 0). */
  readonly counts = { inferred: 0, gated: 0, failed: 0 };

  constructor(
    private readonly session: SileroSession,
    options: VadOptions,
    private readonly gateDbfs = SILERO_GATE_DBFS,
  ) {
    super(options);
    this.context = SILERO_CONTEXT_SAMPLES[this.options.sampleRate];
    this.stream = session.openStream(this.options.sampleRate);
    this.input = this.stream.input;
  }

  protected score(window: Int16Array): number {
    const input = this.input;
    const ctx = this.context;
    const gated = rmsDbfs(window) < this.gateDbfs;
    if (gated) {
      this.counts.gated++;
      if (++this.gatedRun === FRESH_STATE_AFTER_GATED_WINDOWS) this.stream.state.fill(0);
    } else {
      this.gatedRun = 0;
      for (let i = 0; i < window.length; i++) input[ctx + i] = window[i] / 32768;
    }
    let p = 0;
    if (!gated) {
      try {
        p = this.session.infer(this.stream);
        this.counts.inferred++;
      } catch {
        this.counts.failed++;
        p = 0;
      }
    }
    // the next window's context: the last samples of this one
    const n = window.length;
    for (let i = 0; i < ctx; i++) input[i] = window[n - ctx + i] / 32768;
    return p;
  }

  protected resetModel(): void {
    this.stream.state.fill(0);
    this.input.fill(0);
    this.gatedRun = 0;
  }
}

export class SileroVoiceActivityDetectorFactory implements VoiceActivityDetectorFactory {
  private session: SileroSession | null = null;

  constructor(private readonly settings: SileroVadSettings = {}) {}

  /** Loads the shared session now (at start-up), so a missing runtime or model is reported there. */
  warmUp(): SileroSession {
    this.session ??= sharedSileroSession(this.settings.modelPath);
    return this.session;
  }

  create(options: VadOptions): VoiceActivityDetector {
    return new SileroVoiceActivityDetector(this.warmUp(), options, this.settings.gateDbfs ?? SILERO_GATE_DBFS);
  }
}
