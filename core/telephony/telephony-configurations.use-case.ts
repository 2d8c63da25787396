import type { EventPublisher } from '../ports/event-publisher.port.js';
import { ConflictError, InputError, NotFoundError, ValidationError } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import type { TokenService } from '../ports/crypto.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { PhoneNumberRepository } from '../ports/phone-number.repository.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import type { TelephonyConfigurationUsage } from '../ports/telephony-configuration-usage.port.js';
import type { TelephonyProviderCatalog } from '../ports/telephony-provider-catalog.port.js';
import type { ProviderConfig, ProviderPlugin } from '../ports/telephony-provider.port.js';
import type { CheckCredentials } from './check-credentials.use-case.js';
import { presentCredentials, restoreMaskedSecrets } from './credential-mask.js';
import type { CredentialVault } from './credential-vault.js';
import type { ProviderInstances } from './provider-instances.js';
import type { PhoneNumber } from './phone-number.js';
import { inboundWebhookUrl, type ProviderSync, type TelephonyConfiguration, type TelephonyConfigurationView } from './telephony-configuration.js';

export const configurationNotFound = () => new NotFoundError('telephony_configuration_not_found', 'Telephony configuration not found');

/** Shared reading side: masking, counts, decrypting. */
export class TelephonyConfigurationReader {
  constructor(
    private readonly repo: TelephonyConfigurationRepository,
    private readonly numbers: PhoneNumberRepository,
    private readonly catalog: TelephonyProviderCatalog,
    private readonly vault: CredentialVault,
  ) {}

  /** The configuration or `NotFoundError('telephony_configuration_not_found')`. */
  async require(organizationId: number, id: number): Promise<TelephonyConfiguration> {
    const c = await this.repo.get(organizationId, id);
    if (!c) throw configurationNotFound();
    return c;
  }

  plugin(provider: string): ProviderPlugin {
    const p = this.catalog.get(provider);
    if (!p) throw new InputError('provider_not_registered', `No provider plugin "${provider}" is loaded`);
    return p;
  }

  /**
   * The configuration with this id in any organization, or null. Not tenant-scoped on purpose: only for
   * judging another organization's claim on a number (whose credentials proved the account), never for a
   * user-facing read.
   */
  async findAnywhere(id: number): Promise<TelephonyConfiguration | null> {
    return this.repo.findForProviderEvent(id);
  }

  /** Decrypted credentials. */
  open(c: TelephonyConfiguration): ProviderConfig {
    return this.vault.open(this.plugin(c.provider).manifest, c);
  }

  view(c: TelephonyConfiguration, phoneNumberCount: number): TelephonyConfigurationView {
    const plugin = this.catalog.get(c.provider);
    // a configuration of a plugin that is no longer loaded still lists, with its clear settings only
    const credentials = plugin ? presentCredentials(plugin.manifest, this.vault.open(plugin.manifest, c)) : { ...c.settings };
    return { configuration: c, credentials, phoneNumberCount };
  }

  async viewOne(c: TelephonyConfiguration): Promise<TelephonyConfigurationView> {
    const counts = await this.numbers.countByConfiguration(c.organizationId);
    return this.view(c, counts.get(c.id) ?? 0);
  }
}

/** JSON with object keys sorted: equal for equal credentials whatever order their fields came in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v);
}

function validated(catalog: TelephonyProviderCatalog, config: Record<string, unknown>): ProviderConfig {
  const r = catalog.validateConfig(config);
  if (!r.ok) throw new ValidationError(r.issues.map((i) => ({ ...i, loc: ['body', 'config', ...i.loc] })));
  return r.config;
}

/** Drops what the client may send but never stores: the discriminator and the ignored `from_numbers`. */
function credentialPart(config: Record<string, unknown>): Record<string, unknown> {
  const { provider: _p, from_numbers: _f, ...rest } = config;
  return rest;
}

export class CreateTelephonyConfiguration {
  constructor(
    private readonly repo: TelephonyConfigurationRepository,
    private readonly reader: TelephonyConfigurationReader,
    private readonly catalog: TelephonyProviderCatalog,
    private readonly vault: CredentialVault,
    private readonly tokens: TokenService,
    private readonly instances: ProviderInstances,
    private readonly clock: Clock,
    private readonly checkCredentials: Pick<CheckCredentials, 'execute'>,
  ) {}

