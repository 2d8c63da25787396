import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { PinoLogger } from '../adapters/logging/pino-logger.js';
import type { AiProviderPlugin } from '../core/ports/ai-service-provider.port.js';
import type { LanguageModel } from '../core/ports/language-model.port.js';
import type { ProviderPlugin, TelephonyProvider } from '../core/ports/telephony-provider.port.js';
import deepgram from '../providers/deepgram/index.js';
import elevenlabs from '../providers/elevenlabs/index.js';
import openai from '../providers/openai/index.js';
import simulator from '../providers/simulator/index.js';
import { ProviderPluginLoadError, ProviderRegistry } from './provider-registry.js';
import { defineAiProviderPlugin, defineProviderPlugin, isDefinedProviderPlugin, ProviderPluginDefinitionError, validateProviderManifest } from './sdk.js';

const model = {} as LanguageModel;
const aiPlugin = (over: Partial<AiProviderPlugin['manifest']> = {}, hooks: Partial<AiProviderPlugin> = {}): AiProviderPlugin => ({
  manifest: {
    id: 'acme_llm', displayName: 'Acme', docsUrl: 'https://acme.example/docs', mediaTransport: 'none', kinds: ['llm'],
    fields: [{ name: 'token', label: 'Token', type: 'password', required: true, sensitive: true, description: 'the token', placeholder: 't' }],
    ...over,
  },
  createLanguageModel: () => model,
  ...hooks,
});
const problemsOf = (f: () => unknown): string[] => {
  try {
    f();
  } catch (e) {
    if (e instanceof ProviderPluginDefinitionError) return e.problems;
    throw e;
  }
  return [];
};

describe('manifest kinds', () => {
  it('carriers declare nothing and keep working; every built-in carrier is telephony only', () => {
    const r = ProviderRegistry.builtIn();
    expect(r.ids()).toEqual(['ari', 'twilio', 'simulator', 'vonage', 'telnyx', 'plivo']);
    for (const p of r.list()) expect(p.manifest.kinds ?? ['telephony']).toEqual(['telephony']);
    expect(r.ai.ids()).toEqual(['openai', 'deepgram', 'elevenlabs']);
  });

  it('the validator accepts the kinds and refuses unknown, empty, duplicate and mixed kinds', () => {
    const base = aiPlugin().manifest;
    expect(validateProviderManifest(base)).toEqual([]);
    expect(validateProviderManifest({ ...base, kinds: ['llm', 'stt', 'tts'] })).toEqual([]);
    expect(validateProviderManifest({ ...base, kinds: ['video'] }).join()).toMatch(/kinds/);
    expect(validateProviderManifest({ ...base, kinds: [] }).join()).toMatch(/kinds/);
    expect(validateProviderManifest({ ...base, kinds: ['llm', 'llm'] }).join()).toMatch(/kinds/);
    expect(validateProviderManifest({ ...base, kinds: ['telephony', 'llm'] }).join()).toMatch(/either telephony or a model provider/);
    expect(validateProviderManifest({ ...base, mediaTransport: 'websocket' }).join()).toMatch(/carries no call media/);
  });

  it('url schemes are declared on url fields only', () => {
    const f = { name: 'u', label: 'U', type: 'url' as const, required: false, sensitive: false, description: '', placeholder: '', schemes: ['wss' as const] };
    expect(validateProviderManifest(aiPlugin({ fields: [f] }).manifest)).toEqual([]);
    expect(validateProviderManifest(aiPlugin({ fields: [{ ...f, type: 'string' }] }).manifest).join()).toMatch(/schemes needs type "url"/);
  });

  it('defineAiProviderPlugin checks kinds and the llm hook; defineProviderPlugin refuses model providers', () => {
    expect(isDefinedProviderPlugin(defineAiProviderPlugin(aiPlugin()))).toBe(true);
    expect(problemsOf(() => defineAiProviderPlugin(aiPlugin({}, { createLanguageModel: undefined })))).toEqual(['createLanguageModel must be a function for kind llm']);
    expect(problemsOf(() => defineAiProviderPlugin(aiPlugin({ kinds: ['tts'] }, { createLanguageModel: undefined })))).toEqual([]);
    expect(problemsOf(() => defineAiProviderPlugin(aiPlugin({ kinds: undefined })))[0]).toMatch(/model provider declares kinds/);
    expect(problemsOf(() => defineProviderPlugin({
      ...aiPlugin(), deriveAccountId: () => 'a', create: () => ({}) as TelephonyProvider,
    } as unknown as ProviderPlugin))[0]).toMatch(/defineAiProviderPlugin/);
  });
});

