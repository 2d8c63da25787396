import type { Db } from 'mongodb';
import { ConflictError } from '../../../core/errors.js';
import type { AddressType } from '../../../core/ports/phone-address-normalizer.port.js';
import type { NewPhoneNumber, PhoneNumberPatch, PhoneNumberRepository } from '../../../core/ports/phone-number.repository.port.js';
import type { PhoneNumber } from '../../../core/telephony/phone-number.js';
import { flagOnly, fromJsonText, isDuplicateKey, nextId, toJsonText } from './mongo-database.js';
import { Collections, Indexes } from './mongo-schema.js';

export interface PhoneNumberDocument {
  _id: number;
  organizationId: number;
  telephonyConfigurationId: number;
  provider: string;
  accountId: string;
  address: string;
  addressNormalized: string;
  addressType: AddressType;
  /** Absent on documents written before extensions were kept: read as null. */
  extension?: string | null;
  countryCode: string | null;
  label: string | null;
  isActive: boolean;
  isDefaultCallerId: boolean;
  extraMetadataJson: string;
  inboundWorkflowId: number | null;
  createdAt: Date;
  updatedAt: Date;
}

export const phoneNumberToDocument = (n: PhoneNumber): PhoneNumberDocument => ({
  _id: n.id,
  organizationId: n.organizationId,
  telephonyConfigurationId: n.telephonyConfigurationId,
  provider: n.provider,
  accountId: n.accountId,
  address: n.address,
  addressNormalized: n.addressNormalized,
  addressType: n.addressType,
  extension: n.extension,
  countryCode: n.countryCode,
  label: n.label,
  isActive: n.isActive,
  isDefaultCallerId: n.isDefaultCallerId,
  extraMetadataJson: toJsonText(n.extraMetadata),
  inboundWorkflowId: n.inboundWorkflowId,
  createdAt: new Date(n.createdAt),
  updatedAt: new Date(n.updatedAt),
});

export const phoneNumberFromDocument = (d: PhoneNumberDocument): PhoneNumber => ({
  id: d._id,
  organizationId: d.organizationId,
  telephonyConfigurationId: d.telephonyConfigurationId,
  provider: d.provider,
  accountId: d.accountId,
  address: d.address,
  addressNormalized: d.addressNormalized,
  addressType: d.addressType,
  extension: d.extension ?? null,
  countryCode: d.countryCode ?? null,
  label: d.label ?? null,
  isActive: d.isActive === true,
  isDefaultCallerId: d.isDefaultCallerId === true,
  extraMetadata: fromJsonText<Record<string, unknown>>(d.extraMetadataJson, {}),
  inboundWorkflowId: d.inboundWorkflowId ?? null,
  createdAt: new Date(d.createdAt),
  updatedAt: new Date(d.updatedAt),
});

const exists = () => new ConflictError('phone_number_exists', 'This organization already has this number');
const conflict = () => new ConflictError('phone_number_conflict', 'This number is already registered by another organization on the same provider account');

/**
 * PhoneNumberRepository on MongoDB. The uniqueness rules are unique indexes (per organization, per dispatch
 * tuple across organizations, one default caller per configuration), as in SQLite.
 * - create inserts the number (never as default), then re-checks that its configuration still exists and
 *   removes the number again when it does not (a configuration deleted meanwhile; see the configuration
 *   repository's delete), then, when asked, makes it the default caller (`flagOnly`).
 * - the default caller is switched by unsetting the others, then setting this one, the unique partial index
 *   refusing a second default when two switches race (the loser repeats).
 */
export class MongoPhoneNumberRepository implements PhoneNumberRepository {
  private readonly numbers;
  private readonly configurations;

  constructor(private readonly db: Db) {
    this.numbers = db.collection<PhoneNumberDocument>(Collections.phoneNumbers);
    this.configurations = db.collection<{ _id: number; organizationId: number }>(Collections.telephonyConfigurations);
  }

  /** A duplicate on either address index: the organization's own number wins over another organization's. */
  private async classify(e: unknown, organizationId: number, addressNormalized: string, selfId = 0): Promise<unknown> {
    if (!isDuplicateKey(e, Indexes.phoneNumbersOrgAddress) && !isDuplicateKey(e, Indexes.phoneNumbersDispatch)) return e;
    const own = await this.numbers.findOne({ organizationId, addressNormalized, _id: { $ne: selfId } }, { projection: { _id: 1 } });
    return own ? exists() : conflict();
  }

