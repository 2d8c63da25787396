import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InputError, NotFoundError } from '../core/errors.js';
import { SpeechServices } from '../core/ports/speech-factory.port.js';
import { MULAW_8K } from '../core/voice/audio-format.js';
import { collectUntil, finalText, speak } from '../test/contracts/speech-to-text.contract.js';
import { drainAudio } from '../test/contracts/text-to-speech.contract.js';
import { FakeDeepgramServer } from '../test/fakes/deepgram/fake-deepgram-server.js';
import { FakeElevenLabsServer } from '../test/fakes/elevenlabs/fake-elevenlabs-server.js';
import { FakeOpenAiServer } from '../test/fakes/openai/fake-openai-server.js';
import { startTestService, type TestService } from '../test/support/test-service.js';
import { speechProviderDeps } from './ai-speech-services.js';
import { BUILT_IN_PROVIDER_PLUGINS } from './provider-registry.builtins.js';
import { ProviderRegistry } from './provider-registry.js';
import { defineAiProviderPlugin } from './sdk.js';

/** An stt plugin without the hook: the host must answer a kind mismatch, not crash. */
const hookless = defineAiProviderPlugin({
  manifest: { id: 'hookless', displayName: 'Hookless', docsUrl: 'https://example.com', mediaTransport: 'none', kinds: ['stt'], fields: [] },
});

describe('SpeechServices (plugins): an organization\'s stt/tts services as clients, through the network policy', () => {
  let svc: TestService;
  let token: string;
  let org: number;
  let deepgram: FakeDeepgramServer;
  let elevenlabs: FakeElevenLabsServer;
  let openai: FakeOpenAiServer;
  beforeAll(async () => {
    svc = await startTestService({ providers: ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [...BUILT_IN_PROVIDER_PLUGINS, hookless]) });
    ({ token, organizationId: org } = await svc.signup());
    deepgram = await FakeDeepgramServer.start();
    elevenlabs = await FakeElevenLabsServer.start();
    openai = await FakeOpenAiServer.start({ apiKey: 'sk-org' });
  });
  afterAll(async () => {
    await svc.close();
    await Promise.all([deepgram.close(), elevenlabs.close(), openai.close()]);
  });
  const create = async (config: Record<string, unknown>) => {
    const r = await svc.post('/organizations/ai-services', { name: `s${Math.random()}`, config }, { token });
    expect(r.status).toBe(200);
    return r.body.id as number;
  };
  const services = () => svc.container.get<SpeechServices>(SpeechServices);

  it('a deepgram service transcribes with its decrypted key, and synthesizes', async () => {
    const id = await create({ provider: 'deepgram', api_key: deepgram.key, base_url: deepgram.baseUrl });
    deepgram.say('hello from the org');
    const stream = await (await services().stt(org, id)).open({ format: MULAW_8K });
    speak(stream, MULAW_8K, 400, 40);
    stream.finalize();
    expect(finalText(await collectUntil(stream.events[Symbol.asyncIterator](), (e) => e.type === 'final' && e.speechFinal))).toBe('hello from the org');
    await stream.close();
    const audio = await (await services().tts(org, id)).synthesize({ text: 'Hi there.', preferredFormat: MULAW_8K });
    expect((await drainAudio(audio)).byteLength).toBeGreaterThan(0);
  });

  it('elevenlabs (tts only) and openai (both) services build their clients', async () => {
    const el = await create({ provider: 'elevenlabs', api_key: elevenlabs.key, base_url: elevenlabs.baseUrl });
    expect((await drainAudio(await (await services().tts(org, el)).synthesize({ text: 'Hello.', preferredFormat: MULAW_8K }))).byteLength).toBeGreaterThan(0);
    await expect(services().stt(org, el)).rejects.toMatchObject({ code: 'ai_service_kind_mismatch' });
    const oa = await create({ provider: 'openai', api_key: 'sk-org', base_url: openai.baseUrl });
    const tts = await services().tts(org, oa);
    expect((await drainAudio(await tts.synthesize({ text: 'Hello.', preferredFormat: MULAW_8K }))).byteLength).toBeGreaterThan(0);
    expect(openai.speech.requests.at(-1)).toMatchObject({ authorization: 'Bearer sk-org', status: 200 });
  });

  it('NotFound for another organization\'s service; a kind without a hook is a kind mismatch', async () => {
    const id = await create({ provider: 'deepgram', api_key: 'k', base_url: deepgram.baseUrl });
    const other = await svc.signup();
    await expect(services().stt(other.organizationId, id)).rejects.toBeInstanceOf(NotFoundError);
    const h = await create({ provider: 'hookless' });
    await expect(services().stt(org, h)).rejects.toBeInstanceOf(InputError);
    await expect(services().tts(org, h)).rejects.toMatchObject({ code: 'ai_service_kind_mismatch' });
  });
});

describe('defineAiProviderPlugin speech hooks', () => {
  it('refuses a speech hook that is not a function', () => {
    const manifest = { id: 'badhook', displayName: 'Bad', docsUrl: 'https://example.com', mediaTransport: 'none' as const, kinds: ['stt' as const, 'tts' as const], fields: [] };
    expect(() => defineAiProviderPlugin({ manifest, createSpeechToText: 'nope' as never, createTextToSpeech: 1 as never }))
      .toThrow(/createSpeechToText must be a function when given; createTextToSpeech must be a function when given/);
  });
});

describe('speechProviderDeps', () => {
  it('checkConnect refuses private addresses unless allowed and cloud metadata always; it pins the checked address', async () => {
    await expect(speechProviderDeps(false).checkConnect('ws://127.0.0.1:9/v1/listen')).rejects.toMatchObject({ code: 'refused_address', field: 'base_url' });
    await expect(speechProviderDeps(true).checkConnect('wss://169.254.169.254/')).rejects.toMatchObject({ code: 'refused_address' });
    await expect(speechProviderDeps(true).checkConnect('ftp://127.0.0.1/')).rejects.toMatchObject({ code: 'invalid_url' });
    const permit = await speechProviderDeps(true).checkConnect('ws://127.0.0.1:9/');
    const answer = await new Promise<string>((resolve) => (permit.lookup as unknown as (h: string, o: object, cb: (e: unknown, a: string) => void) => void)('evil.example', {}, (_e, a) => resolve(a)));
    expect(answer).toBe('127.0.0.1');
  });
});
