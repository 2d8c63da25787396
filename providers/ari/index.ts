/**
 * The Asterisk (ARI) provider plugin. Keeps one managed ARI WebSocket per configuration
 * (`persistentConnection`: the host creates an instance for every ARI configuration at start, since inbound
 * calls arrive on that socket). `createAriPlugin(options)` lets tests and embedders tune the client.
 */
import { configString, defineProviderPlugin, ProviderApiError, type ProviderConfig, type ProviderPlugin } from '../../plugins/sdk.js';
import { AriConnectionManager, type AriClientFactory } from './ari-connections.js';
import { checkAriEndpoint } from './ari-endpoint-policy.js';
import { AriClient, type AriClientOptions } from './ari.client.js';
import { ariManifest, DEFAULT_DIAL_TEMPLATE } from './ari.manifest.js';
import { AriProvider, AriSession } from './ari.provider.js';

export interface AriPluginOptions {
  /** Extra client settings (reconnect backoff, ping interval). */
  client?: Pick<AriClientOptions, 'reconnect' | 'pingIntervalMs' | 'random' | 'resolve' | 'loadTimeoutMs'>;
  /** Builds the client; defaults to `AriClient`. */
  clientFactory?: AriClientFactory;
  /** How long `placeCall` waits for a starting WebSocket before originating anyway (ms). Default 3000. */
  connectWaitMs?: number;
}

/** `ari_endpoint` host (with a non-default port) + `/` + `app_name`: the account part of number uniqueness. */
export function ariAccountId(config: ProviderConfig): string {
  const app = configString(config.app_name);
  let host = configString(config.ari_endpoint).toLowerCase();
  try {
    host = new URL(configString(config.ari_endpoint)).host.toLowerCase();
  } catch {
    // keep the raw value: still stable for the same input
  }
  return `${host}/${app}`;
}

const managers = new WeakMap<ProviderPlugin, AriConnectionManager<AriSession>>();

/** The connection manager of a plugin made by `createAriPlugin` (health, shutdown, tests). */
export function ariConnectionsOf(plugin: ProviderPlugin): AriConnectionManager<AriSession> | undefined {
  return managers.get(plugin);
}

export function createAriPlugin(options: AriPluginOptions = {}): ProviderPlugin {
  const factory: AriClientFactory = options.clientFactory ?? ((o) => new AriClient(o));
  const connections = new AriConnectionManager<AriSession>(factory, (client) => new AriSession(client));
  const plugin = defineProviderPlugin({
    manifest: ariManifest,
    persistentConnection: true,
    deriveAccountId: ariAccountId,
    validateConfig: (config, context) => checkAriEndpoint(config.ari_endpoint, context),
    create: (config, context) => {
      // Checked again here: the private-network setting may have changed since the configuration was saved.
      const refused = checkAriEndpoint(config.ari_endpoint, context);
      if (refused.length > 0) throw new ProviderApiError('ari', refused[0][1]);
      const app = configString(config.app_name);
      const lease = connections.acquire({
        configurationId: config.configurationId,
        client: {
          ...options.client,
          url: configString(config.ari_endpoint),
          username: app,
          password: typeof config.app_password === 'string' ? config.app_password : '',
          app,
          allowPrivateNetwork: context.allowPrivateNetwork,
          configurationId: config.configurationId,
        },
      });
      const providerConfig = {
        configurationId: config.configurationId,
        accountId: ariAccountId(config),
        app,
        dialTemplate: configString(config.dial_template) || DEFAULT_DIAL_TEMPLATE,
        wsClientName: configString(config.ws_client_name),
      };
      lease.session.bind(providerConfig, context);
      // An api-role process serves one-off requests only (credentials check); workers hold the event socket.
      if (context.listen !== false) void lease.session.start();
      return new AriProvider(lease, providerConfig, { connectWaitMs: options.connectWaitMs });
    },
  });
  managers.set(plugin, connections);
  return plugin;
}

export default createAriPlugin();
