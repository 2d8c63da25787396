import { ConflictError } from '../../../core/errors.js';
import type { NewTelephonyConfiguration, TelephonyConfigurationPatch, TelephonyConfigurationRepository } from '../../../core/ports/telephony-configuration.repository.port.js';
import type { CredentialsCheck, TelephonyConfiguration } from '../../../core/telephony/telephony-configuration.js';
import { fromMs, isUniqueViolation, toMs, type SqliteDatabase } from './database.js';

export interface TelephonyConfigurationRow {
  id: number; organization_id: number; name: string; name_key: string; provider: string; is_default_outbound: number;
  account_id: string; secrets_key_id: string; settings: string; secrets: string; created_at: number; updated_at: number;
  credentials_check_ok: number | null; credentials_check_message: string | null; credentials_checked_at: number | null;
}

export const telephonyConfigurationFromRow = (r: TelephonyConfigurationRow): TelephonyConfiguration => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  provider: r.provider,
  isDefaultOutbound: r.is_default_outbound === 1,
  accountId: r.account_id,
  secretsKeyId: r.secrets_key_id,
  settings: JSON.parse(r.settings) as Record<string, unknown>,
  secrets: JSON.parse(r.secrets) as Record<string, string>,
  credentialsCheck: r.credentials_check_ok === null || r.credentials_check_ok === undefined || r.credentials_checked_at === null || r.credentials_checked_at === undefined
    ? null
    : { ok: r.credentials_check_ok === 1, message: r.credentials_check_message ?? '', checkedAt: fromMs(r.credentials_checked_at) },
  createdAt: fromMs(r.created_at),
  updatedAt: fromMs(r.updated_at),
});

/** The case-insensitive uniqueness key of a configuration name. */
export const nameKey = (name: string): string => name.toLowerCase();

const nameTaken = () => new ConflictError('telephony_configuration_name_taken', 'A telephony configuration with this name already exists');
const numberConflict = () => new ConflictError('phone_number_conflict', 'A number of this configuration is already registered by another organization on that account');

export class SqliteTelephonyConfigurationRepository implements TelephonyConfigurationRepository {
  private readonly q;

  constructor(private readonly db: SqliteDatabase) {
    this.q = {
      insert: db.prepare<[number, string, string, string, number, string, string, string, string, number, number], TelephonyConfigurationRow>(
        `INSERT INTO telephony_configurations (organization_id, name, name_key, provider, is_default_outbound, account_id, secrets_key_id, settings, secrets, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`),
      get: db.prepare<[number, number], TelephonyConfigurationRow>('SELECT * FROM telephony_configurations WHERE organization_id = ? AND id = ?'),
      byId: db.prepare<[number], TelephonyConfigurationRow>('SELECT * FROM telephony_configurations WHERE id = ?'),
      list: db.prepare<[number], TelephonyConfigurationRow>('SELECT * FROM telephony_configurations WHERE organization_id = ? ORDER BY created_at, id'),
      byProvider: db.prepare<[string], TelephonyConfigurationRow>('SELECT * FROM telephony_configurations WHERE provider = ? ORDER BY id'),
      unsetDefault: db.prepare<[number, number, number]>(
        'UPDATE telephony_configurations SET is_default_outbound = 0, updated_at = ? WHERE organization_id = ? AND is_default_outbound = 1 AND id <> ?'),
      setDefault: db.prepare<[number, number, number], TelephonyConfigurationRow>(
        `UPDATE telephony_configurations SET is_default_outbound = 1,
           updated_at = CASE WHEN is_default_outbound = 1 THEN updated_at ELSE ? END
         WHERE organization_id = ? AND id = ? RETURNING *`),
      getDefault: db.prepare<[number], TelephonyConfigurationRow>('SELECT * FROM telephony_configurations WHERE organization_id = ? AND is_default_outbound = 1'),
      update: db.prepare<{ org: number; id: number; name: string | null; nameKey: string | null; accountId: string | null; settings: string | null; secrets: string | null; now: number }, TelephonyConfigurationRow>(
        `UPDATE telephony_configurations SET
           name = COALESCE(@name, name), name_key = COALESCE(@nameKey, name_key), account_id = COALESCE(@accountId, account_id),
           settings = COALESCE(@settings, settings), secrets = COALESCE(@secrets, secrets), updated_at = @now
         WHERE organization_id = @org AND id = @id RETURNING *`),
      moveNumbers: db.prepare<[string, number, number, number]>(
        'UPDATE phone_numbers SET account_id = ?, updated_at = ? WHERE organization_id = ? AND telephony_configuration_id = ?'),
      deleteNumbers: db.prepare<[number, number]>('DELETE FROM phone_numbers WHERE organization_id = ? AND telephony_configuration_id = ?'),
      delete: db.prepare<[number, number]>('DELETE FROM telephony_configurations WHERE organization_id = ? AND id = ?'),
      recordCheck: db.prepare<[number, string, number, number, number], TelephonyConfigurationRow>(
        `UPDATE telephony_configurations SET credentials_check_ok = ?, credentials_check_message = ?, credentials_checked_at = ?
         WHERE organization_id = ? AND id = ? RETURNING *`),
    };
  }

