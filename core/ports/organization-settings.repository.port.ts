import type { OrganizationSettings } from '../usage/organization-settings.js';

/** Per-organization settings (the usage price). Scoped by organization. */
export const OrganizationSettingsRepository = Symbol.for('callplane.OrganizationSettingsRepository');
export interface OrganizationSettingsRepository {
  /**
   * The organization's settings; the defaults (`defaultOrganizationSettings`: price 0, updatedAt null) when
   * they were never written or the organization does not exist. Never throws for a missing record. Read-only.
   */
  get(organizationId: number): Promise<OrganizationSettings>;
  /**
   * Writes the given fields (creating the record on first write) and returns the stored settings. Idempotent:
   * the same patch twice leaves the same values (updatedAt moves to `now`).
   */
  update(organizationId: number, patch: { pricePerMinuteUsd?: number }, now: Date): Promise<OrganizationSettings>;
}
