import type { OrganizationSettingsRepository } from '../../../core/ports/organization-settings.repository.port.js';
import { defaultOrganizationSettings, type OrganizationSettings } from '../../../core/usage/organization-settings.js';
import { fromMs, toMs, type SqliteDatabase } from './database.js';

export interface OrganizationSettingsRow {
  organization_id: number;
  price_per_minute_usd: number;
  updated_at: number;
}

export const organizationSettingsFromRow = (r: OrganizationSettingsRow): OrganizationSettings => ({
  organizationId: r.organization_id,
  pricePerMinuteUsd: r.price_per_minute_usd,
  updatedAt: fromMs(r.updated_at),
});

/** OrganizationSettingsRepository on SQLite: one row per organization, written with an upsert. */
export class SqliteOrganizationSettingsRepository implements OrganizationSettingsRepository {
  private readonly q;

  constructor(db: SqliteDatabase) {
    this.q = {
      get: db.prepare<[number], OrganizationSettingsRow>('SELECT * FROM organization_settings WHERE organization_id = ?'),
      upsert: db.prepare<{ organization_id: number; price: number | null; now: number }, OrganizationSettingsRow>(
        `INSERT INTO organization_settings (organization_id, price_per_minute_usd, updated_at)
         SELECT @organization_id, COALESCE(@price, 0), @now WHERE EXISTS (SELECT 1 FROM organizations WHERE id = @organization_id)
         ON CONFLICT (organization_id) DO UPDATE SET
           price_per_minute_usd = COALESCE(@price, price_per_minute_usd), updated_at = @now
         RETURNING *`),
    };
  }

  async get(organizationId: number): Promise<OrganizationSettings> {
    const r = this.q.get.get(organizationId);
    return r ? organizationSettingsFromRow(r) : defaultOrganizationSettings(organizationId);
  }

  async update(organizationId: number, patch: { pricePerMinuteUsd?: number }, now: Date): Promise<OrganizationSettings> {
    const r = this.q.upsert.get({ organization_id: organizationId, price: patch.pricePerMinuteUsd ?? null, now: toMs(now) });
    return r ? organizationSettingsFromRow(r) : defaultOrganizationSettings(organizationId);
  }
}