  async create(organizationId: number, input: NewPhoneNumber): Promise<PhoneNumber> {
    const number: PhoneNumber = {
      id: await nextId(this.db, Collections.phoneNumbers), organizationId, telephonyConfigurationId: input.telephonyConfigurationId,
      provider: input.provider, accountId: input.accountId, address: input.address, addressNormalized: input.addressNormalized,
      addressType: input.addressType, extension: input.extension ?? null, countryCode: input.countryCode, label: input.label, isActive: input.isActive, isDefaultCallerId: false,
      extraMetadata: input.extraMetadata, inboundWorkflowId: input.inboundWorkflowId, createdAt: input.now, updatedAt: input.now,
    };
    const doc = phoneNumberToDocument(number);
    try {
      await this.numbers.insertOne(doc);
    } catch (e) {
      throw await this.classify(e, organizationId, input.addressNormalized);
    }
    if (!(await this.configurations.findOne({ _id: input.telephonyConfigurationId, organizationId }, { projection: { _id: 1 } }))) {
      await this.numbers.deleteOne({ _id: number.id });
      throw new Error(`telephony configuration ${input.telephonyConfigurationId} does not exist`);
    }
    if (!input.isDefaultCallerId) return phoneNumberFromDocument(doc);
    const flagged = await this.setDefaultCaller(organizationId, input.telephonyConfigurationId, number.id, input.now);
    return flagged ?? phoneNumberFromDocument(doc);
  }

  async get(organizationId: number, configurationId: number, id: number): Promise<PhoneNumber | null> {
    const d = await this.numbers.findOne({ _id: id, organizationId, telephonyConfigurationId: configurationId });
    return d ? phoneNumberFromDocument(d) : null;
  }

  async list(organizationId: number, configurationId: number): Promise<PhoneNumber[]> {
    const docs = await this.numbers.find({ organizationId, telephonyConfigurationId: configurationId }).sort({ createdAt: 1, _id: 1 }).toArray();
    return docs.map(phoneNumberFromDocument);
  }

  async update(organizationId: number, configurationId: number, id: number, patch: PhoneNumberPatch): Promise<PhoneNumber | null> {
    const set: Partial<PhoneNumberDocument> = { updatedAt: patch.now };
    if (patch.label !== undefined) set.label = patch.label;
    if (patch.countryCode !== undefined) set.countryCode = patch.countryCode;
    if (patch.addressNormalized !== undefined) set.addressNormalized = patch.addressNormalized;
    if (patch.addressType !== undefined) set.addressType = patch.addressType;
    if (patch.extension !== undefined) set.extension = patch.extension;
    if (patch.isActive !== undefined) set.isActive = patch.isActive;
    if (patch.extraMetadata !== undefined) set.extraMetadataJson = toJsonText(patch.extraMetadata);
    if (patch.inboundWorkflowId !== undefined) set.inboundWorkflowId = patch.inboundWorkflowId;
    try {
      const d = await this.numbers.findOneAndUpdate(
        { _id: id, organizationId, telephonyConfigurationId: configurationId }, { $set: set }, { returnDocument: 'after' });
      return d ? phoneNumberFromDocument(d) : null;
    } catch (e) {
      throw await this.classify(e, organizationId, patch.addressNormalized ?? '', id);
    }
  }

  async delete(organizationId: number, configurationId: number, id: number): Promise<boolean> {
    const r = await this.numbers.deleteOne({ _id: id, organizationId, telephonyConfigurationId: configurationId });
    return r.deletedCount > 0;
  }

  async setDefaultCaller(organizationId: number, configurationId: number, id: number, now: Date): Promise<PhoneNumber | null> {
    const d = await flagOnly(this.numbers, { organizationId, telephonyConfigurationId: configurationId }, id, 'isDefaultCallerId', Indexes.phoneNumbersDefaultCaller, now);
    return d ? phoneNumberFromDocument(d) : null;
  }

  async getDefaultCaller(organizationId: number, configurationId: number): Promise<PhoneNumber | null> {
    const d = await this.numbers.findOne({ organizationId, telephonyConfigurationId: configurationId, isDefaultCallerId: true });
    return d ? phoneNumberFromDocument(d) : null;
  }

  async countByConfiguration(organizationId: number): Promise<Map<number, number>> {
    const rows = await this.numbers.aggregate<{ _id: number; n: number }>([
      { $match: { organizationId } },
      { $group: { _id: '$telephonyConfigurationId', n: { $sum: 1 } } },
    ]).toArray();
    return new Map(rows.map((r) => [r._id, r.n]));
  }

  async findForInbound(provider: string, accountId: string, addressNormalized: string): Promise<PhoneNumber | null> {
    const d = await this.numbers.findOne({ provider, accountId, addressNormalized });
    return d ? phoneNumberFromDocument(d) : null;
  }
}
