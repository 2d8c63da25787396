/**
 * The behaviour every `SpeechToText` adapter shares (core/ports/speech-to-text.port.ts), run by each adapter's
 * test against its fake server (and by an embedder's own adapter through `callplane/testing`):
 * speech then `finalize()` yields the scripted text as finals ending speech-final; utterances come in order;
 * `finalize()` twice is harmless; `close()` ends the events and is idempotent; audio after `close` is dropped
 * without throwing; aborting the stream's signal ends it.
 */
import { describe, expect, it } from '@jest/globals';
import type { SpeechToText, SttEvent, SttStream } from '../../core/ports/speech-to-text.port.js';
import type { AudioFormat } from '../../core/voice/audio-format.js';
import { frames, silenceAudio, speechAudio } from '../fakes/scripted-speech.js';

export interface SpeechToTextContractSubject {
  stt: SpeechToText;
  /** The format the test pushes (μ-law 8 kHz for most adapters). */
  format: AudioFormat;
  /** Scripts the provider: the next utterance it hears transcribes as `text`. */
  willHear(text: string): void;
  /** Releases the subject's resources (the fake server). */
  dispose(): Promise<void>;
}

/** Events of `stream` until `until` matches one (inclusive) or `ms` pass (then throws, listing what came). */
export async function collectUntil(events: AsyncIterator<SttEvent>, until: (e: SttEvent) => boolean, ms = 3000): Promise<SttEvent[]> {
  const seen: SttEvent[] = [];
  const deadline = Date.now() + ms;
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), Math.max(1, deadline - Date.now()))));
    const next = await Promise.race([events.next(), timeout]).finally(() => clearTimeout(timer));
    if (next === 'timeout') throw new Error(`no matching STT event within ${ms} ms; saw ${JSON.stringify(seen)}`);
    if (next.done) throw new Error(`the STT events ended before a matching one; saw ${JSON.stringify(seen)}`);
    seen.push(next.value);
    if (until(next.value)) return seen;
  }
}

/** Pushes `ms` of speech then `silenceMs` of silence in 20 ms frames, as a carrier would (without real-time pacing). */
export function speak(stream: SttStream, format: AudioFormat, ms = 600, silenceMs = 100): void {
  for (const f of frames(speechAudio(format, ms), format)) stream.push(f);
  for (const f of frames(silenceAudio(format, silenceMs), format)) stream.push(f);
}

const isSpeechFinal = (e: SttEvent) => e.type === 'final' && e.speechFinal;

/** The text of a turn: the concatenated finals. */
export const finalText = (events: SttEvent[]): string =>
  events.filter((e): e is Extract<SttEvent, { type: 'final' }> => e.type === 'final').map((e) => e.text.trim()).filter(Boolean).join(' ');

function validShape(e: SttEvent): boolean {
  switch (e.type) {
    case 'interim':
      return typeof e.text === 'string';
    case 'final':
      return typeof e.text === 'string' && typeof e.speechFinal === 'boolean';
    case 'speech_started':
    case 'utterance_end':
      return true;
    default:
      return false;
  }
}

export function speechToTextContract(name: string, setup: () => Promise<SpeechToTextContractSubject>): void {
  describe(`SpeechToText contract: ${name}`, () => {
    const withSubject = (fn: (s: SpeechToTextContractSubject) => Promise<void>) => async () => {
      const subject = await setup();
      try {
        await fn(subject);
      } finally {
        await subject.dispose();
      }
    };

    it('speech then finalize() yields the scripted text, the last final speech-final', withSubject(async (s) => {
      s.willHear('book a table for two');
      const stream = await s.stt.open({ format: s.format });
      const events = stream.events[Symbol.asyncIterator]();
      speak(stream, s.format);
      stream.finalize();
      const seen = await collectUntil(events, isSpeechFinal);
      expect(seen.every(validShape)).toBe(true);
      expect(finalText(seen)).toBe('book a table for two');
      await stream.close();
    }));

    it('successive utterances come in order on one stream, and finalize() twice is harmless', withSubject(async (s) => {
      s.willHear('first thing');
      s.willHear('second thing');
      const stream = await s.stt.open({ format: s.format });
      const events = stream.events[Symbol.asyncIterator]();
      speak(stream, s.format, 400);
      stream.finalize();
      stream.finalize();
      const first = await collectUntil(events, (e) => isSpeechFinal(e) && e.type === 'final' && e.text !== '');
      expect(finalText(first)).toBe('first thing');
      speak(stream, s.format, 400);
      stream.finalize();
      const second = await collectUntil(events, (e) => isSpeechFinal(e) && e.type === 'final' && e.text !== '');
      expect(finalText(second)).toBe('second thing');
      await stream.close();
    }));

    it('close() ends the events, is idempotent, and audio pushed afterwards is dropped without throwing', withSubject(async (s) => {
      const stream = await s.stt.open({ format: s.format });
      const drained = (async () => {
        const got: SttEvent[] = [];
        for await (const e of stream.events) got.push(e);
        return got;
      })();
      await Promise.all([stream.close(), stream.close()]);
      await stream.close();
      expect(() => stream.push(speechAudio(s.format, 40))).not.toThrow();
      expect(() => stream.finalize()).not.toThrow();
      await expect(drained).resolves.toBeDefined();
    }));

    it('aborting the signal ends the stream', withSubject(async (s) => {
      const controller = new AbortController();
      const stream = await s.stt.open({ format: s.format, signal: controller.signal });
      const drained = (async () => {
        for await (const e of stream.events) void e;
      })();
      controller.abort();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stillOpen = new Promise((r) => (timer = setTimeout(() => r('still open'), 3000)));
      await expect(Promise.race([drained.then(() => 'ended'), stillOpen]).finally(() => clearTimeout(timer))).resolves.toBe('ended');
    }));

    it('refuses to open on an aborted signal', withSubject(async (s) => {
      const controller = new AbortController();
      controller.abort();
      await expect(s.stt.open({ format: s.format, signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    }));
  });
}
