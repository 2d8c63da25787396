/** Per-organization settings (API.md section 9: the per-minute price the usage report charges). */
export interface OrganizationSettings {
  organizationId: number;
  /** US dollars per minute of call, ≥ 0; 0 until set. */
  pricePerMinuteUsd: number;
  /** When they were last written; null while they are the defaults. */
  updatedAt: Date | null;
}

export const defaultOrganizationSettings = (organizationId: number): OrganizationSettings => ({
  organizationId, pricePerMinuteUsd: 0, updatedAt: null,
});
