import type { AddressType } from './phone-address-normalizer.port.js';
import type { PhoneNumber } from '../telephony/phone-number.js';

/** A number to store: every field of `PhoneNumber` but the ones the store assigns. */
export type NewPhoneNumber = Omit<PhoneNumber, 'id' | 'organizationId' | 'createdAt' | 'updatedAt' | 'extension'> & {
  now: Date;
  /** Null when omitted. */
  extension?: string | null;
};

export interface PhoneNumberPatch {
  label?: string | null;
  countryCode?: string | null;
  addressNormalized?: string;
  addressType?: AddressType;
  extension?: string | null;
  isActive?: boolean;
  extraMetadata?: Record<string, unknown>;
  inboundWorkflowId?: number | null;
  now: Date;
}

/**
 * Phone numbers of telephony configurations. Every method is scoped by organization (and configuration)
 * unless its doc says otherwise.
 *
 * Uniqueness, enforced by the store: one `addressNormalized` per organization
 * (`ConflictError('phone_number_exists')`), one (provider, accountId, addressNormalized) across organizations
 * (`ConflictError('phone_number_conflict')`; `phone_number_exists` wins when both apply), at most one
 * `isDefaultCallerId` per configuration.
 */
export const PhoneNumberRepository = Symbol.for('callplane.PhoneNumberRepository');
export interface PhoneNumberRepository {
  /** Stores a number; with `isDefaultCallerId` the configuration's previous default is unset atomically. Throws the conflicts above. Not idempotent. */
  create(organizationId: number, input: NewPhoneNumber): Promise<PhoneNumber>;
  /** The number, or null when absent, under another configuration or in another organization. */
  get(organizationId: number, configurationId: number, id: number): Promise<PhoneNumber | null>;
  /** The configuration's numbers, oldest first. */
  list(organizationId: number, configurationId: number): Promise<PhoneNumber[]>;
  /** Changes the given fields. Null when absent. Throws the conflicts above when `addressNormalized` changes. Idempotent. */
  update(organizationId: number, configurationId: number, id: number, patch: PhoneNumberPatch): Promise<PhoneNumber | null>;
  /** False when absent. Idempotent. */
  delete(organizationId: number, configurationId: number, id: number): Promise<boolean>;
  /** Makes it the configuration's only default caller id, atomically. Null when absent. Idempotent. */
  setDefaultCaller(organizationId: number, configurationId: number, id: number, now: Date): Promise<PhoneNumber | null>;
  /** The configuration's default caller id, or null. */
  getDefaultCaller(organizationId: number, configurationId: number): Promise<PhoneNumber | null>;
  /** Number count per configuration id of the organization (configurations without numbers are absent). */
  countByConfiguration(organizationId: number): Promise<Map<number, number>>;
  /**
   * The number an inbound call is for, in any organization, or null. Not tenant-scoped on purpose: inbound
   * dispatch is keyed on (provider, account id, normalized address), and this is how a call finds its tenant.
   */
  findForInbound(provider: string, accountId: string, addressNormalized: string): Promise<PhoneNumber | null>;
}