  /**
   * Stores the configuration, then asks the provider whether its credentials work (`credentialsCheck`, saved
   * either way). Throws ValidationError (422) on a bad config, `ConflictError('telephony_configuration_name_taken')`.
   */
  async execute(organizationId: number, input: { name: string; config: Record<string, unknown>; isDefaultOutbound: boolean }): Promise<TelephonyConfigurationView> {
    const provider = String(input.config.provider ?? '');
    const plugin = this.catalog.get(provider);
    if (!plugin) throw new ValidationError([{ loc: ['body', 'config', 'provider'], msg: `Unknown provider "${provider}"`, type: 'union_tag_invalid' }]);
    const config = validated(this.catalog, input.config);
    const secretsKeyId = this.tokens.uuid();
    const sealed = this.vault.seal(plugin.manifest, organizationId, secretsKeyId, config);
    const c = await this.repo.create(organizationId, {
      name: input.name,
      provider,
      isDefaultOutbound: input.isDefaultOutbound,
      accountId: plugin.deriveAccountId(config),
      secretsKeyId,
      ...sealed,
      now: this.clock.now(),
    });
    await this.instances.configurationChanged(c);
    return this.reader.view(await this.checkCredentials.execute(c), 0);
  }
}

/**
 * Pushes (or, with `inboundUrl` null, detaches) the inbound binding of each bound number through the
 * configuration's provider; one `provider_sync` summary, a warning on any failure, never an exception.
 */
async function syncBoundNumbers(
  instances: ProviderInstances,
  configuration: TelephonyConfiguration,
  bound: PhoneNumber[],
  inboundUrl: string | null,
  log: Logger,
  events?: EventPublisher,
): Promise<ProviderSync> {
  const failures: string[] = [];
  try {
    const provider = instances.forConfiguration(configuration);
    for (const n of bound) {
      const r = await provider.syncInboundWebhook({ address: n.address, addressNormalized: n.addressNormalized, inboundUrl });
      if (!r.ok) {
        failures.push(`${n.addressNormalized}: ${r.message}`);
        await events?.publish({
          type: 'phone_number.sync_failed', organizationId: n.organizationId, operation: inboundUrl === null ? 'detach' : 'bind', message: String(r.message ?? ''),
          phoneNumber: { id: n.id, address: n.address, telephonyConfigurationId: n.telephonyConfigurationId },
        });
      }
    }
  } catch (e) {
    failures.push((e as Error)?.message ?? 'provider unavailable');
  }
  const verb = inboundUrl === null ? 'detached from' : 'pushed to';
  const sync: ProviderSync = failures.length === 0
    ? { ok: true, message: `Inbound webhook ${verb} ${bound.length} number(s)` }
    : { ok: false, message: `Some inbound webhooks could not be ${inboundUrl === null ? 'detached' : 'pushed'}: ${failures.join('; ')}` };
  if (!sync.ok) log.warn({ telephony_configuration_id: configuration.id, message: sync.message }, 'inbound webhook sync failed for a configuration');
  return sync;
}

export class UpdateTelephonyConfiguration {
  constructor(
    private readonly repo: TelephonyConfigurationRepository,
    private readonly reader: TelephonyConfigurationReader,
    private readonly catalog: TelephonyProviderCatalog,
    private readonly vault: CredentialVault,
    private readonly instances: ProviderInstances,
    private readonly clock: Clock,
    private readonly numbers: PhoneNumberRepository,
    private readonly publicUrl: string,
    private readonly log: Logger,
    private readonly checkCredentials: Pick<CheckCredentials, 'execute'>,
    /** Customer webhooks: each number whose re-sync fails publishes `phone_number.sync_failed`. */
    private readonly events?: EventPublisher,
  ) {}

