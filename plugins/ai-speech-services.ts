import { AiServiceReader } from '../core/ai-services/ai-services.use-case.js';
import { InputError } from '../core/errors.js';
import type { ConnectPermit, SpeechProviderDeps } from '../core/ports/ai-service-provider.port.js';
import type { SpeechServices } from '../core/ports/speech-factory.port.js';
import type { SpeechToText } from '../core/ports/speech-to-text.port.js';
import type { TextToSpeech } from '../core/ports/text-to-speech.port.js';
import { kindsOf } from '../core/telephony/provider-manifest.js';
import { aiPolicyFetch } from './ai-fetch.js';
import { assertConnectable } from './network-policy.js';

/**
 * What speech clients get from the host: the policy fetch (HTTP) and `checkConnect` for WebSocket URLs, both
 * on the outbound network policy of AI service `base_url`s (metadata always refused, private ranges per
 * CALLPLANE_ALLOW_PRIVATE_NETWORK; the client never follows a redirect).
 */
export function speechProviderDeps(allowPrivateNetwork: boolean): SpeechProviderDeps {
  const policy = { allowPrivateNetwork, field: 'base_url', label: 'AI service base_url', protocols: ['ws:', 'wss:', 'http:', 'https:'] };
  return {
    fetch: aiPolicyFetch(allowPrivateNetwork),
    checkConnect: async (url: string): Promise<ConnectPermit> => {
      const target = await assertConnectable(url, policy);
      return { lookup: target.lookup as ConnectPermit['lookup'] };
    },
  };
}

/** The host's SpeechServices: decrypt the service, check its kind, call its plugin's speech hook. */
export class PluginSpeechServices implements SpeechServices {
  constructor(
    private readonly reader: AiServiceReader,
    private readonly deps: SpeechProviderDeps,
  ) {}

  async stt(organizationId: number, serviceId: number): Promise<SpeechToText> {
    const { plugin, config } = await this.open(organizationId, serviceId, 'stt');
    if (!plugin.createSpeechToText) throw this.mismatch(serviceId, plugin.manifest.id, 'stt');
    return plugin.createSpeechToText(config, this.deps);
  }

  async tts(organizationId: number, serviceId: number): Promise<TextToSpeech> {
    const { plugin, config } = await this.open(organizationId, serviceId, 'tts');
    if (!plugin.createTextToSpeech) throw this.mismatch(serviceId, plugin.manifest.id, 'tts');
    return plugin.createTextToSpeech(config, this.deps);
  }

  private async open(organizationId: number, serviceId: number, kind: 'stt' | 'tts') {
    const service = await this.reader.require(organizationId, serviceId);
    const plugin = this.reader.plugin(service.provider);
    if (!kindsOf(plugin.manifest).includes(kind)) throw this.mismatch(serviceId, service.provider, kind, service.name);
    return { plugin, config: this.reader.open(service) };
  }

  private mismatch(serviceId: number, provider: string, kind: string, name?: string): InputError {
    return new InputError('ai_service_kind_mismatch', `AI service ${serviceId}${name ? ` ("${name}", ${provider})` : ` (${provider})`} offers no ${kind}`);
  }
}