  async create(organizationId: number, input: NewTelephonyConfiguration): Promise<TelephonyConfiguration> {
    const now = toMs(input.now);
    const tx = this.db.transaction(() => {
      const row = this.q.insert.get(
        organizationId, input.name, nameKey(input.name), input.provider, 0, input.accountId, input.secretsKeyId,
        JSON.stringify(input.settings), JSON.stringify(input.secrets), now, now,
      )!;
      if (!input.isDefaultOutbound) return row;
      this.q.unsetDefault.run(now, organizationId, row.id);
      return this.q.setDefault.get(now, organizationId, row.id)!;
    });
    try {
      return telephonyConfigurationFromRow(tx.immediate());
    } catch (e) {
      if (isUniqueViolation(e, 'name_key')) throw nameTaken();
      throw e;
    }
  }

  async get(organizationId: number, id: number): Promise<TelephonyConfiguration | null> {
    const r = this.q.get.get(organizationId, id);
    return r ? telephonyConfigurationFromRow(r) : null;
  }

  async list(organizationId: number): Promise<TelephonyConfiguration[]> {
    return this.q.list.all(organizationId).map(telephonyConfigurationFromRow);
  }

  async update(organizationId: number, id: number, patch: TelephonyConfigurationPatch): Promise<TelephonyConfiguration | null> {
    const now = toMs(patch.now);
    const tx = this.db.transaction(() => {
      const before = this.q.get.get(organizationId, id);
      if (!before) return null;
      const row = this.q.update.get({
        org: organizationId, id, now,
        name: patch.name ?? null, nameKey: patch.name !== undefined ? nameKey(patch.name) : null,
        accountId: patch.accountId ?? null,
        settings: patch.settings ? JSON.stringify(patch.settings) : null,
        secrets: patch.secrets ? JSON.stringify(patch.secrets) : null,
      })!;
      if (patch.accountId !== undefined && patch.accountId !== before.account_id) this.q.moveNumbers.run(patch.accountId, now, organizationId, id);
      return row;
    });
    try {
      const row = tx.immediate();
      return row ? telephonyConfigurationFromRow(row) : null;
    } catch (e) {
      if (isUniqueViolation(e, 'name_key')) throw nameTaken();
      if (isUniqueViolation(e, 'phone_numbers')) throw numberConflict();
      throw e;
    }
  }

  async recordCredentialsCheck(organizationId: number, id: number, check: CredentialsCheck): Promise<TelephonyConfiguration | null> {
    const r = this.q.recordCheck.get(check.ok ? 1 : 0, check.message, toMs(check.checkedAt), organizationId, id);
    return r ? telephonyConfigurationFromRow(r) : null;
  }

  async delete(organizationId: number, id: number): Promise<boolean> {
    const tx = this.db.transaction(() => {
      this.q.deleteNumbers.run(organizationId, id);
      return this.q.delete.run(organizationId, id).changes > 0;
    });
    return tx.immediate();
  }

  async setDefaultOutbound(organizationId: number, id: number, now: Date): Promise<TelephonyConfiguration | null> {
    const tx = this.db.transaction(() => {
      if (!this.q.get.get(organizationId, id)) return null;
      this.q.unsetDefault.run(toMs(now), organizationId, id);
      return this.q.setDefault.get(toMs(now), organizationId, id)!;
    });
    const row = tx.immediate();
    return row ? telephonyConfigurationFromRow(row) : null;
  }

  async getDefaultOutbound(organizationId: number): Promise<TelephonyConfiguration | null> {
    const r = this.q.getDefault.get(organizationId);
    return r ? telephonyConfigurationFromRow(r) : null;
  }

  async findForProviderEvent(id: number): Promise<TelephonyConfiguration | null> {
    const r = this.q.byId.get(id);
    return r ? telephonyConfigurationFromRow(r) : null;
  }

  async listByProvider(provider: string): Promise<TelephonyConfiguration[]> {
    return this.q.byProvider.all(provider).map(telephonyConfigurationFromRow);
  }
}
