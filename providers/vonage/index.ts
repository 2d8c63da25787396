/**
 * The Vonage provider plugin. `createVonagePlugin(options)` builds one whose REST client can be pointed
 * elsewhere (tests point it at test/fakes/vonage); the default export is the production plugin.
 */
import { configString, defineProviderPlugin, type ProviderConfig, type ProviderPlugin, type WebhookRequest } from '../../plugins/sdk.js';
import { VonageClient, type VonageClientOptions } from './vonage.client.js';
import { vonageManifest } from './vonage.manifest.js';
import { NCCO_CONTENT_TYPE, politeRefusalNcco } from './vonage.ncco.js';
import { parseVonageInboundCall, VonageProvider, type VonageApi } from './vonage.provider.js';

export interface VonagePluginOptions {
  /** Replaces both https://api.nexmo.com and https://rest.nexmo.com (a local fake, a proxy). */
  apiBaseUrl?: string;
  client?: Omit<Partial<VonageClientOptions>, 'applicationId' | 'apiKey' | 'apiSecret' | 'privateKey'>;
  clientFactory?: (options: VonageClientOptions) => VonageApi;
}

export function createVonagePlugin(options: VonagePluginOptions = {}): ProviderPlugin {
  const factory = options.clientFactory ?? ((o: VonageClientOptions) => new VonageClient(o));
  return defineProviderPlugin({
    manifest: vonageManifest,
    deriveAccountId: (config: ProviderConfig) => configString(config.api_key),
    create: (config, context) => {
      const base = options.apiBaseUrl ? { apiBaseUrl: options.apiBaseUrl, restBaseUrl: options.apiBaseUrl } : {};
      const api = factory({
        ...options.client,
        ...base,
        applicationId: configString(config.application_id),
        apiKey: configString(config.api_key),
        apiSecret: typeof config.api_secret === 'string' ? config.api_secret : '',
        privateKey: typeof config.private_key === 'string' ? config.private_key : '',
      });
      return new VonageProvider(api, {
        applicationId: configString(config.application_id),
        apiKey: configString(config.api_key),
        signatureSecret: typeof config.signature_secret === 'string' ? config.signature_secret : '',
        publicUrl: context.publicUrl,
      });
    },
    parseInboundCall: (request: WebhookRequest) => parseVonageInboundCall(request),
    inboundReject: () => ({ contentType: NCCO_CONTENT_TYPE, body: JSON.stringify(politeRefusalNcco()) }),
  });
}

export default createVonagePlugin();
