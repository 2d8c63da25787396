import { describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { MULAW_8K, concatBytes } from '../../core/voice/audio-format.js';
import { FakeDeepgramServer } from './deepgram/fake-deepgram-server.js';
import { encodeSamples, silenceAudio, speechAudio } from './scripted-speech.js';
import { isVoiced, soundInstants, soundSpan } from './twilio/twilio-media-caller.js';
import { readAudioFixture } from '../fixtures/audio/fixtures.js';

/** `ms` of a quiet 300 Hz tone (amplitude 150: sound, under the callers' voiced line) in μ-law 8 kHz. */
function quiet(ms: number): Uint8Array {
  const n = (8000 * ms) / 1000;
  return encodeSamples(Int16Array.from({ length: n }, (_, i) => Math.round(150 * Math.cos((2 * Math.PI * 300 * i) / 8000))), MULAW_8K);
}
const concat = (...parts: Uint8Array[]) => concatBytes(parts);

describe("the bench caller's bounds of its speech (bench/voice.mjs's reference)", () => {
  it('finds where the sound in a frame starts and stops, and when that was for a frame sent at a given instant', () => {
    const frame = concat(silenceAudio(MULAW_8K, 5), quiet(10), silenceAudio(MULAW_8K, 5)); // 40 + 80 + 40 samples
    expect(isVoiced(frame)).toBe(false); // under the level line, yet sound
    expect(soundSpan(frame)).toEqual({ first: 40, end: 120 });
    // sent at 1000: it held [980, 1000); its sound was [985, 995)
    expect(soundInstants(frame, 1000)).toEqual({ onsetMs: 985, endMs: 995 });
    expect(soundSpan(silenceAudio(MULAW_8K, 20))).toBeNull();
    expect(soundInstants(silenceAudio(MULAW_8K, 20), 1000)).toBeNull();
  });

  it("the Deepgram fake's releaseThreshold 0 ends speech with its sound, to the sample, not at its start line", async () => {
    // 400 ms of speech, 30 ms of quiet tail (sound under the start line), then silence, all pushed at once: the
    // fake endpoints by audio time (300 ms of silence), and a final's start + duration is the audio time it came at
    const endOfFinal = async (releaseThreshold: number | undefined) => {
      const fake = await FakeDeepgramServer.start({ energyThreshold: 200, ...(releaseThreshold === undefined ? {} : { releaseThreshold }) });
      try {
        fake.say('yes i will attend');
        const ws = new WebSocket(`${fake.baseUrl.replace(/^http/, 'ws')}/v1/listen?encoding=mulaw&sample_rate=8000&endpointing=300`, { headers: { authorization: `Token ${fake.key}` } });
        const final = new Promise<{ start: number; duration: number }>((resolve) => ws.on('message', (d) => {
          const m = JSON.parse(d.toString()) as { type: string; is_final?: boolean; start: number; duration: number };
          if (m.type === 'Results' && m.is_final) resolve(m);
        }));
        await new Promise((r) => ws.once('open', r));
        ws.send(concat(speechAudio(MULAW_8K, 400), quiet(30), silenceAudio(MULAW_8K, 400)));
        const m = await final;
        ws.close();
        return Math.round((m.start + m.duration) * 1000);
      } finally {
        await fake.close();
      }
    };
    // the start line: the quiet tail is silence, 300 ms counted from 400 ms end at 700
    expect(await endOfFinal(undefined)).toBe(700);
    // with the sound: from 430 ms; 300 ms are complete in the 20 ms piece ending at 740
    expect(await endOfFinal(0)).toBe(740);
  });

  it("where the level line and the sound put the bench's two fixtures (the figures docs/voice.md \"Latency\" gives)", () => {
    // bench/voice.mjs plays the fixtures without 500 ms of their lead and 700 ms of their tail, in 20 ms frames
    const bounds = (name: 'yes-i-will-attend' | 'barge-in-long', ms?: number) => {
      let audio = readAudioFixture(name).data.subarray(4000);
      audio = audio.subarray(0, ms === undefined ? audio.length - 5600 : ms * 8);
      let lineOnset: number | null = null;
      let lineEnd = 0;
      let soundOnset: number | null = null;
      let soundEnd = 0;
      for (let at = 0; at < audio.length; at += 160) {
        const frame = new Uint8Array(160).fill(0xff);
        frame.set(audio.subarray(at, at + 160));
        const sentAt = (at + 160) / 8; // each frame is sent when its 20 ms have passed
        if (isVoiced(frame)) {
          lineOnset ??= sentAt;
          lineEnd = sentAt;
        }
        const sound = soundInstants(frame, sentAt);
        if (sound) {
          soundOnset ??= sound.onsetMs;
          soundEnd = sound.endMs;
        }
      }
      return { lineOnset: lineOnset!, lineEnd, soundOnset: soundOnset!, soundEnd };
    };
    const attend = bounds('yes-i-will-attend');
    expect(attend.soundEnd - attend.lineEnd).toBe(31.75);
    const barge = bounds('barge-in-long', 1000);
    expect(barge.lineOnset - barge.soundOnset).toBe(31.625);
  });
});
