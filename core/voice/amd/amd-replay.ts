/**
 * Replays a recorded answer through our detector offline, the way a voice session would feed it (used by the
 * fixture tests and bench/amd.mjs; docs/voicemail.md "Measured"): 20 ms frames of 8 kHz PCM, a VAD on the same
 * frames, and an STT stand-in that knows the greeting's words and reveals them as the caller speaks: interims at
 * `wordsPerSecond` of VAD speech time, `interimDelayMs` late, and a final of the words so far `finalDelayMs`
 * after each VAD stop (the whole text at the end). Pure: the caller gives the PCM, the text and the VAD.
 */
import type { VoiceActivityDetector } from '../../ports/voice-activity-detector.port.js';
import { AmdDetector, type AmdDetectorOptions, type AmdEvent } from './amd-detector.js';
import type { AmdResult } from './amd-result.js';

export interface ReplayOptions {
  vad: VoiceActivityDetector;
  detector?: Partial<AmdDetectorOptions>;
  wordsPerSecond?: number;
  interimDelayMs?: number;
  finalDelayMs?: number;
  /** Stop feeding once the greeting ended (a message would start) or at the end of the audio. */
  stopAtGreetingEnd?: boolean;
}

export interface ReplayOutcome {
  result: AmdResult | null;
  events: AmdEvent[];
  beepOnsetMs: number | null;
  greetingEndedAtMs: number | null;
}

const FRAME = 160;

export function replayAnswer(pcm: Int16Array, transcript: string, options: ReplayOptions): ReplayOutcome {
  const detector = new AmdDetector(options.detector);
  const words = transcript.trim().split(/\s+/).filter((w) => w !== '');
  const wps = options.wordsPerSecond ?? 3.2;
  const interimDelay = options.interimDelayMs ?? 200;
  const finalDelay = options.finalDelayMs ?? 300;
  const events: AmdEvent[] = [];
  const pending: Array<{ at: number; text: string; final: boolean }> = [];
  let finalWords = 0;
  let revealed = 0;
  let speechMs = 0;
  let speaking = false;

  const take = (list: AmdEvent[]) => events.push(...list);
  const deliverDue = (now: number) => {
    pending.sort((a, b) => a.at - b.at);
    while (pending.length > 0 && pending[0]!.at <= now) {
      const p = pending.shift()!;
      take(detector.transcript(p.text, p.final, p.at));
    }
  };

  for (let i = 0; i < pcm.length; i += FRAME) {
    const frame = pcm.subarray(i, Math.min(pcm.length, i + FRAME));
    const t = (i / 8000) * 1000;
    const end = t + (frame.length / 8000) * 1000;
    take(detector.audio(frame, t));
    for (const e of options.vad.push(frame)) {
      if (e.type === 'speech_start') {
        speaking = true;
        take(detector.speechStarted(e.atMs));
      } else {
        speaking = false;
        take(detector.speechStopped(e.atMs));
        if (revealed > finalWords) {
          pending.push({ at: e.atMs + finalDelay, text: words.slice(finalWords, revealed).join(' '), final: true });
          finalWords = revealed;
        }
      }
    }
    if (speaking) {
      speechMs += end - t;
      const now = Math.min(words.length, Math.max(1, Math.floor((speechMs / 1000) * wps)));
      if (now > revealed) {
        revealed = now;
        pending.push({ at: end + interimDelay, text: words.slice(finalWords, revealed).join(' '), final: false });
      }
    }
    deliverDue(end);
    if (options.stopAtGreetingEnd && detector.greetingEnded) break;
  }
  const endMs = (pcm.length / 8000) * 1000;
  if (finalWords < words.length) pending.push({ at: endMs, text: words.slice(finalWords).join(' '), final: true });
  deliverDue(endMs);
  const beep = events.find((e) => e.type === 'beep');
  const ended = events.find((e) => e.type === 'greeting_ended');
  return {
    result: detector.result,
    events,
    beepOnsetMs: beep?.type === 'beep' ? beep.onsetMs : null,
    greetingEndedAtMs: ended?.type === 'greeting_ended' ? ended.atMs : null,
  };
}
