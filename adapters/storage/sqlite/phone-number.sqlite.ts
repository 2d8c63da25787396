import { ConflictError } from '../../../core/errors.js';
import type { AddressType } from '../../../core/ports/phone-address-normalizer.port.js';
import type { NewPhoneNumber, PhoneNumberPatch, PhoneNumberRepository } from '../../../core/ports/phone-number.repository.port.js';
import type { PhoneNumber } from '../../../core/telephony/phone-number.js';
import { fromMs, isUniqueViolation, toMs, type SqliteDatabase } from './database.js';

export interface PhoneNumberRow {
  id: number; organization_id: number; telephony_configuration_id: number; provider: string; account_id: string;
  address: string; address_normalized: string; address_type: string; extension: string | null; country_code: string | null; label: string | null;
  is_active: number; is_default_caller_id: number; extra_metadata: string; inbound_workflow_id: number | null;
  created_at: number; updated_at: number;
}

export const phoneNumberFromRow = (r: PhoneNumberRow): PhoneNumber => ({
  id: r.id,
  organizationId: r.organization_id,
  telephonyConfigurationId: r.telephony_configuration_id,
  provider: r.provider,
  accountId: r.account_id,
  address: r.address,
  addressNormalized: r.address_normalized,
  addressType: r.address_type as AddressType,
  extension: r.extension ?? null,
  countryCode: r.country_code,
  label: r.label,
  isActive: r.is_active === 1,
  isDefaultCallerId: r.is_default_caller_id === 1,
  extraMetadata: JSON.parse(r.extra_metadata) as Record<string, unknown>,
  inboundWorkflowId: r.inbound_workflow_id,
  createdAt: fromMs(r.created_at),
  updatedAt: fromMs(r.updated_at),
});

const exists = () => new ConflictError('phone_number_exists', 'This organization already has this number');
const conflict = () => new ConflictError('phone_number_conflict', 'This number is already registered by another organization on the same provider account');

export class SqlitePhoneNumberRepository implements PhoneNumberRepository {
  private readonly q;

  constructor(private readonly db: SqliteDatabase) {
    this.q = {
      insert: db.prepare<Record<string, unknown>, PhoneNumberRow>(
        `INSERT INTO phone_numbers (organization_id, telephony_configuration_id, provider, account_id, address, address_normalized, address_type,
           extension, country_code, label, is_active, is_default_caller_id, extra_metadata, inbound_workflow_id, created_at, updated_at)
         VALUES (@org, @config, @provider, @accountId, @address, @addressNormalized, @addressType, @extension, @countryCode, @label, @isActive, 0,
           @extraMetadata, @inboundWorkflowId, @now, @now) RETURNING *`),
      get: db.prepare<[number, number, number], PhoneNumberRow>('SELECT * FROM phone_numbers WHERE organization_id = ? AND telephony_configuration_id = ? AND id = ?'),
      list: db.prepare<[number, number], PhoneNumberRow>('SELECT * FROM phone_numbers WHERE organization_id = ? AND telephony_configuration_id = ? ORDER BY created_at, id'),
      orgHasAddress: db.prepare<[number, string, number], { id: number }>('SELECT id FROM phone_numbers WHERE organization_id = ? AND address_normalized = ? AND id <> ?'),
      update: db.prepare<Record<string, unknown>, PhoneNumberRow>(
        `UPDATE phone_numbers SET
           label = CASE WHEN @setLabel THEN @label ELSE label END,
           country_code = CASE WHEN @setCountry THEN @countryCode ELSE country_code END,
           address_normalized = COALESCE(@addressNormalized, address_normalized),
           address_type = COALESCE(@addressType, address_type),
           extension = CASE WHEN @setExtension THEN @extension ELSE extension END,
           is_active = COALESCE(@isActive, is_active),
           extra_metadata = COALESCE(@extraMetadata, extra_metadata),
           inbound_workflow_id = CASE WHEN @setInbound THEN @inboundWorkflowId ELSE inbound_workflow_id END,
           updated_at = @now
         WHERE organization_id = @org AND telephony_configuration_id = @config AND id = @id RETURNING *`),
      delete: db.prepare<[number, number, number]>('DELETE FROM phone_numbers WHERE organization_id = ? AND telephony_configuration_id = ? AND id = ?'),
      unsetDefault: db.prepare<[number, number, number, number]>(
        'UPDATE phone_numbers SET is_default_caller_id = 0, updated_at = ? WHERE organization_id = ? AND telephony_configuration_id = ? AND is_default_caller_id = 1 AND id <> ?'),
      setDefault: db.prepare<[number, number, number, number], PhoneNumberRow>(
        `UPDATE phone_numbers SET is_default_caller_id = 1, updated_at = CASE WHEN is_default_caller_id = 1 THEN updated_at ELSE ? END
         WHERE organization_id = ? AND telephony_configuration_id = ? AND id = ? RETURNING *`),
      getDefault: db.prepare<[number, number], PhoneNumberRow>(
        'SELECT * FROM phone_numbers WHERE organization_id = ? AND telephony_configuration_id = ? AND is_default_caller_id = 1'),
      counts: db.prepare<[number], { config: number; n: number }>(
        'SELECT telephony_configuration_id AS config, COUNT(*) AS n FROM phone_numbers WHERE organization_id = ? GROUP BY telephony_configuration_id'),
      forInbound: db.prepare<[string, string, string], PhoneNumberRow>(
        'SELECT * FROM phone_numbers WHERE provider = ? AND account_id = ? AND address_normalized = ?'),
    };
  }