describe('provider registry: telephony and AI sides', () => {
  const registry = ProviderRegistry.builtIn({ allowPrivateNetwork: false });

  it('telephony endpoints list only carriers; the AI metadata lists only model providers with their kinds', () => {
    expect(registry.metadata().providers.map((p) => p.provider)).not.toContain('openai');
    expect(registry.get('openai')).toBeNull();
    expect((registry.configSchema().oneOf as Array<{ properties: { provider: { const: string } } }>).map((m) => m.properties.provider.const)).not.toContain('openai');
    expect(registry.validateConfig({ provider: 'openai' })).toMatchObject({ ok: false, issues: [{ loc: ['provider'], type: 'union_tag_invalid' }] });

    const meta = registry.ai.metadata().providers;
    expect(meta.map((p) => [p.provider, p.kinds])).toEqual([['openai', ['llm', 'stt', 'tts']], ['deepgram', ['stt', 'tts']], ['elevenlabs', ['tts']]]);
    expect(meta[0]!.fields.map((f) => [f.name, f.sensitive, f.required])).toEqual([['api_key', true, false], ['base_url', false, false]]);
    expect(registry.ai.get('twilio')).toBeNull();
    expect(registry.ai.validateConfig({ provider: 'simulator' })).toMatchObject({ ok: false, issues: [{ loc: ['provider'] }] });
  });

  it('the AI config union is a oneOf per provider with api_key writeOnly and no from_numbers', () => {
    const members = registry.ai.configSchema().oneOf as Array<{ properties: Record<string, { writeOnly?: boolean; const?: string }>; required: string[] }>;
    expect(members.map((m) => m.properties.provider!.const)).toEqual(['openai', 'deepgram', 'elevenlabs']);
    for (const m of members) {
      expect(m.properties.api_key!.writeOnly).toBe(true);
      expect(m.properties.base_url!.writeOnly).toBeUndefined();
      expect(m.properties.from_numbers).toBeUndefined();
    }
    expect(members[0]!.required).toEqual(['provider']);
    expect(members[1]!.required).toEqual(['provider', 'api_key']);
    expect(String(registry.ai.configSchema().description)).toContain('/organizations/ai-services/metadata');
  });

  it('validates AI configs: defaults filled, schemes per field, the SSRF shape check on base_url', () => {
    expect(registry.ai.validateConfig({ provider: 'openai' })).toEqual({ ok: true, config: { base_url: 'https://api.openai.com/v1' } });
    expect(registry.ai.validateConfig({ provider: 'deepgram', api_key: 'k' })).toEqual({ ok: true, config: { api_key: 'k', base_url: 'wss://api.deepgram.com' } });
    expect(registry.ai.validateConfig({ provider: 'deepgram', api_key: 'k', base_url: 'https://api.deepgram.com' }))
      .toMatchObject({ ok: false, issues: [{ loc: ['base_url'], type: 'string_pattern_mismatch' }] });
    expect(registry.ai.validateConfig({ provider: 'openai', base_url: 'wss://x.example' })).toMatchObject({ ok: false, issues: [{ loc: ['base_url'] }] });
    for (const url of ['http://169.254.169.254/v1', 'http://[::ffff:169.254.169.254]/', 'http://127.0.0.1:11434/v1', 'http://localhost:8000/v1']) {
      expect(registry.ai.validateConfig({ provider: 'openai', base_url: url })).toMatchObject({ ok: false, issues: [{ loc: ['base_url'], type: 'value_error' }] });
    }
    expect(registry.ai.validateConfig({ provider: 'elevenlabs', api_key: 'k', base_url: 'ws://10.0.0.5' })).toMatchObject({ ok: false, issues: [{ loc: ['base_url'] }] });
    const open = ProviderRegistry.builtIn({ allowPrivateNetwork: true });
    expect(open.ai.validateConfig({ provider: 'openai', base_url: 'http://127.0.0.1:11434/v1' })).toEqual({ ok: true, config: { base_url: 'http://127.0.0.1:11434/v1' } });
    expect(open.ai.validateConfig({ provider: 'openai', base_url: 'http://169.254.169.254/' })).toMatchObject({ ok: false });
  });

  it('log redaction covers the AI manifests\' sensitive fields', () => {
    const r = ProviderRegistry.builtIn(undefined, [simulator, defineAiProviderPlugin(aiPlugin())]);
    expect(r.sensitiveFieldNames()).toContain('token');
    const lines: string[] = [];
    const logger = PinoLogger.create({
      level: 'info', extraSensitive: r.sensitiveFieldNames(),
      destination: new Writable({ write: (c, _e, cb) => { lines.push(String(c)); cb(); } }),
    });
    logger.info({ token: 'sk-live-123', config: { token: 'sk-live-123' } }, 'x');
    expect(lines.join('')).not.toContain('sk-live-123');
    expect(ProviderRegistry.builtIn().sensitiveFieldNames()).toContain('api_key');
  });

  it('ids are unique across carriers and model providers', () => {
    const r = ProviderRegistry.builtIn(undefined, [simulator]);
    expect(() => r.register(defineAiProviderPlugin(aiPlugin({ id: 'simulator' })))).toThrow(ProviderPluginLoadError);
    r.register(defineAiProviderPlugin(aiPlugin()));
    expect(() => r.register(openai)).not.toThrow();
    expect(() => r.register(openai)).toThrow(/already registered/);
  });

  it('loads a third-party model provider by package like a carrier', async () => {
    const plugin = defineAiProviderPlugin(aiPlugin());
    const r = await ProviderRegistry.load({ providerPlugins: ['acme-llm'], allowPrivateNetwork: false }, { builtIns: [simulator], importer: async () => ({ default: plugin }) });
    expect(r.ai.ids()).toEqual(['acme_llm']);
    expect(r.ids()).toEqual(['simulator']);
  });

  it('built-in stt/tts providers declare kinds without hooks (they come with the voice pipeline)', () => {
    expect(deepgram.createLanguageModel).toBeUndefined();
    expect(elevenlabs.createLanguageModel).toBeUndefined();
    expect(typeof openai.createLanguageModel).toBe('function');
  });
});