  /**
   * Partial update: `name` and/or `config`; the sent config fields are merged over the stored ones (null
   * unsets an optional field), masked values equal to the stored value's mask keep the stored secret.
   * When `config` is sent and the configuration has numbers bound to agents, their inbound webhooks are
   * pushed again with the new credentials (a changed account must carry them) and `providerSync` reports it.
   * When the credentials changed (or are sent again while their last check did not pass), the provider is asked
   * whether they work (`credentialsCheck`).
   * Throws NotFoundError, InputError('provider_immutable'), ValidationError, ConflictError (name taken,
   * or a number colliding once the account id changes).
   */
  async execute(organizationId: number, id: number, patch: { name?: string; config?: Record<string, unknown> }): Promise<TelephonyConfigurationView> {
    const stored = await this.reader.require(organizationId, id);
    const change: { name?: string; accountId?: string; settings?: Record<string, unknown>; secrets?: Record<string, string>; now: Date } = { now: this.clock.now() };
    let credentialsChanged = false;
    if (patch.name !== undefined) change.name = patch.name;
    if (patch.config !== undefined) {
      const sentProvider = patch.config.provider;
      if (sentProvider !== undefined && sentProvider !== stored.provider) {
        throw new InputError('provider_immutable', `The provider of a configuration cannot change (it is "${stored.provider}"); create a new configuration instead`);
      }
      const plugin = this.reader.plugin(stored.provider);
      const current = this.vault.open(plugin.manifest, stored);
      const submitted = restoreMaskedSecrets(plugin.manifest, current, credentialPart(patch.config));
      const merged: Record<string, unknown> = { ...current };
      for (const [k, v] of Object.entries(submitted)) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      const config = validated(this.catalog, { ...merged, provider: stored.provider });
      credentialsChanged = canonical(credentialPart(config)) !== canonical(credentialPart(current));
      Object.assign(change, this.vault.seal(plugin.manifest, organizationId, stored.secretsKeyId, config));
      change.accountId = plugin.deriveAccountId(config);
    }
    let updated = await this.repo.update(organizationId, id, change);
    if (!updated) throw configurationNotFound();
    await this.instances.configurationChanged(updated);
    // sending unchanged credentials again asks again unless they already passed (a retry after a timeout)
    if (patch.config !== undefined && (credentialsChanged || updated.credentialsCheck?.ok !== true)) updated = await this.checkCredentials.execute(updated);
    const view = await this.reader.viewOne(updated);
    if (patch.config === undefined) return view;
    const bound = (await this.numbers.list(organizationId, id)).filter((n) => n.inboundWorkflowId !== null);
    if (bound.length === 0) return view;
    return { ...view, providerSync: await syncBoundNumbers(this.instances, updated, bound, inboundWebhookUrl(this.publicUrl, updated.provider), this.log, this.events) };
  }
}

export class ListTelephonyConfigurations {
  constructor(private readonly repo: TelephonyConfigurationRepository, private readonly numbers: PhoneNumberRepository, private readonly reader: TelephonyConfigurationReader) {}
  async execute(organizationId: number): Promise<TelephonyConfigurationView[]> {
    const [list, counts] = await Promise.all([this.repo.list(organizationId), this.numbers.countByConfiguration(organizationId)]);
    return list.map((c) => this.reader.view(c, counts.get(c.id) ?? 0));
  }
}

export class GetTelephonyConfiguration {
  constructor(private readonly reader: TelephonyConfigurationReader) {}
  async execute(organizationId: number, id: number): Promise<TelephonyConfigurationView> {
    return this.reader.viewOne(await this.reader.require(organizationId, id));
  }
}

export class SetDefaultOutboundConfiguration {
  constructor(private readonly repo: TelephonyConfigurationRepository, private readonly reader: TelephonyConfigurationReader, private readonly clock: Clock) {}
  async execute(organizationId: number, id: number): Promise<TelephonyConfigurationView> {
    const c = await this.repo.setDefaultOutbound(organizationId, id, this.clock.now());
    if (!c) throw configurationNotFound();
    return this.reader.viewOne(c);
  }
}

export class DeleteTelephonyConfiguration {
  constructor(
    private readonly repo: TelephonyConfigurationRepository,
    private readonly numbers: PhoneNumberRepository,
    private readonly reader: TelephonyConfigurationReader,
    private readonly usage: TelephonyConfigurationUsage,
    private readonly instances: ProviderInstances,
    private readonly log: Logger,
    /** Customer webhooks: each number whose detach fails publishes `phone_number.sync_failed`. */
    private readonly events?: EventPublisher,
  ) {}

  /**
   * Refused with `ConflictError('telephony_configuration_in_use')` while a draft, running or paused campaign
   * uses it. Deletes its numbers too; the inbound webhooks of bound numbers are detached best-effort
   * (`provider_sync` summarizes them when there were any).
   */
  async execute(organizationId: number, id: number): Promise<{ id: number; deleted: true; providerSync?: ProviderSync }> {
    const c = await this.reader.require(organizationId, id);
    const inUse = await this.usage.countActiveCampaignsUsingConfiguration(organizationId, id);
    if (inUse > 0) throw new ConflictError('telephony_configuration_in_use', `The configuration is used by ${inUse} draft, running or paused campaign(s)`);
    const bound = (await this.numbers.list(organizationId, id)).filter((n) => n.inboundWorkflowId !== null);
    const providerSync = bound.length > 0 ? await syncBoundNumbers(this.instances, c, bound, null, this.log, this.events) : undefined;
    if (!(await this.repo.delete(organizationId, id))) throw configurationNotFound();
    await this.instances.release(id);
    return { id, deleted: true, ...(providerSync ? { providerSync } : {}) };
  }
}
