import type { Db } from 'mongodb';
import { ConflictError } from '../../../core/errors.js';
import type {
  NewTelephonyConfiguration, TelephonyConfigurationPatch, TelephonyConfigurationRepository,
} from '../../../core/ports/telephony-configuration.repository.port.js';
import type { CredentialsCheck, TelephonyConfiguration } from '../../../core/telephony/telephony-configuration.js';
import { flagOnly, fromJsonText, isDuplicateKey, nextId, toJsonText } from './mongo-database.js';
import { Collections, Indexes } from './mongo-schema.js';
import type { PhoneNumberDocument } from './phone-number.mongo.js';

export interface TelephonyConfigurationDocument {
  _id: number;
  organizationId: number;
  name: string;
  /** `name` lower-cased (Unicode-aware, as SQLite's name_key): unique per organization. */
  nameKey: string;
  provider: string;
  isDefaultOutbound: boolean;
  accountId: string;
  secretsKeyId: string;
  settingsJson: string;
  secretsJson: string;
  /** The provider's answer to the credentials check; absent or null until checked. */
  credentialsCheck?: { ok: boolean; message: string; checkedAt: Date } | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The case-insensitive uniqueness key of a configuration name (the same as the SQLite adapter's). */
export const configurationNameKey = (name: string): string => name.toLowerCase();

export const telephonyConfigurationToDocument = (c: TelephonyConfiguration): TelephonyConfigurationDocument => ({
  _id: c.id,
  organizationId: c.organizationId,
  name: c.name,
  nameKey: configurationNameKey(c.name),
  provider: c.provider,
  isDefaultOutbound: c.isDefaultOutbound,
  accountId: c.accountId,
  secretsKeyId: c.secretsKeyId,
  settingsJson: toJsonText(c.settings),
  secretsJson: toJsonText(c.secrets),
  credentialsCheck: c.credentialsCheck ? { ok: c.credentialsCheck.ok, message: c.credentialsCheck.message, checkedAt: new Date(c.credentialsCheck.checkedAt) } : null,
  createdAt: new Date(c.createdAt),
  updatedAt: new Date(c.updatedAt),
});

export const telephonyConfigurationFromDocument = (d: TelephonyConfigurationDocument): TelephonyConfiguration => ({
  id: d._id,
  organizationId: d.organizationId,
  name: d.name,
  provider: d.provider,
  isDefaultOutbound: d.isDefaultOutbound === true,
  accountId: d.accountId,
  secretsKeyId: d.secretsKeyId,
  settings: fromJsonText<Record<string, unknown>>(d.settingsJson, {}),
  secrets: fromJsonText<Record<string, string>>(d.secretsJson, {}),
  credentialsCheck: d.credentialsCheck
    ? { ok: d.credentialsCheck.ok === true, message: String(d.credentialsCheck.message ?? ''), checkedAt: new Date(d.credentialsCheck.checkedAt) }
    : null,
  createdAt: new Date(d.createdAt),
  updatedAt: new Date(d.updatedAt),
});

const nameTaken = () => new ConflictError('telephony_configuration_name_taken', 'A telephony configuration with this name already exists');
const numberConflict = () => new ConflictError('phone_number_conflict', 'A number of this configuration is already registered by another organization on that account');

/**
 * TelephonyConfigurationRepository on MongoDB, without transactions:
 * - create inserts the configuration as non-default (a taken name fails before anything else changes), then,
 *   when asked, makes it the default with `flagOnly` (others unset, then this one set; a unique partial index
 *   keeps it to one default per organization).
 * - update with a new account id moves the numbers first (`updateMany`); when a moved number collides with
 *   another organization's, the numbers already moved are moved back and `phone_number_conflict` is thrown
 *   before the configuration changes. When the configuration update then fails (a taken name), the numbers are
 *   moved back as well.
 * - delete removes the numbers, then the configuration, then any number created meanwhile (the phone number
 *   repository re-checks its configuration after inserting, so no number outlives its configuration). A crash
 *   between steps leaves at worst a configuration without numbers, never numbers without a configuration.
 */
export class MongoTelephonyConfigurationRepository implements TelephonyConfigurationRepository {
  private readonly configurations;
  private readonly numbers;

  constructor(private readonly db: Db) {
    this.configurations = db.collection<TelephonyConfigurationDocument>(Collections.telephonyConfigurations);
    this.numbers = db.collection<PhoneNumberDocument>(Collections.phoneNumbers);
  }

  async create(organizationId: number, input: NewTelephonyConfiguration): Promise<TelephonyConfiguration> {
    const configuration: TelephonyConfiguration = {
      id: await nextId(this.db, Collections.telephonyConfigurations), organizationId, name: input.name, provider: input.provider,
      isDefaultOutbound: false, accountId: input.accountId, secretsKeyId: input.secretsKeyId, settings: input.settings, secrets: input.secrets,
      credentialsCheck: null, createdAt: input.now, updatedAt: input.now,
    };
    const doc = telephonyConfigurationToDocument(configuration);
    try {
      await this.configurations.insertOne(doc);
    } catch (e) {
      if (isDuplicateKey(e, Indexes.telephonyConfigurationsName)) throw nameTaken();
      throw e;
    }
    if (!input.isDefaultOutbound) return telephonyConfigurationFromDocument(doc);
    return (await this.setDefaultOutbound(organizationId, configuration.id, input.now)) ?? telephonyConfigurationFromDocument(doc);
  }

  async get(organizationId: number, id: number): Promise<TelephonyConfiguration | null> {
    const d = await this.configurations.findOne({ _id: id, organizationId });
    return d ? telephonyConfigurationFromDocument(d) : null;
  }

  async list(organizationId: number): Promise<TelephonyConfiguration[]> {
    return (await this.configurations.find({ organizationId }).sort({ createdAt: 1, _id: 1 }).toArray()).map(telephonyConfigurationFromDocument);
  }

  async update(organizationId: number, id: number, patch: TelephonyConfigurationPatch): Promise<TelephonyConfiguration | null> {
    const before = await this.configurations.findOne({ _id: id, organizationId });
    if (!before) return null;
    const set: Partial<TelephonyConfigurationDocument> = { updatedAt: patch.now };
    if (patch.name !== undefined) {
      set.name = patch.name;
      set.nameKey = configurationNameKey(patch.name);
    }
    if (patch.accountId !== undefined) set.accountId = patch.accountId;
    if (patch.settings !== undefined) set.settingsJson = toJsonText(patch.settings);
    if (patch.secrets !== undefined) set.secretsJson = toJsonText(patch.secrets);

    const moving = patch.accountId !== undefined && patch.accountId !== before.accountId;
    if (moving) await this.moveNumbers(organizationId, id, before.accountId, patch.accountId!, patch.now);
    try {
      const d = await this.configurations.findOneAndUpdate({ _id: id, organizationId }, { $set: set }, { returnDocument: 'after' });
      if (!d && moving) await this.moveNumbersBack(organizationId, id, patch.accountId!, before.accountId, patch.now);
      return d ? telephonyConfigurationFromDocument(d) : null;
    } catch (e) {
      if (moving) await this.moveNumbersBack(organizationId, id, patch.accountId!, before.accountId, patch.now);
      if (isDuplicateKey(e, Indexes.telephonyConfigurationsName)) throw nameTaken();
      throw e;
    }
  }

  private async moveNumbers(organizationId: number, configurationId: number, from: string, to: string, now: Date): Promise<void> {
    try {
      await this.numbers.updateMany({ organizationId, telephonyConfigurationId: configurationId, accountId: from }, { $set: { accountId: to, updatedAt: now } });
    } catch (e) {
      await this.moveNumbersBack(organizationId, configurationId, to, from, now);
      if (isDuplicateKey(e, Indexes.phoneNumbersDispatch)) throw numberConflict();
      throw e;
    }
  }

  private async moveNumbersBack(organizationId: number, configurationId: number, movedTo: string, original: string, now: Date): Promise<void> {
    await this.numbers.updateMany({ organizationId, telephonyConfigurationId: configurationId, accountId: movedTo }, { $set: { accountId: original, updatedAt: now } });
  }

  async recordCredentialsCheck(organizationId: number, id: number, check: CredentialsCheck): Promise<TelephonyConfiguration | null> {
    const d = await this.configurations.findOneAndUpdate(
      { _id: id, organizationId },
      { $set: { credentialsCheck: { ok: check.ok, message: check.message, checkedAt: new Date(check.checkedAt) } } },
      { returnDocument: 'after' },
    );
    return d ? telephonyConfigurationFromDocument(d) : null;
  }

  async delete(organizationId: number, id: number): Promise<boolean> {
    await this.numbers.deleteMany({ organizationId, telephonyConfigurationId: id });
    const r = await this.configurations.deleteOne({ _id: id, organizationId });
    await this.numbers.deleteMany({ organizationId, telephonyConfigurationId: id });
    return r.deletedCount > 0;
  }

  async setDefaultOutbound(organizationId: number, id: number, now: Date): Promise<TelephonyConfiguration | null> {
    const d = await flagOnly(this.configurations, { organizationId }, id, 'isDefaultOutbound', Indexes.telephonyConfigurationsDefault, now);
    return d ? telephonyConfigurationFromDocument(d) : null;
  }

  async getDefaultOutbound(organizationId: number): Promise<TelephonyConfiguration | null> {
    const d = await this.configurations.findOne({ organizationId, isDefaultOutbound: true });
    return d ? telephonyConfigurationFromDocument(d) : null;
  }

  async findForProviderEvent(id: number): Promise<TelephonyConfiguration | null> {
    const d = await this.configurations.findOne({ _id: id });
    return d ? telephonyConfigurationFromDocument(d) : null;
  }

  async listByProvider(provider: string): Promise<TelephonyConfiguration[]> {
    return (await this.configurations.find({ provider }).sort({ _id: 1 }).toArray()).map(telephonyConfigurationFromDocument);
  }
}
