/**
 * The Telnyx provider plugin. `createTelnyxPlugin(options)` builds one whose REST client can be pointed
 * elsewhere (tests point it at test/fakes/telnyx); the default export is the production plugin.
 */
import { configString, defineProviderPlugin, type ProviderConfig, type ProviderPlugin, type WebhookRequest } from '../../plugins/sdk.js';
import { TelnyxClient, type TelnyxClientOptions } from './telnyx.client.js';
import { telnyxManifest } from './telnyx.manifest.js';
import { parseTelnyxInboundCall, TelnyxProvider, type TelnyxApi } from './telnyx.provider.js';

export interface TelnyxPluginOptions {
  /** Replaces https://api.telnyx.com (a local fake, a proxy). */
  apiBaseUrl?: string;
  /** Extra client settings (retry bounds, timeouts, sleep). */
  client?: Omit<Partial<TelnyxClientOptions>, 'apiKey' | 'baseUrl'>;
  clientFactory?: (options: TelnyxClientOptions) => TelnyxApi;
  /** Webhook timestamp tolerance (seconds); default 300. */
  toleranceSeconds?: number;
}

export function createTelnyxPlugin(options: TelnyxPluginOptions = {}): ProviderPlugin {
  const factory = options.clientFactory ?? ((o: TelnyxClientOptions) => new TelnyxClient(o));
  return defineProviderPlugin({
    manifest: telnyxManifest,
    deriveAccountId: (config: ProviderConfig) => configString(config.connection_id),
    create: (config, context) => {
      const apiKey = typeof config.api_key === 'string' ? config.api_key : '';
      const api = factory({ ...options.client, apiKey, ...(options.apiBaseUrl ? { baseUrl: options.apiBaseUrl } : {}) });
      return new TelnyxProvider(api, {
        connectionId: configString(config.connection_id),
        webhookPublicKey: configString(config.webhook_public_key),
        publicUrl: context.publicUrl,
        log: context.log,
        ...(options.toleranceSeconds !== undefined ? { toleranceSeconds: options.toleranceSeconds } : {}),
      });
    },
    parseInboundCall: (request: WebhookRequest) => parseTelnyxInboundCall(request),
    // Call Control takes no markup: a declined call is simply not answered (see docs/providers.md, Telnyx).
    inboundReject: (reason) => ({ contentType: 'application/json', body: JSON.stringify({ received: true, answered: false, reason }) }),
  });
}

export default createTelnyxPlugin();
