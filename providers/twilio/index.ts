/**
 * The Twilio provider plugin. `createTwilioPlugin(options)` builds one whose REST client can be pointed
 * elsewhere (tests point it at test/fakes/twilio); the default export is the production plugin.
 */
import { configString, defineProviderPlugin, type ProviderConfig, type ProviderPlugin, type WebhookRequest } from '../../plugins/sdk.js';
import { TwilioClient, type TwilioClientOptions } from './twilio.client.js';
import { twilioManifest } from './twilio.manifest.js';
import { parseTwilioInboundCall, TwilioProvider, type TwilioApi } from './twilio.provider.js';
import { TWIML_CONTENT_TYPE, politeHangupTwiml } from './twilio.twiml.js';

export interface TwilioPluginOptions {
  /** Replaces https://api.twilio.com (a local fake, a proxy). */
  apiBaseUrl?: string;
  /** Extra client settings (retry bounds, timeouts). */
  client?: Omit<Partial<TwilioClientOptions>, 'accountSid' | 'authToken'>;
  /** Builds the REST client; defaults to `TwilioClient`. */
  clientFactory?: (options: TwilioClientOptions) => TwilioApi;
}

export function createTwilioPlugin(options: TwilioPluginOptions = {}): ProviderPlugin {
  const factory = options.clientFactory ?? ((o: TwilioClientOptions) => new TwilioClient(o));
  return defineProviderPlugin({
    manifest: twilioManifest,
    deriveAccountId: (config: ProviderConfig) => configString(config.account_sid),
    create: (config, context) => {
      const accountSid = configString(config.account_sid);
      const authToken = typeof config.auth_token === 'string' ? config.auth_token : '';
      const api = factory({ ...options.client, accountSid, authToken, ...(options.apiBaseUrl ? { baseUrl: options.apiBaseUrl } : {}) });
      return new TwilioProvider(api, { accountSid, authToken, publicUrl: context.publicUrl });
    },
    parseInboundCall: (request: WebhookRequest) => parseTwilioInboundCall(request),
    inboundReject: () => ({ contentType: TWIML_CONTENT_TYPE, body: politeHangupTwiml() }),
  });
}

export default createTwilioPlugin();
