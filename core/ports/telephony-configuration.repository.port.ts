import type { CredentialsCheck, TelephonyConfiguration } from '../telephony/telephony-configuration.js';

/**
 * A configuration to store: every field of `TelephonyConfiguration` but the ones the store assigns
 * (`credentialsCheck` starts null: it is recorded with `recordCredentialsCheck` once the provider answered).
 */
export type NewTelephonyConfiguration = Omit<TelephonyConfiguration, 'id' | 'organizationId' | 'createdAt' | 'updatedAt' | 'credentialsCheck'> & { now: Date };

export interface TelephonyConfigurationPatch {
  name?: string;
  /** Given together with settings/secrets when the credentials change. */
  accountId?: string;
  settings?: Record<string, unknown>;
  secrets?: Record<string, string>;
  now: Date;
}

/** Telephony configurations. Every method is scoped by organization unless its doc says otherwise. */
export const TelephonyConfigurationRepository = Symbol.for('callplane.TelephonyConfigurationRepository');
export interface TelephonyConfigurationRepository {
  /**
   * Stores a configuration. With `isDefaultOutbound`, the organization's previous default is unset in the
   * same atomic step. Throws `ConflictError('telephony_configuration_name_taken')` when the organization
   * already has the name (case-insensitively). Not idempotent.
   */
  create(organizationId: number, input: NewTelephonyConfiguration): Promise<TelephonyConfiguration>;
  /** The configuration, or null when absent or in another organization. */
  get(organizationId: number, id: number): Promise<TelephonyConfiguration | null>;
  /** The organization's configurations, oldest first (created_at, id). */
  list(organizationId: number): Promise<TelephonyConfiguration[]>;
  /**
   * Changes the given fields. A new `accountId` moves the configuration's phone numbers to it in the same
   * atomic step. Returns null when absent. Throws `ConflictError('telephony_configuration_name_taken')` on a
   * taken name and `ConflictError('phone_number_conflict')` when a moved number collides with another
   * organization's (provider, account id, address). Idempotent.
   */
  update(organizationId: number, id: number, patch: TelephonyConfigurationPatch): Promise<TelephonyConfiguration | null>;
  /**
   * Stores what the provider said of the configuration's credentials (replacing any earlier check; `updatedAt`
   * is left alone: a check is not a change of the configuration). Returns the configuration, or null when
   * absent or in another organization. Idempotent.
   */
  recordCredentialsCheck(organizationId: number, id: number, check: CredentialsCheck): Promise<TelephonyConfiguration | null>;
  /** Deletes the configuration and its phone numbers at once. False when absent. Idempotent. */
  delete(organizationId: number, id: number): Promise<boolean>;
  /** Makes it the organization's only default for outbound calls, atomically. Null when absent. Idempotent. */
  setDefaultOutbound(organizationId: number, id: number, now: Date): Promise<TelephonyConfiguration | null>;
  /** The organization's default outbound configuration, or null. */
  getDefaultOutbound(organizationId: number): Promise<TelephonyConfiguration | null>;
  /**
   * The configuration with this id in any organization, or null. Not tenant-scoped on purpose: provider
   * webhooks and events (no API credentials) find the configuration whose credentials verify them. Never
   * use it for a user-facing read.
   */
  findForProviderEvent(id: number): Promise<TelephonyConfiguration | null>;
  /** Every configuration of `provider` across organizations (persistent provider connections at start). Not tenant-scoped. */
  listByProvider(provider: string): Promise<TelephonyConfiguration[]>;
}
