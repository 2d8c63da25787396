import type { VadOptions, VoiceActivityDetector, VoiceActivityDetectorFactory } from '../ports/voice-activity-detector.port.js';
import { rmsDbfs } from './energy.js';
import { spectralFlatness } from './spectral-flatness.js';
import { WindowedVoiceActivityDetector } from './vad-hysteresis.js';

/**
 * A voice activity detector without a model (docs/voice.md "Audio path"): each 32 ms window scores 1 when it is
 * at least `speechDbfs` loud AND its spectrum is peaked rather than flat (spectral flatness below
 * `maxFlatness`), else 0. Used in tests and as the fallback when the Silero model cannot be loaded.
 *
 * Loudness alone cannot tell hiss or line static from speech; flatness can: white noise scores 0.67-0.90 on the
 * hiss fixture, voiced speech 0.0-0.3, a tone 0. Unvoiced consonants can be as flat as noise ("s" at an
 * utterance's start scores ~0.7), so an utterance that opens with one is detected a window or two later; loud
 * noise whose power is mostly below 250 Hz (rumble) is not broadband and still passes for speech here.
 */
export const ENERGY_VAD_SPEECH_DBFS = -40;
/** Windows at least this flat are noise (measured on test/fixtures/audio: hiss ≥ 0.67, vowels ≤ 0.4). */
export const ENERGY_VAD_MAX_FLATNESS = 0.6;

export class EnergyVoiceActivityDetector extends WindowedVoiceActivityDetector {
  constructor(
    options: VadOptions,
    private readonly speechDbfs = ENERGY_VAD_SPEECH_DBFS,
    private readonly maxFlatness = ENERGY_VAD_MAX_FLATNESS,
  ) {
    super(options, speechDbfs);
  }

  protected score(window: Int16Array): number {
    if (rmsDbfs(window) < this.speechDbfs) return 0;
    return spectralFlatness(window, this.options.sampleRate) < this.maxFlatness ? 1 : 0;
  }

  protected resetModel(): void {
    // no state beyond the hysteresis
  }
}

export class EnergyVoiceActivityDetectorFactory implements VoiceActivityDetectorFactory {
  constructor(
    private readonly speechDbfs = ENERGY_VAD_SPEECH_DBFS,
    private readonly maxFlatness = ENERGY_VAD_MAX_FLATNESS,
  ) {}

  create(options: VadOptions): VoiceActivityDetector {
    return new EnergyVoiceActivityDetector(options, this.speechDbfs, this.maxFlatness);
  }
}
