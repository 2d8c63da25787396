import { describe, expect, it } from '@jest/globals';
import { L16_16K, MULAW_8K } from '../../core/voice/audio-format.js';
import { collectUntil, speak, speechToTextContract } from '../contracts/speech-to-text.contract.js';
import { drainAudio, textToSpeechContract } from '../contracts/text-to-speech.contract.js';
import { VirtualClock } from './scripted-language-model.js';
import { durationMs, frames, injectUserText, meanAbsSample, ScriptedSpeechToText, ScriptedTextToSpeech, silenceAudio, speechAudio } from './scripted-speech.js';

speechToTextContract('scripted', async () => {
  const stt = new ScriptedSpeechToText();
  return { stt, format: MULAW_8K, willHear: (text) => void stt.say(text), dispose: async () => undefined };
});

textToSpeechContract('scripted', async () => ({ tts: new ScriptedTextToSpeech({ realtimeFactor: 50 }), preferredFormat: MULAW_8K, dispose: async () => undefined }));

describe('scripted speech', () => {
  it('test audio: tones carry energy, silence none, in every encoding', () => {
    for (const f of [MULAW_8K, L16_16K, { encoding: 'alaw', sampleRate: 8000 } as const]) {
      expect(meanAbsSample(speechAudio(f, 100), f)).toBeGreaterThan(4000);
      expect(meanAbsSample(silenceAudio(f, 100), f)).toBeLessThan(10);
      expect(durationMs(speechAudio(f, 100), f)).toBe(100);
    }
    expect(frames(speechAudio(MULAW_8K, 100), MULAW_8K).map((x) => x.length)).toEqual([160, 160, 160, 160, 160]);
  });

  it('STT: speech_started on energy, interims every interimEveryMs, the final finalDelayMs after finalize (virtual time)', async () => {
    const clock = new VirtualClock();
    const stt = new ScriptedSpeechToText({ utterances: ['one two three'], interimEveryMs: 100, finalDelayMs: 150, sleep: clock.sleep });
    const stream = await stt.open({ format: MULAW_8K });
    const events = stream.events[Symbol.asyncIterator]();
    for (const f of frames(silenceAudio(MULAW_8K, 200), MULAW_8K)) stream.push(f);
    speak(stream, MULAW_8K, 300, 0);
    stream.finalize();
    const seen = await collectUntil(events, (e) => e.type === 'final');
    expect(seen).toEqual([
      { type: 'speech_started' },
      { type: 'interim', text: 'one' },
      { type: 'interim', text: 'one two' },
      { type: 'interim', text: 'one two three' },
      { type: 'final', text: 'one two three', speechFinal: true },
    ]);
    expect(clock.now().toISOString()).toBe('2026-01-05T09:00:00.150Z');
  });

  it('STT: endpointing silence ends an utterance without finalize; injectUserText bypasses audio; a scripted open failure', async () => {
    const stt = new ScriptedSpeechToText({ utterances: ['by silence'], endpointingMs: 200, failNextOpen: new Error('no service') });
    await expect(stt.open({ format: MULAW_8K })).rejects.toThrow('no service');
    const stream = await stt.open({ format: MULAW_8K });
    const events = stream.events[Symbol.asyncIterator]();
    speak(stream, MULAW_8K, 200, 200);
    expect((await collectUntil(events, (e) => e.type === 'final')).at(-1)).toEqual({ type: 'final', text: 'by silence', speechFinal: true });
    injectUserText(stt, 'typed words');
    expect((await collectUntil(events, (e) => e.type === 'final')).at(-1)).toEqual({ type: 'final', text: 'typed words', speechFinal: true });
  });

  it('TTS: audio proportional to the text, a burst per word, first audio after firstAudioDelayMs on the injected clock', async () => {
    const clock = new VirtualClock();
    const tts = new ScriptedTextToSpeech({ msPerChar: 10, firstAudioDelayMs: 80, realtimeFactor: 1, sleep: clock.sleep });
    const audio = await tts.synthesize({ text: 'ab cd', preferredFormat: MULAW_8K });
    const bytes = await drainAudio(audio);
    expect(durationMs(bytes, MULAW_8K)).toBe(50);
    expect(meanAbsSample(bytes.subarray(160, 240), MULAW_8K)).toBeLessThan(10); // the space between the words
    expect(clock.now().getTime() - new Date('2026-01-05T09:00:00.000Z').getTime()).toBe(80 + 20 + 20);
    expect(tts.requests.map((r) => r.text)).toEqual(['ab cd']);
    const silent = new ScriptedTextToSpeech({ audio: 'silence', format: L16_16K });
    const s = await silent.synthesize({ text: 'quiet', preferredFormat: MULAW_8K });
    expect(s.format).toEqual(L16_16K);
    expect(meanAbsSample(await drainAudio(s), L16_16K)).toBe(0);
  });
});
