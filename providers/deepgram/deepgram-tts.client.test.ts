import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderApiError } from '../../core/errors.js';
import { L16_24K, MULAW_8K } from '../../core/voice/audio-format.js';
import { speechProviderDeps } from '../../plugins/ai-speech-services.js';
import { drainAudio, textToSpeechContract } from '../../test/contracts/text-to-speech.contract.js';
import { FakeDeepgramServer } from '../../test/fakes/deepgram/fake-deepgram-server.js';
import { durationMs } from '../../test/fakes/scripted-speech.js';
import { auraFormat, deepgramHttpBase, DeepgramTextToSpeech } from './deepgram-tts.client.js';

const { fetch: policyFetch } = speechProviderDeps(true);

textToSpeechContract('deepgram Aura (against the fake)', async () => {
  const fake = await FakeDeepgramServer.start();
  return { tts: new DeepgramTextToSpeech({ apiKey: fake.key, baseUrl: fake.baseUrl, fetch: policyFetch }), preferredFormat: MULAW_8K, dispose: () => fake.close() };
});

describe('deepgram Aura client', () => {
  let fake: FakeDeepgramServer;
  beforeAll(async () => {
    fake = await FakeDeepgramServer.start({ msPerChar: 50 });
  });
  afterAll(() => fake.close());
  const tts = (o: { apiKey?: string; baseUrl?: string; fetch?: typeof fetch } = {}) =>
    new DeepgramTextToSpeech({ apiKey: o.apiKey ?? fake.key, baseUrl: o.baseUrl ?? fake.baseUrl, fetch: o.fetch ?? policyFetch });

  it('POSTs {text} to /v1/speak on the https form of the base_url, μ-law 8 kHz raw, voice as the model', async () => {
    const audio = await tts().synthesize({ text: 'Your appointment is confirmed.', voice: 'aura-2-odysseus-en', preferredFormat: MULAW_8K });
    expect(audio.format).toEqual(MULAW_8K);
    const bytes = await drainAudio(audio);
    expect(durationMs(bytes, MULAW_8K)).toBeCloseTo('Your appointment is confirmed.'.length * 50, -1);
    const last = fake.speakRequests.at(-1)!;
    expect(last.query).toEqual({ model: 'aura-2-odysseus-en', encoding: 'mulaw', sample_rate: '8000', container: 'none' });
    expect(last.authorization).toBe(`Token ${fake.key}`);
    expect(last.body).toEqual({ text: 'Your appointment is confirmed.' });
  });

  it('streams linear16 in whole samples even when the body splits a sample between reads', async () => {
    const parts = [[1, 2, 3], [4, 5], [6]];
    const split: typeof fetch = async () => new Response(new ReadableStream<Uint8Array>({
      pull(c) {
        const p = parts.shift();
        if (p) c.enqueue(Uint8Array.from(p));
        else c.close();
      },
    }), { status: 200, headers: { 'content-type': 'audio/l16' } });
    const audio = await tts({ fetch: split }).synthesize({ text: 'Hi.', preferredFormat: L16_24K });
    expect(audio.format).toEqual(L16_24K);
    const chunks: number[][] = [];
    for await (const c of audio.chunks) chunks.push([...c]);
    expect(chunks).toEqual([[1, 2], [3, 4], [5, 6]]);
  });

  it('maps formats: linear16 at supported rates, else linear16 24 kHz', () => {
    expect(auraFormat({ encoding: 'l16', sampleRate: 16000 })).toEqual({ format: { encoding: 'l16', sampleRate: 16000 }, encoding: 'linear16' });
    expect(auraFormat({ encoding: 'l16', sampleRate: 22050 })).toEqual({ format: L16_24K, encoding: 'linear16' });
    expect(auraFormat({ encoding: 'mulaw', sampleRate: 16000 })).toEqual({ format: L16_24K, encoding: 'linear16' });
    expect(deepgramHttpBase('wss://api.deepgram.com/')).toBe('https://api.deepgram.com');
    expect(deepgramHttpBase('ws://10.0.0.5:8080/dg')).toBe('http://10.0.0.5:8080/dg');
  });

  it('a refusal is ProviderApiError with Deepgram\'s err_msg, never the key; 5xx is retryable', async () => {
    const err = await tts({ apiKey: 'dg-secret-xyz' }).synthesize({ text: 'Hi.', preferredFormat: MULAW_8K }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderApiError);
    expect((err as Error).message).toMatch(/HTTP 401.*Invalid credentials/);
    expect((err as Error).message).not.toContain('dg-secret-xyz');
    fake.refuseNext(1, 503);
    await expect(tts().synthesize({ text: 'Hi.', preferredFormat: MULAW_8K })).rejects.toMatchObject({ provider: 'deepgram', retryable: true });
  });

  it('goes through the policy fetch: a private base_url is refused when not allowed, and a redirect is never followed', async () => {
    await expect(tts({ fetch: speechProviderDeps(false).fetch }).synthesize({ text: 'Hi.', preferredFormat: MULAW_8K }))
      .rejects.toMatchObject({ provider: 'deepgram', message: expect.stringMatching(/private or loopback/) });
    let hits = 0;
    const redirector = http.createServer((_q, s) => {
      hits++;
      s.writeHead(307, { location: `${fake.baseUrl.replace('ws:', 'http:')}/v1/speak` }).end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    const before = fake.speakRequests.length;
    try {
      await expect(tts({ baseUrl: `ws://127.0.0.1:${(redirector.address() as AddressInfo).port}` }).synthesize({ text: 'Hi.', preferredFormat: MULAW_8K }))
        .rejects.toMatchObject({ message: expect.stringMatching(/redirect/) });
      expect(hits).toBe(1);
      expect(fake.speakRequests.length).toBe(before);
    } finally {
      await new Promise((r) => redirector.close(r));
    }
  });
});
