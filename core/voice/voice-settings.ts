/**
 * A call's voice settings from its workflow's `workflow_configurations` (API.md 11), with the defaults the
 * API documents. Values outside the documented ranges were refused when the workflow was saved; here they
 * are only clamped to sane bounds. Pure.
 */
import { ENDPOINTING_DEFAULTS, type EndpointingOptions } from './endpointing.js';

export interface VoiceSettings {
  /** Silence (ms, counted from the agent's last audio) before the idle check-in; twice ends the call. */
  userIdleTimeoutMs: number;
  /** The call's time limit (ms); null: none. */
  maxCallDurationMs: number | null;
  /** Caller speech shorter than this never interrupts the agent. */
  interruptionMinSpeechMs: number;
  /**
   * With an STT that streams interim results: how long past interruptionMinSpeechMs of speech the barge-in
   * waits at most for the caller's first words (so a backchannel can be told from an interruption) before
   * interrupting anyway; counted from the speech's onset, so a late frame waits less. Small, so a real
   * interruption still clears within interruptionMinSpeechMs + 100 ms with the platform's own delay on top.
   */
  interruptionWordWaitMs: number;
  /**
   * A barge-in whose utterance turns out to be only backchannel words or nothing (noise) resumes the agent's
   * cut reply when the utterance is committed within this long of the caller's speech ending (LiveKit's
   * falseInterruptionTimeout); later, it is left alone.
   */
  falseInterruptionTimeoutMs: number;
  endpointing: Required<EndpointingOptions>;
  /** After the time-limit goodbye starts, the call ends at the latest this much later (ms). */
  goodbyeGraceMs: number;
}

export const VOICE_DEFAULTS: VoiceSettings = Object.freeze({
  userIdleTimeoutMs: 10_000,
  maxCallDurationMs: null,
  interruptionMinSpeechMs: 300,
  interruptionWordWaitMs: 50,
  falseInterruptionTimeoutMs: 2000,
  endpointing: { ...ENDPOINTING_DEFAULTS },
  goodbyeGraceMs: 15_000,
});

const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

export function voiceSettingsFrom(configurations: Record<string, unknown> | null | undefined): VoiceSettings {
  const c = configurations ?? {};
  const idle = num(c.user_idle_timeout_seconds);
  const max = num(c.max_call_duration_seconds);
  const interruption = num(c.interruption_min_speech_ms);
  return {
    ...VOICE_DEFAULTS,
    endpointing: { ...VOICE_DEFAULTS.endpointing },
    userIdleTimeoutMs: idle !== undefined && idle > 0 ? idle * 1000 : VOICE_DEFAULTS.userIdleTimeoutMs,
    maxCallDurationMs: max !== undefined && max > 0 ? max * 1000 : null,
    interruptionMinSpeechMs: interruption !== undefined && interruption >= 0 ? interruption : VOICE_DEFAULTS.interruptionMinSpeechMs,
  };
}
