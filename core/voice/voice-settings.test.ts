import { describe, expect, it } from '@jest/globals';
import { VOICE_DEFAULTS, voiceSettingsFrom } from './voice-settings.js';

describe('voiceSettingsFrom', () => {
  it('reads the workflow_configurations keys of API.md 11', () => {
    expect(voiceSettingsFrom({ user_idle_timeout_seconds: 20, max_call_duration_seconds: 600, interruption_min_speech_ms: 500 })).toMatchObject({
      userIdleTimeoutMs: 20_000,
      maxCallDurationMs: 600_000,
      interruptionMinSpeechMs: 500,
    });
  });

  it('falls back to the documented defaults (10 s idle, 300 ms interruption, no time limit)', () => {
    expect(voiceSettingsFrom(undefined)).toEqual(VOICE_DEFAULTS);
    expect(voiceSettingsFrom({ user_idle_timeout_seconds: 'x', interruption_min_speech_ms: -1 })).toMatchObject({
      userIdleTimeoutMs: 10_000,
      interruptionMinSpeechMs: 300,
      maxCallDurationMs: null,
    });
  });
});
