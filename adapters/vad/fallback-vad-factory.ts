/**
 * The process's VoiceActivityDetectorFactory (docs/voice.md "Making calls talk"): Silero when its runtime and
 * model load, else the energy detector with one logged warning, so a machine without onnxruntime still talks
 * (with a VAD that mistakes loud noise for speech). `warmUp()` loads Silero now (the worker and all-in-one roles
 * call it at start-up); otherwise the first call decides.
 */
import type { Logger } from '../../core/ports/logger.port.js';
import type { VadOptions, VoiceActivityDetector, VoiceActivityDetectorFactory } from '../../core/ports/voice-activity-detector.port.js';
import { EnergyVoiceActivityDetectorFactory } from '../../core/voice/energy-vad.js';

export class FallbackVadFactory implements VoiceActivityDetectorFactory {
  private chosen: VoiceActivityDetectorFactory | null = null;

  constructor(
    /** The detector calls get when it loads (Silero); public for the voice benchmark, which reads its batcher's stats. */
    readonly primary: VoiceActivityDetectorFactory & { warmUp(): unknown; close?(): Promise<void> },
    private readonly log: Logger,
    private readonly fallback: VoiceActivityDetectorFactory = new EnergyVoiceActivityDetectorFactory(),
  ) {}

  /** Which detector calls get: `silero` or `energy` (after `warmUp` or the first call). */
  get kind(): 'silero' | 'energy' | 'undecided' {
    return this.chosen === null ? 'undecided' : this.chosen === this.primary ? 'silero' : 'energy';
  }

  /** Loads the primary detector's model; on failure, logs a warning and falls back. Never throws. Idempotent. */
  warmUp(): void {
    if (this.chosen) return;
    try {
      this.primary.warmUp();
      this.chosen = this.primary;
      this.log.info({ vad: 'silero' }, 'voice activity detection: Silero model loaded');
    } catch (e) {
      this.chosen = this.fallback;
      this.log.warn({ vad: 'energy', err: (e as Error)?.message }, 'the Silero VAD model could not be loaded: calls use the energy detector');
    }
  }

  /** Releases what the primary detector holds (Silero's inference thread) at shutdown. Idempotent; never throws. */
  async close(): Promise<void> {
    await this.primary.close?.().catch((e: unknown) => this.log.warn({ err: (e as Error)?.message }, 'closing the voice activity detector failed'));
  }

  create(options: VadOptions): VoiceActivityDetector {
    this.warmUp();
    return this.chosen!.create(options);
  }
}
