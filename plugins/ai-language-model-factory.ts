import { AiServiceReader } from '../core/ai-services/ai-services.use-case.js';
import { InputError } from '../core/errors.js';
import type { LanguageModelFactory } from '../core/ports/language-model-factory.port.js';
import type { LanguageModel } from '../core/ports/language-model.port.js';
import { kindsOf } from '../core/telephony/provider-manifest.js';
import { policyFetch } from './network-policy.js';

/**
 * `fetch` for AI provider clients: every request goes through the outbound network policy (the host of the
 * service's `base_url` resolved and each address checked, cloud metadata always refused, private ranges per
 * CALLPLANE_ALLOW_PRIVATE_NETWORK, redirects refused). Only string, binary and URLSearchParams bodies.
 */
export function aiPolicyFetch(allowPrivateNetwork: boolean): typeof fetch {
  const policy = { allowPrivateNetwork, field: 'base_url', label: 'AI service base_url' };
  return ((input: string | URL | Request, init: RequestInit = {}) => {
    const url = input instanceof Request ? input.url : input;
    const body = init.body ?? null;
    if (body !== null && typeof body !== 'string' && !(body instanceof Uint8Array) && !(body instanceof ArrayBuffer) && !(body instanceof URLSearchParams)) {
      return Promise.reject(new TypeError('AI provider requests send string, binary or form bodies only'));
    }
    return policyFetch(url, { method: init.method, headers: init.headers as Record<string, string> | Headers | undefined, body, signal: init.signal ?? null }, policy);
  }) as typeof fetch;
}

/** The host's LanguageModelFactory: decrypt the service, check its kind, call its plugin's `createLanguageModel`. */
export class PluginLanguageModelFactory implements LanguageModelFactory {
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
    return plugin.createLanguageModel(this.reader.open(service), { fetch: this.fetchImpl });
  }
}
