import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InputError, NotFoundError } from '../core/errors.js';
import type { AiProviderDeps } from '../core/ports/ai-service-provider.port.js';
import { LanguageModelFactory } from '../core/ports/language-model-factory.port.js';
import type { LanguageModel } from '../core/ports/language-model.port.js';
import { startTestService, type TestService } from '../test/support/test-service.js';
import { aiPolicyFetch } from './ai-language-model-factory.js';
import { NetworkPolicyError } from './network-policy.js';
import { BUILT_IN_PROVIDER_PLUGINS } from './provider-registry.builtins.js';
import { ProviderRegistry } from './provider-registry.js';
import { defineAiProviderPlugin } from './sdk.js';

/** A model provider that records what the host gives its hook. */
const seen: Array<{ config: Record<string, unknown>; deps: AiProviderDeps }> = [];
const recorder = defineAiProviderPlugin({
  manifest: {
    id: 'recorder', displayName: 'Recorder', docsUrl: 'https://example.com', mediaTransport: 'none', kinds: ['llm'],
    fields: [{ name: 'api_key', label: 'Key', type: 'password', required: true, sensitive: true, description: '', placeholder: '' }],
  },
  createLanguageModel: (config, deps) => {
    seen.push({ config, deps });
    return { stream: async function* () {}, complete: async () => ({ value: {}, text: '{}' }) } as unknown as LanguageModel;
  },
});

describe('LanguageModelFactory (plugins): decrypt the service, check its kind, call the plugin hook with the policy fetch', () => {
  let svc: TestService;
  let token: string;
  let org: number;
  let redirector: Server;
  let redirectorHits = 0;
  let target: Server;
  let targetHits = 0;
  beforeAll(async () => {
    svc = await startTestService({ providers: ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [...BUILT_IN_PROVIDER_PLUGINS, recorder]) });
    ({ token, organizationId: org } = await svc.signup());
    target = createServer((_q, s) => { targetHits++; s.end('{}'); });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    redirector = createServer((_q, s) => {
      redirectorHits++;
      s.writeHead(302, { location: `http://127.0.0.1:${(target.address() as AddressInfo).port}/v1/chat/completions` }).end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    await svc.close();
    await new Promise((r) => redirector.close(r));
    await new Promise((r) => target.close(r));
  });
  const create = async (config: Record<string, unknown>) => {
    const r = await svc.post('/organizations/ai-services', { name: `s${Math.random()}`, config }, { token });
    expect(r.status).toBe(200);
    return r.body.id as number;
  };
  const factory = () => svc.container.get<LanguageModelFactory>(LanguageModelFactory);

  it('hands the plugin the decrypted config and the host\'s policy fetch', async () => {
    const id = await create({ provider: 'recorder', api_key: 'sk-decrypted-1234' });
    await factory().forService(org, id);
    const last = seen[seen.length - 1]!;
    expect(last.config).toEqual({ api_key: 'sk-decrypted-1234' });
    expect(last.deps.fetch).not.toBe(globalThis.fetch);
    await expect(last.deps.fetch('http://169.254.169.254/latest/meta-data')).rejects.toBeInstanceOf(NetworkPolicyError);
  });

  it('keeps one model per service until its stored credentials change', async () => {
    const id = await create({ provider: 'recorder', api_key: 'sk-first-1234' });
    const before = seen.length;
    const first = await factory().forService(org, id);
    expect(await factory().forService(org, id)).toBe(first);
    expect(seen.length).toBe(before + 1);
    const r = await svc.put(`/organizations/ai-services/${id}`, { config: { provider: 'recorder', api_key: 'sk-second-5678' } }, { token });
    expect(r.status).toBe(200);
    const second = await factory().forService(org, id);
    expect(second).not.toBe(first);
    expect(seen.at(-1)!.config).toEqual({ api_key: 'sk-second-5678' });
    expect(await factory().forService(org, id)).toBe(second);
  });

  it('is NotFound for another organization\'s or a deleted service, and a kind mismatch for a service without llm', async () => {
    const id = await create({ provider: 'recorder', api_key: 'k' });
    const other = await svc.signup();
    await expect(factory().forService(other.organizationId, id)).rejects.toMatchObject({ code: 'ai_service_not_found' });
    await expect(factory().forService(other.organizationId, id)).rejects.toBeInstanceOf(NotFoundError);
    const tts = await create({ provider: 'elevenlabs', api_key: 'k' });
    await expect(factory().forService(org, tts)).rejects.toBeInstanceOf(InputError);
    await expect(factory().forService(org, tts)).rejects.toMatchObject({ code: 'ai_service_kind_mismatch' });
    await svc.delete(`/organizations/ai-services/${id}`, { token });
    await expect(factory().forService(org, id)).rejects.toMatchObject({ code: 'ai_service_not_found' });
  });

  it('an openai service talks through the policy: a redirecting base_url is refused, never followed', async () => {
    const id = await create({ provider: 'openai', base_url: `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/v1` });
    const model = await factory().forService(org, id);
    await expect(model.complete({ model: 'm', messages: [{ role: 'user', content: 'hi' }], schema: { name: 'x', schema: { type: 'object' } } })).rejects.toThrow(/redirect/);
    expect(redirectorHits).toBeGreaterThan(0);
    expect(targetHits).toBe(0);
  });
});

describe('aiPolicyFetch', () => {
  it('refuses private addresses unless allowed, and metadata always', async () => {
    await expect(aiPolicyFetch(false)('http://127.0.0.1:9/')).rejects.toMatchObject({ code: 'refused_address', field: 'base_url' });
    await expect(aiPolicyFetch(true)('http://169.254.169.254/')).rejects.toMatchObject({ code: 'refused_address' });
    await expect(aiPolicyFetch(true)('http://127.0.0.1:9/', { method: 'POST', body: new Blob(['x']) })).rejects.toThrow(/string, binary or form bodies/);
  });
});
