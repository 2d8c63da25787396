import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderApiError } from '../../core/errors.js';
import { L16_16K, L16_24K, MULAW_8K } from '../../core/voice/audio-format.js';
import { mulawDecode } from '../../core/voice/g711.js';
import { readWav } from '../../core/voice/wav.js';
import { speechProviderDeps } from '../../plugins/ai-speech-services.js';
import { collectUntil, speak, speechToTextContract } from '../../test/contracts/speech-to-text.contract.js';
import { drainAudio, textToSpeechContract } from '../../test/contracts/text-to-speech.contract.js';
import { FakeOpenAiServer } from '../../test/fakes/openai/fake-openai-server.js';
import { durationMs, frames, silenceAudio } from '../../test/fakes/scripted-speech.js';
import { OpenAiSpeechToText, OpenAiTextToSpeech, type OpenAiSpeechOptions } from './openai-speech.client.js';

const { fetch: policyFetch } = speechProviderDeps(true);

speechToTextContract('openai /audio/transcriptions per utterance (against the fake)', async () => {
  const fake = await FakeOpenAiServer.start({ apiKey: 'sk-test' });
  return {
    stt: new OpenAiSpeechToText({ apiKey: 'sk-test', baseUrl: fake.baseUrl, fetch: policyFetch }),
    format: MULAW_8K,
    willHear: (text) => void fake.speech.transcribeAs(text),
    dispose: () => fake.close(),
  };
});

textToSpeechContract('openai /audio/speech (against the fake)', async () => {
  const fake = await FakeOpenAiServer.start({ apiKey: 'sk-test' });
  return { tts: new OpenAiTextToSpeech({ apiKey: 'sk-test', baseUrl: fake.baseUrl, fetch: policyFetch }), preferredFormat: MULAW_8K, dispose: () => fake.close() };
});

