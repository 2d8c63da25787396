/**
 * Whether a telephony configuration is in use by campaigns. The campaign storage implements it; until it
 * exists the composition root binds an implementation that answers 0 (nothing can use a configuration yet).
 */
export const TelephonyConfigurationUsage = Symbol.for('callplane.TelephonyConfigurationUsage');
export interface TelephonyConfigurationUsage {
  /** Campaigns of the organization in `draft`, `running` or `paused` that use the configuration; 0 when none. Never throws for an unknown id. */
  countActiveCampaignsUsingConfiguration(organizationId: number, configurationId: number): Promise<number>;
}
