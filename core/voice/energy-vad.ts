import type { VadOptions, VoiceActivityDetector, VoiceActivityDetectorFactory } from '../ports/voice-activity-detector.port.js';
import { rmsDbfs } from './energy.js';
import { WindowedVoiceActivityDetector } from './vad-hysteresis.js';

/**
 * A voice activity detector that scores each 32 ms window by loudness alone: 1 at or above `speechDbfs`, else
 * 0 (docs/voice.md "Audio path"). No model: used in tests and as the fallback when the Silero model cannot be
 * loaded. It cannot tell speech from loud noise.
 */
export const ENERGY_VAD_SPEECH_DBFS = -40;

export class EnergyVoiceActivityDetector extends WindowedVoiceActivityDetector {
  constructor(
    options: VadOptions,
    private readonly speechDbfs = ENERGY_VAD_SPEECH_DBFS,
  ) {
    super(options);
  }

  protected score(window: Int16Array): number {
    return rmsDbfs(window) >= this.speechDbfs ? 1 : 0;
  }

  protected resetModel(): void {
    // no state beyond the hysteresis
  }
}

export class EnergyVoiceActivityDetectorFactory implements VoiceActivityDetectorFactory {
  constructor(private readonly speechDbfs = ENERGY_VAD_SPEECH_DBFS) {}

  create(options: VadOptions): VoiceActivityDetector {
    return new EnergyVoiceActivityDetector(options, this.speechDbfs);
  }
}
