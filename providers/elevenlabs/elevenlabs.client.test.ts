import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderApiError } from '../../core/errors.js';
import { L16_16K, MULAW_8K } from '../../core/voice/audio-format.js';
import { speechProviderDeps } from '../../plugins/ai-speech-services.js';
import { drainAudio, textToSpeechContract } from '../../test/contracts/text-to-speech.contract.js';
import { FakeElevenLabsServer } from '../../test/fakes/elevenlabs/fake-elevenlabs-server.js';
import { durationMs } from '../../test/fakes/scripted-speech.js';
import { ELEVENLABS_DEFAULT_MODEL, ELEVENLABS_DEFAULT_VOICE, elevenLabsFormat, ElevenLabsTextToSpeech } from './elevenlabs.client.js';

const { checkConnect } = speechProviderDeps(true);

textToSpeechContract('elevenlabs stream-input (against the fake)', async () => {
  const fake = await FakeElevenLabsServer.start({ chunkDelayMs: 2 });
  return { tts: new ElevenLabsTextToSpeech({ apiKey: fake.key, baseUrl: fake.baseUrl, checkConnect }), preferredFormat: MULAW_8K, voice: 'voice-1', dispose: () => fake.close() };
});

describe('elevenlabs stream-input client', () => {
  let fake: FakeElevenLabsServer;
  beforeAll(async () => {
    fake = await FakeElevenLabsServer.start({ msPerChar: 50, voices: ['voice-1', ELEVENLABS_DEFAULT_VOICE] });
  });
  afterAll(() => fake.close());
  const tts = (o: { apiKey?: string; baseUrl?: string; checkConnect?: typeof checkConnect } = {}) =>
    new ElevenLabsTextToSpeech({ apiKey: o.apiKey ?? fake.key, baseUrl: o.baseUrl ?? fake.baseUrl, checkConnect: o.checkConnect ?? checkConnect });

  it('opens stream-input with xi-api-key and ulaw_8000, sends the init, the text and the end of input; decodes base64 audio to isFinal', async () => {
    const audio = await tts().synthesize({ text: 'Thanks for calling.', voice: 'voice-1', preferredFormat: MULAW_8K });
    expect(audio.format).toEqual(MULAW_8K);
    const bytes = await drainAudio(audio);
    expect(durationMs(bytes, MULAW_8K)).toBeCloseTo('Thanks for calling. '.length * 50, -1);
    const conn = fake.connections.at(-1)!;
    expect(conn.voiceId).toBe('voice-1');
    expect(conn.apiKey).toBe(fake.key);
    expect(conn.query).toEqual({ model_id: ELEVENLABS_DEFAULT_MODEL, output_format: 'ulaw_8000' });
    expect(conn.received).toEqual([
      { text: ' ', voice_settings: { stability: 0.5, similarity_boost: 0.8 } },
      { text: 'Thanks for calling. ', try_trigger_generation: true },
      { text: '' },
    ]);
    await new Promise((r) => setTimeout(r, 20));
    expect(conn.closeCode).toBe(1000);
  });

  it('uses the default voice and the workflow\'s model; L16 16 kHz is asked as pcm_16000', async () => {
    const audio = await tts().synthesize({ text: 'Hi.', model: 'eleven_turbo_v2_5', preferredFormat: L16_16K });
    expect(audio.format).toEqual(L16_16K);
    expect((await drainAudio(audio)).byteLength % 2).toBe(0);
    expect(fake.connections.at(-1)).toMatchObject({ voiceId: ELEVENLABS_DEFAULT_VOICE, query: { model_id: 'eleven_turbo_v2_5', output_format: 'pcm_16000' } });
    expect(elevenLabsFormat({ encoding: 'mulaw', sampleRate: 16000 }).outputFormat).toBe('ulaw_8000');
  });

  it('a server error message and 1008 close end the chunks with ProviderApiError (not retryable)', async () => {
    const audio = await tts().synthesize({ text: 'Hi.', voice: 'no-such-voice', preferredFormat: MULAW_8K });
    await expect(drainAudio(audio)).rejects.toMatchObject({ provider: 'elevenlabs', retryable: false, message: expect.stringMatching(/voice_not_found.*was not found/) });
  });

  it('a wrong key is refused at the handshake, with ElevenLabs\' message and never the key', async () => {
    const err = await tts({ apiKey: 'sk_wrong_secret_42' }).synthesize({ text: 'Hi.', preferredFormat: MULAW_8K }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderApiError);
    expect((err as Error).message).toMatch(/HTTP 401.*Invalid API key/);
    expect((err as Error).message).not.toContain('sk_wrong_secret_42');
  });

  it('goes through the network policy, and never follows a redirect', async () => {
    const before = fake.connections.length;
    await expect(tts({ checkConnect: speechProviderDeps(false).checkConnect }).synthesize({ text: 'Hi.', preferredFormat: MULAW_8K }))
      .rejects.toMatchObject({ provider: 'elevenlabs', message: expect.stringMatching(/private or loopback/) });
    const redirector = http.createServer();
    redirector.on('upgrade', (_q, socket) => socket.end(`HTTP/1.1 301 Moved\r\nLocation: ${fake.baseUrl}/v1/text-to-speech/voice-1/stream-input\r\nContent-Length: 0\r\n\r\n`));
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    try {
      await expect(tts({ baseUrl: `ws://127.0.0.1:${(redirector.address() as AddressInfo).port}` }).synthesize({ text: 'Hi.', preferredFormat: MULAW_8K }))
        .rejects.toMatchObject({ message: expect.stringMatching(/redirect.*not followed/) });
      expect(fake.connections.length).toBe(before);
    } finally {
      await new Promise((r) => redirector.close(r));
    }
  });

  it('an abort terminates the socket', async () => {
    const controller = new AbortController();
    const audio = await tts().synthesize({ text: 'A long sentence to be cut short by the caller.', voice: 'voice-1', preferredFormat: MULAW_8K, signal: controller.signal });
    controller.abort();
    await expect(drainAudio(audio)).rejects.toMatchObject({ name: 'AbortError' });
    await new Promise((r) => setTimeout(r, 20));
    expect(fake.connections.at(-1)!.closeCode).toBe(1006);
  });
});