describe('openai speech clients', () => {
  let fake: FakeOpenAiServer;
  const opts = (o: Partial<OpenAiSpeechOptions> = {}): OpenAiSpeechOptions => ({ apiKey: 'sk-test', baseUrl: fake.baseUrl, fetch: policyFetch, retryBaseDelayMs: 5, ...o });
  beforeAll(async () => {
    fake = await FakeOpenAiServer.start({ apiKey: 'sk-test', speech: { msPerChar: 50 } });
  });
  beforeEach(() => {
    fake.speech.requests.length = 0;
  });
  afterAll(() => fake.close());

  it('transcribes each endpointed utterance once: a WAV of 16-bit PCM at the pushed rate, model and language as fields', async () => {
    fake.speech.transcribeAs('what time do you open');
    const stream = await new OpenAiSpeechToText(opts()).open({ format: MULAW_8K, model: 'gpt-4o-mini-transcribe', language: 'en' });
    const events = stream.events[Symbol.asyncIterator]();
    speak(stream, MULAW_8K, 700, 100);
    expect(fake.speech.requests).toHaveLength(0); // nothing is sent before the end of the utterance
    stream.finalize();
    stream.finalize();
    const seen = await collectUntil(events, (e) => e.type === 'final');
    expect(seen).toEqual([{ type: 'final', text: 'what time do you open', speechFinal: true }]);
    expect(fake.speech.requests).toHaveLength(1);
    const req = fake.speech.requests[0]!;
    expect(req.path).toBe('/v1/audio/transcriptions');
    expect(req.authorization).toBe('Bearer sk-test');
    expect(req.fields).toEqual({ model: 'gpt-4o-mini-transcribe', language: 'en', response_format: 'json' });
    expect(req.wav).toMatchObject({ formatCode: 1, bitsPerSample: 16, channels: 1, sampleRate: 8000 });
    expect(req.wav!.durationMs).toBeCloseTo(800, 0);
    expect(req.wav!.meanAbs).toBeGreaterThan(2000);
    await stream.close();
  });

  it('L16 audio is sent at its own rate; an utterance under 0.1 s gives an empty final without a request', async () => {
    const stream = await new OpenAiSpeechToText(opts()).open({ format: L16_16K });
    const events = stream.events[Symbol.asyncIterator]();
    for (const f of frames(silenceAudio(L16_16K, 60), L16_16K)) stream.push(f);
    stream.finalize();
    expect(await collectUntil(events, (e) => e.type === 'final')).toEqual([{ type: 'final', text: '', speechFinal: true }]);
    expect(fake.speech.requests).toHaveLength(0);
    speak(stream, L16_16K, 300, 0);
    stream.finalize();
    await collectUntil(events, (e) => e.type === 'final');
    expect(fake.speech.requests[0]!.wav).toMatchObject({ sampleRate: 16000, bitsPerSample: 16 });
    await stream.close();
  });

  it('uploads exactly the audio pushed since the last end of speech, however many frames (buffer growth), newest maxUtteranceMs kept', async () => {
    const uploads: Int16Array[] = [];
    const capture: typeof fetch = async (_url, init) => {
      const body = init!.body as Uint8Array;
      const riff = Buffer.from(body).indexOf('RIFF');
      const wav = readWav(body.subarray(riff));
      uploads.push(Int16Array.from(wav.samples));
      return new Response(JSON.stringify({ text: 'ok' }), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const frame = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 7) & 0xff);
    const stream = await new OpenAiSpeechToText(opts({ fetch: capture, maxUtteranceMs: 3000 })).open({ format: MULAW_8K });
    const events = stream.events[Symbol.asyncIterator]();
    const pushAll = (frames: Uint8Array[]) => {
      for (const f of frames) stream.push(f);
      return mulawDecode(Uint8Array.from(frames.flatMap((f) => Array.from(f))));
    };
    // 2.5 s in 20 ms frames (past the first buffer's 2 s), a Node Buffer view among them
    const first = pushAll([...Array.from({ length: 124 }, (_, k) => frame(160, k)), Buffer.from(frame(160, 999))]);
    stream.finalize();
    // pushed right after the end of speech, before the upload is built: the next utterance's, not this one's
    const second = pushAll(Array.from({ length: 30 }, (_, k) => frame(k % 2 ? 80 : 240, 500 + k)));
    await collectUntil(events, (e) => e.type === 'final');
    stream.finalize();
    await collectUntil(events, (e) => e.type === 'final');
    // 4 s pushed with a 3 s limit: the newest 3 s are sent
    const third = pushAll(Array.from({ length: 200 }, (_, k) => frame(160, 2000 + k)));
    stream.finalize();
    await collectUntil(events, (e) => e.type === 'final');
    expect(uploads.map((u) => u.length)).toEqual([first.length, second.length, 24000]);
    expect(Array.from(uploads[0]!)).toEqual(Array.from(first));
    expect(Array.from(uploads[1]!)).toEqual(Array.from(second));
    expect(Array.from(uploads[2]!)).toEqual(Array.from(third.subarray(third.length - 24000)));
    await stream.close();
  });

  it('retries a 5xx; a transcription that fails for good fails the events with ProviderApiError(openai) without the key', async () => {
    fake.speech.transcribeAs('second try');
    fake.speech.failNext(1, 503);
    const stream = await new OpenAiSpeechToText(opts()).open({ format: MULAW_8K });
    const events = stream.events[Symbol.asyncIterator]();
    speak(stream, MULAW_8K, 300, 0);
    stream.finalize();
    expect(await collectUntil(events, (e) => e.type === 'final')).toEqual([{ type: 'final', text: 'second try', speechFinal: true }]);
    expect(fake.speech.requests.map((r) => r.status)).toEqual([503, 200]);
    await stream.close();

    const bad = await new OpenAiSpeechToText(opts({ apiKey: 'sk-wrong-secret-77' })).open({ format: MULAW_8K });
    speak(bad, MULAW_8K, 300, 0);
    bad.finalize();
    const err = await collectUntil(bad.events[Symbol.asyncIterator](), () => true).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderApiError);
    expect((err as ProviderApiError).provider).toBe('openai');
    expect((err as Error).message).toMatch(/Incorrect API key/);
    expect((err as Error).message).not.toContain('sk-wrong-secret-77');
  });

  it('speech: POSTs {model, voice, input, response_format: pcm} and streams L16 24 kHz in whole samples', async () => {
    const audio = await new OpenAiTextToSpeech(opts()).synthesize({ text: 'See you on Tuesday.', voice: 'nova', preferredFormat: MULAW_8K });
    expect(audio.format).toEqual(L16_24K);
    const sizes: number[] = [];
    let total = 0;
    for await (const c of audio.chunks) {
      sizes.push(c.byteLength);
      total += c.byteLength;
    }
    expect(sizes.every((n) => n % 2 === 0)).toBe(true);
    expect(sizes.length).toBeGreaterThan(1);
    expect(durationMs(total, L16_24K)).toBeCloseTo('See you on Tuesday.'.length * 50, -1);
    expect(fake.speech.requests[0]!.fields).toEqual({ model: 'gpt-4o-mini-tts', voice: 'nova', input: 'See you on Tuesday.', response_format: 'pcm' });
  });

  it('speech: an error answer is ProviderApiError with the server\'s message; a private base_url is refused unless allowed; a redirect is never followed', async () => {
    fake.speech.failNext(1, 400, 'Invalid voice');
    await expect(new OpenAiTextToSpeech(opts()).synthesize({ text: 'Hi.', preferredFormat: MULAW_8K })).rejects.toMatchObject({ provider: 'openai', message: 'Invalid voice', retryable: false });
    await expect(new OpenAiTextToSpeech(opts({ fetch: speechProviderDeps(false).fetch })).synthesize({ text: 'Hi.', preferredFormat: MULAW_8K }))
      .rejects.toMatchObject({ provider: 'openai', message: expect.stringMatching(/private or loopback/) });
    const redirector = http.createServer((_q, s) => s.writeHead(302, { location: `${fake.baseUrl}/audio/speech` }).end());
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    try {
      await expect(new OpenAiTextToSpeech(opts({ baseUrl: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/v1` })).synthesize({ text: 'Hi.', preferredFormat: MULAW_8K }))
        .rejects.toMatchObject({ message: expect.stringMatching(/redirect/) });
      expect(fake.speech.requests).toHaveLength(1);
    } finally {
      await new Promise((r) => redirector.close(r));
    }
    expect((await drainAudio(await new OpenAiTextToSpeech(opts()).synthesize({ text: 'Ok.', preferredFormat: MULAW_8K }))).byteLength).toBeGreaterThan(0);
  });
});
