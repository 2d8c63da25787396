/**
 * The Plivo provider plugin. `createPlivoPlugin(options)` builds one whose REST client can be pointed
 * elsewhere (tests point it at test/fakes/plivo); the default export is the production plugin.
 */
import { configString, defineProviderPlugin, type ProviderConfig, type ProviderPlugin, type WebhookRequest } from '../../plugins/sdk.js';
import { PlivoClient, type PlivoClientOptions } from './plivo.client.js';
import { plivoManifest } from './plivo.manifest.js';
import { parsePlivoInboundCall, PlivoProvider, type PlivoApi } from './plivo.provider.js';
import { PLIVO_XML_CONTENT_TYPE, politeHangupXml } from './plivo.xml.js';

export interface PlivoPluginOptions {
  /** Replaces https://api.plivo.com (a local fake, a proxy). */
  apiBaseUrl?: string;
  /** Extra client settings (retry bounds, timeouts, sleep). */
  client?: Omit<Partial<PlivoClientOptions>, 'authId' | 'authToken' | 'baseUrl'>;
  /** Builds the REST client; defaults to `PlivoClient`. */
  clientFactory?: (options: PlivoClientOptions) => PlivoApi;
}

export function createPlivoPlugin(options: PlivoPluginOptions = {}): ProviderPlugin {
  const factory = options.clientFactory ?? ((o: PlivoClientOptions) => new PlivoClient(o));
  return defineProviderPlugin({
    manifest: plivoManifest,
    deriveAccountId: (config: ProviderConfig) => configString(config.auth_id),
    create: (config) => {
      const authId = configString(config.auth_id);
      const authToken = typeof config.auth_token === 'string' ? config.auth_token : '';
      const api = factory({ ...options.client, authId, authToken, ...(options.apiBaseUrl ? { baseUrl: options.apiBaseUrl } : {}) });
      return new PlivoProvider(api, { authId, authToken, applicationId: configString(config.application_id) || null });
    },
    parseInboundCall: (request: WebhookRequest) => parsePlivoInboundCall(request),
    inboundReject: () => ({ contentType: PLIVO_XML_CONTENT_TYPE, body: politeHangupXml() }),
  });
}

export default createPlivoPlugin();
