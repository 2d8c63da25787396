import { AiServiceReader } from '../core/ai-services/ai-services.use-case.js';
import { InputError } from '../core/errors.js';
import type { LanguageModelFactory } from '../core/ports/language-model-factory.port.js';
import type { LanguageModel } from '../core/ports/language-model.port.js';
import { kindsOf } from '../core/telephony/provider-manifest.js';

// The AI services' policy fetch lives in ai-fetch.ts (pooled connections, checks reused for a second).
export { aiPolicyFetch } from './ai-fetch.js';

/** Services whose model is kept (the least recently created go first). */
const MODEL_CACHE_SIZE = 500;

/**
 * The host's LanguageModelFactory: read the service, check its kind, call its plugin's `createLanguageModel` with
 * the decrypted config. One model per service is kept while the service's stored credentials stay the same (a
 * plugin's model may learn its server's quirks, and decrypting plus building a client on every chat turn cost
 * ~0.15 ms); the service is still read on every call, so a changed or deleted service is seen at once.
 */
export class PluginLanguageModelFactory implements LanguageModelFactory {
  private readonly models = new Map<string, { plugin: unknown; stored: string; lm: LanguageModel }>();

  constructor(
    private readonly reader: AiServiceReader,
    private readonly fetchImpl: typeof fetch,
  ) {}

  async forService(organizationId: number, serviceId: number): Promise<LanguageModel> {
    const service = await this.reader.require(organizationId, serviceId);
    const plugin = this.reader.plugin(service.provider);
    if (!kindsOf(plugin.manifest).includes('llm') || !plugin.createLanguageModel) {
      throw new InputError('ai_service_kind_mismatch', `AI service ${serviceId} ("${service.name}", ${service.provider}) offers no llm`);
    }
    const key = `${organizationId}:${serviceId}`;
    const stored = JSON.stringify([service.provider, service.secretsKeyId, service.settings, service.secrets]);
    const kept = this.models.get(key);
    if (kept && kept.plugin === plugin && kept.stored === stored) return kept.lm;
    const lm = plugin.createLanguageModel(this.reader.open(service), { fetch: this.fetchImpl });
    this.models.delete(key);
    if (this.models.size >= MODEL_CACHE_SIZE) this.models.delete(this.models.keys().next().value as string);
    this.models.set(key, { plugin, stored, lm });
    return lm;
  }
}
