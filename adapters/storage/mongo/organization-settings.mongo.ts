import type { Db } from 'mongodb';
import type { OrganizationSettingsRepository } from '../../../core/ports/organization-settings.repository.port.js';
import { defaultOrganizationSettings, type OrganizationSettings } from '../../../core/usage/organization-settings.js';
import { Collections } from './mongo-schema.js';

/** The collection of per-organization settings: `_id` is the organization id (no other index needed). */
export const ORGANIZATION_SETTINGS_COLLECTION = 'organization_settings';

export interface OrganizationSettingsDocument {
  _id: number;
  pricePerMinuteUsd: number;
  updatedAt: Date;
}

export const organizationSettingsToDocument = (s: OrganizationSettings & { updatedAt: Date }): OrganizationSettingsDocument => ({
  _id: s.organizationId, pricePerMinuteUsd: s.pricePerMinuteUsd, updatedAt: new Date(s.updatedAt),
});

export const organizationSettingsFromDocument = (d: OrganizationSettingsDocument): OrganizationSettings => ({
  organizationId: d._id, pricePerMinuteUsd: d.pricePerMinuteUsd ?? 0, updatedAt: d.updatedAt ? new Date(d.updatedAt) : null,
});

/**
 * OrganizationSettingsRepository on MongoDB: one document per organization, written with one upsert (`$set` of
 * the given fields, `$setOnInsert` of the defaults of the others). Like SQLite's foreign key, nothing is written
 * for an organization that does not exist (organizations are never deleted, so checking first is enough).
 */
export class MongoOrganizationSettingsRepository implements OrganizationSettingsRepository {
  constructor(private readonly db: Db) {}

  private get collection() {
    return this.db.collection<OrganizationSettingsDocument>(ORGANIZATION_SETTINGS_COLLECTION);
  }

  async get(organizationId: number): Promise<OrganizationSettings> {
    const d = await this.collection.findOne({ _id: organizationId });
    return d ? organizationSettingsFromDocument(d) : defaultOrganizationSettings(organizationId);
  }

  async update(organizationId: number, patch: { pricePerMinuteUsd?: number }, now: Date): Promise<OrganizationSettings> {
    const org = await this.db.collection<{ _id: number }>(Collections.organizations).findOne({ _id: organizationId }, { projection: { _id: 1 } });
    if (!org) return defaultOrganizationSettings(organizationId);
    const set: Partial<OrganizationSettingsDocument> = { updatedAt: now };
    if (patch.pricePerMinuteUsd !== undefined) set.pricePerMinuteUsd = patch.pricePerMinuteUsd;
    const d = await this.collection.findOneAndUpdate(
      { _id: organizationId },
      { $set: set, ...(patch.pricePerMinuteUsd === undefined ? { $setOnInsert: { pricePerMinuteUsd: 0 } } : {}) },
      { upsert: true, returnDocument: 'after' },
    );
    return d ? organizationSettingsFromDocument(d) : defaultOrganizationSettings(organizationId);
  }
}
