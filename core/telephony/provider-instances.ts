import type { SimulatedCallRequest } from '../ports/simulated-callers.port.js';
import { InputError } from '../errors.js';
import type { Logger } from '../ports/logger.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import type { TelephonyProviderCatalog } from '../ports/telephony-provider-catalog.port.js';
import type { InboundCall, NormalizedCallEvent, ProviderContext, ProviderHealth, TelephonyProvider } from '../ports/telephony-provider.port.js';
import type { CredentialVault } from './credential-vault.js';
import type { TelephonyConfiguration } from './telephony-configuration.js';

/** Changes whenever what an instance is built from changes (ciphertexts are fresh on every write). */
const credentialsVersion = (c: TelephonyConfiguration): string => JSON.stringify([c.provider, c.accountId, c.settings, c.secrets]);

/** Where event-driven providers (ARI, the simulator) deliver what they observe. */
export interface ProviderEventSink {
  reportStatus(provider: string, event: NormalizedCallEvent & { kind: 'status' }): Promise<void>;
  reportInbound(provider: string, call: InboundCall & { configurationId: number }): Promise<{ runId: number; mediaUrl?: string } | { refused: string }>;
  /** Simulated callers (API.md 13): false when this process runs no voice pipeline. */
  connectSimulatedCaller?(request: SimulatedCallRequest): boolean;
}

export interface ProviderInstancesOptions {
  publicUrl: string;
  allowPrivateNetwork: boolean;
  /**
   * Whether this process keeps persistent provider connections (default true): false in an `api` process, where
   * neither the start nor a configuration's create/update opens them (the worker processes keep them).
   */
  persistentConnections?: boolean;
}

/**
 * One live `TelephonyProvider` per configuration, built from its decrypted credentials, reused while its
 * credentials are unchanged and replaced (the old one closed) when they change; a rename or a default switch
 * keeps the instance (and ARI's socket). Plugins with
 * `persistentConnection` get an instance for every stored configuration at start (ARI's event socket).
 */
export class ProviderInstances {
  private readonly live = new Map<number, { version: string; provider: TelephonyProvider }>();
  private closed = false;

  constructor(
    private readonly catalog: TelephonyProviderCatalog,
    private readonly vault: CredentialVault,
    private readonly configurations: TelephonyConfigurationRepository,
    private readonly sink: ProviderEventSink,
    private readonly log: Logger,
    private readonly options: ProviderInstancesOptions,
  ) {}

  /** The instance of `configuration`. Throws `InputError('provider_not_registered')` when its plugin is not loaded. */
  forConfiguration(configuration: TelephonyConfiguration): TelephonyProvider {
    const version = credentialsVersion(configuration);
    const cached = this.live.get(configuration.id);
    if (cached && cached.version === version) return cached.provider;
    if (cached) this.closeQuietly(configuration.id, cached.provider);
    const plugin = this.catalog.get(configuration.provider);
    if (!plugin) throw new InputError('provider_not_registered', `No provider plugin "${configuration.provider}" is loaded`);
    const config = this.vault.open(plugin.manifest, configuration);
    const providerId = plugin.manifest.id;
    const context: ProviderContext = {
      publicUrl: this.options.publicUrl,
      allowPrivateNetwork: this.options.allowPrivateNetwork,
      listen: this.options.persistentConnections !== false,
      log: this.log.child({ provider: providerId, telephony_configuration_id: configuration.id }),
      reportStatus: (event) => this.sink.reportStatus(providerId, event),
      reportInbound: (call) => this.sink.reportInbound(providerId, call),
      connectSimulatedCaller: (request) => this.sink.connectSimulatedCaller?.({ ...request, provider: providerId }) ?? false,
    };
    const provider = plugin.create({ ...config, configurationId: configuration.id, organizationId: configuration.organizationId }, context);
    if (!this.closed) this.live.set(configuration.id, { version, provider });
    return provider;
  }

  /** Closes and forgets the configuration's instance (after a delete). Idempotent. */
  async release(configurationId: number): Promise<void> {
    const cached = this.live.get(configurationId);
    if (!cached) return;
    this.live.delete(configurationId);
    await cached.provider.close().catch((e: unknown) => this.log.warn({ telephony_configuration_id: configurationId, err: (e as Error)?.message }, 'provider close failed'));
  }

  /**
   * After a create or an update: the old instance is closed; a persistent-connection provider gets its new
   * one at once (it must listen for inbound calls), the others lazily on next use.
   */
  async configurationChanged(configuration: TelephonyConfiguration): Promise<void> {
    if (this.live.get(configuration.id)?.version === credentialsVersion(configuration)) return;
    await this.release(configuration.id);
    if (this.closed || this.options.persistentConnections === false || !this.catalog.get(configuration.provider)?.persistentConnection) return;
    try {
      this.forConfiguration(configuration);
    } catch (e) {
      this.log.error({ telephony_configuration_id: configuration.id, err: (e as Error)?.message }, 'provider instance failed to start');
    }
  }

  /** Creates the instances of every configuration whose plugin keeps a persistent connection. */
  async startPersistent(): Promise<number> {
    let started = 0;
    if (this.options.persistentConnections === false) return started;
    for (const id of this.catalog.ids()) {
      if (!this.catalog.get(id)?.persistentConnection) continue;
      for (const c of await this.configurations.listByProvider(id)) {
        try {
          this.forConfiguration(c);
          started++;
        } catch (e) {
          this.log.error({ provider: id, telephony_configuration_id: c.id, err: (e as Error)?.message }, 'provider instance failed to start');
        }
      }
    }
    return started;
  }

  /** Health of the live instances that report one. */
  health(): Array<{ configurationId: number; provider: string; health: ProviderHealth }> {
    const out: Array<{ configurationId: number; provider: string; health: ProviderHealth }> = [];
    for (const [configurationId, { provider }] of this.live) {
      if (provider.health) out.push({ configurationId, provider: provider.manifest.id, health: provider.health() });
    }
    return out;
  }

  /** Closes every instance (stop). Idempotent; later `forConfiguration` calls build unmanaged instances no more. */
  async closeAll(): Promise<void> {
    this.closed = true;
    const all = [...this.live.keys()];
    await Promise.all(all.map((id) => this.release(id)));
  }

  private closeQuietly(id: number, provider: TelephonyProvider): void {
    this.live.delete(id);
    provider.close().catch((e: unknown) => this.log.warn({ telephony_configuration_id: id, err: (e as Error)?.message }, 'provider close failed'));
  }
}
