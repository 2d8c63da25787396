/**
 * The behaviour every `TextToSpeech` adapter shares (core/ports/text-to-speech.port.ts), run by each adapter's
 * test against its fake server (and by an embedder's own adapter through `callplane/testing`): audio in the
 * declared format, whole samples, not silent, longer for longer text; concurrent syntheses; aborting before or
 * during a synthesis ends it promptly with an `AbortError`; a consumer may stop reading early.
 */
import { describe, expect, it } from '@jest/globals';
import type { TextToSpeech, TtsAudio } from '../../core/ports/text-to-speech.port.js';
import { concatBytes, type AudioFormat } from '../../core/voice/audio-format.js';
import { durationMs, meanAbsSample } from '../fakes/scripted-speech.js';

export interface TextToSpeechContractSubject {
  tts: TextToSpeech;
  /** What the test asks for (μ-law 8 kHz for the carriers). */
  preferredFormat: AudioFormat;
  voice?: string;
  dispose(): Promise<void>;
}

const ENCODINGS = ['mulaw', 'alaw', 'l16'];
const RATES = [8000, 16000, 22050, 24000, 44100, 48000];

/** All chunks of `audio` joined. */
export async function drainAudio(audio: TtsAudio): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of audio.chunks) parts.push(c);
  return concatBytes(parts);
}

export function textToSpeechContract(name: string, setup: () => Promise<TextToSpeechContractSubject>): void {
  describe(`TextToSpeech contract: ${name}`, () => {
    const withSubject = (fn: (s: TextToSpeechContractSubject) => Promise<void>) => async () => {
      const subject = await setup();
      try {
        await fn(subject);
      } finally {
        await subject.dispose();
      }
    };

    it('answers audio in the format it declares: whole samples, not silent, longer for longer text', withSubject(async (s) => {
      const short = await s.tts.synthesize({ text: 'Hello there.', voice: s.voice, preferredFormat: s.preferredFormat });
      expect(ENCODINGS).toContain(short.format.encoding);
      expect(RATES).toContain(short.format.sampleRate);
      const a = await drainAudio(short);
      expect(a.byteLength).toBeGreaterThan(0);
      if (short.format.encoding === 'l16') expect(a.byteLength % 2).toBe(0);
      expect(meanAbsSample(a, short.format)).toBeGreaterThan(100);
      const long = await s.tts.synthesize({ text: 'Hello there. Thank you for calling, how can I help you today?', voice: s.voice, preferredFormat: s.preferredFormat });
      const b = await drainAudio(long);
      expect(durationMs(b, long.format)).toBeGreaterThan(durationMs(a, short.format));
    }));

    it('serves concurrent syntheses independently', withSubject(async (s) => {
      const texts = ['One.', 'Two, three and four.', 'Five six.'];
      const results = await Promise.all(texts.map(async (text) => drainAudio(await s.tts.synthesize({ text, voice: s.voice, preferredFormat: s.preferredFormat }))));
      for (const r of results) expect(r.byteLength).toBeGreaterThan(0);
    }));

    it('an aborted signal refuses to start; an abort mid-stream ends the chunks with an AbortError promptly', withSubject(async (s) => {
      const before = new AbortController();
      before.abort();
      await expect(s.tts.synthesize({ text: 'Never said.', voice: s.voice, preferredFormat: s.preferredFormat, signal: before.signal })).rejects.toMatchObject({ name: 'AbortError' });

      const during = new AbortController();
      const audio = await s.tts.synthesize({
        text: 'This sentence is long enough that it is still streaming when the caller interrupts the agent halfway through it.',
        voice: s.voice, preferredFormat: s.preferredFormat, signal: during.signal,
      });
      const started = Date.now();
      const reading = (async () => {
        for await (const c of audio.chunks) {
          void c;
          during.abort();
        }
      })();
      await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
      expect(Date.now() - started).toBeLessThan(2000);
    }));

    it('a consumer may stop reading early (the rest is released, nothing throws)', withSubject(async (s) => {
      const audio = await s.tts.synthesize({ text: 'A long answer that the consumer does not read to the end at all.', voice: s.voice, preferredFormat: s.preferredFormat });
      for await (const c of audio.chunks) {
        void c;
        break;
      }
      const again = await drainAudio(await s.tts.synthesize({ text: 'Still works.', voice: s.voice, preferredFormat: s.preferredFormat }));
      expect(again.byteLength).toBeGreaterThan(0);
    }));
  });
}
