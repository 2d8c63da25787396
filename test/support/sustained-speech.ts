/**
 * Test helper: the longest run of sustained speech (the barge-in rule's measure) a VAD sees in `pcm`, fed as a
 * voice session feeds it: 20 ms frames on the stream's clock, the VAD's newest window verdict after each.
 */
import type { VoiceActivityDetector } from '../../core/ports/voice-activity-detector.port.js';
import { SustainedSpeech } from '../../core/voice/sustained-speech.js';

export function longestSustainedSpeechMs(vad: VoiceActivityDetector, pcm: Int16Array): number {
  const sustained = new SustainedSpeech();
  let streamMs = 0;
  let judgedUntil = 0;
  let longest = 0;
  for (let i = 0; i < pcm.length; i += 160) {
    const frame = pcm.subarray(i, i + 160);
    streamMs += frame.length / 8;
    sustained.push(frame, streamMs, frame.length / 8);
    vad.push(frame);
    const verdict = vad.lastWindow;
    if (verdict.endMs > judgedUntil) {
      judgedUntil = verdict.endMs;
      sustained.judge(verdict.speech, verdict.endMs);
    }
    longest = Math.max(longest, sustained.durationMs);
  }
  return longest;
}
