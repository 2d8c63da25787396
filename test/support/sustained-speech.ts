/**
 * Test helper: the longest run of sustained speech (the barge-in rule's measure) a VAD sees in `pcm`, fed as a
 * voice session feeds it: 20 ms frames on the stream's clock, every window verdict judged as it comes (`onWindow`).
 */
import type { VadOptions, VoiceActivityDetector } from '../../core/ports/voice-activity-detector.port.js';
import { SustainedSpeech } from '../../core/voice/sustained-speech.js';

export function longestSustainedSpeechMs(create: (options: VadOptions) => VoiceActivityDetector, pcm: Int16Array): number {
  const sustained = new SustainedSpeech();
  let judgedUntil = 0;
  const vad = create({
    sampleRate: 8000,
    onWindow: (speech, endMs) => {
      if (endMs <= judgedUntil) return;
      judgedUntil = endMs;
      sustained.judge(speech, endMs);
    },
  });
  let streamMs = 0;
  let longest = 0;
  for (let i = 0; i < pcm.length; i += 160) {
    const frame = pcm.subarray(i, i + 160);
    streamMs += frame.length / 8;
    sustained.push(frame, streamMs, frame.length / 8);
    vad.push(frame);
    longest = Math.max(longest, sustained.durationMs);
  }
  vad.close();
  return longest;
}