  /** A unique violation on either address index: the organization's own number wins over another organization's. */
  private classify(e: unknown, organizationId: number, addressNormalized: string, selfId = 0): unknown {
    if (!isUniqueViolation(e, 'phone_numbers.')) return e;
    if (isUniqueViolation(e, 'is_default_caller_id') || isUniqueViolation(e, 'telephony_configuration_id')) return e;
    return this.q.orgHasAddress.get(organizationId, addressNormalized, selfId) ? exists() : conflict();
  }

  async create(organizationId: number, input: NewPhoneNumber): Promise<PhoneNumber> {
    const now = toMs(input.now);
    const tx = this.db.transaction(() => {
      const row = this.q.insert.get({
        org: organizationId, config: input.telephonyConfigurationId, provider: input.provider, accountId: input.accountId,
        address: input.address, addressNormalized: input.addressNormalized, addressType: input.addressType, extension: input.extension ?? null,
        countryCode: input.countryCode, label: input.label, isActive: input.isActive ? 1 : 0,
        extraMetadata: JSON.stringify(input.extraMetadata), inboundWorkflowId: input.inboundWorkflowId, now,
      })!;
      if (!input.isDefaultCallerId) return row;
      this.q.unsetDefault.run(now, organizationId, input.telephonyConfigurationId, row.id);
      return this.q.setDefault.get(now, organizationId, input.telephonyConfigurationId, row.id)!;
    });
    try {
      return phoneNumberFromRow(tx.immediate());
    } catch (e) {
      throw this.classify(e, organizationId, input.addressNormalized);
    }
  }

  async get(organizationId: number, configurationId: number, id: number): Promise<PhoneNumber | null> {
    const r = this.q.get.get(organizationId, configurationId, id);
    return r ? phoneNumberFromRow(r) : null;
  }

  async list(organizationId: number, configurationId: number): Promise<PhoneNumber[]> {
    return this.q.list.all(organizationId, configurationId).map(phoneNumberFromRow);
  }

  async update(organizationId: number, configurationId: number, id: number, patch: PhoneNumberPatch): Promise<PhoneNumber | null> {
    try {
      const r = this.q.update.get({
        org: organizationId, config: configurationId, id, now: toMs(patch.now),
        setLabel: patch.label !== undefined ? 1 : 0, label: patch.label ?? null,
        setCountry: patch.countryCode !== undefined ? 1 : 0, countryCode: patch.countryCode ?? null,
        addressNormalized: patch.addressNormalized ?? null, addressType: patch.addressType ?? null,
        setExtension: patch.extension !== undefined ? 1 : 0, extension: patch.extension ?? null,
        isActive: patch.isActive === undefined ? null : patch.isActive ? 1 : 0,
        extraMetadata: patch.extraMetadata ? JSON.stringify(patch.extraMetadata) : null,
        setInbound: patch.inboundWorkflowId !== undefined ? 1 : 0, inboundWorkflowId: patch.inboundWorkflowId ?? null,
      });
      return r ? phoneNumberFromRow(r) : null;
    } catch (e) {
      throw this.classify(e, organizationId, patch.addressNormalized ?? '', id);
    }
  }

  async delete(organizationId: number, configurationId: number, id: number): Promise<boolean> {
    return this.q.delete.run(organizationId, configurationId, id).changes > 0;
  }

  async setDefaultCaller(organizationId: number, configurationId: number, id: number, now: Date): Promise<PhoneNumber | null> {
    const tx = this.db.transaction(() => {
      if (!this.q.get.get(organizationId, configurationId, id)) return null;
      this.q.unsetDefault.run(toMs(now), organizationId, configurationId, id);
      return this.q.setDefault.get(toMs(now), organizationId, configurationId, id)!;
    });
    const r = tx.immediate();
    return r ? phoneNumberFromRow(r) : null;
  }

  async getDefaultCaller(organizationId: number, configurationId: number): Promise<PhoneNumber | null> {
    const r = this.q.getDefault.get(organizationId, configurationId);
    return r ? phoneNumberFromRow(r) : null;
  }

  async countByConfiguration(organizationId: number): Promise<Map<number, number>> {
    return new Map(this.q.counts.all(organizationId).map((r) => [r.config, r.n]));
  }

  async findForInbound(provider: string, accountId: string, addressNormalized: string): Promise<PhoneNumber | null> {
    const r = this.q.forInbound.get(provider, accountId, addressNormalized);
    return r ? phoneNumberFromRow(r) : null;
  }
}
