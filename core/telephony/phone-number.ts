import type { AddressType } from '../ports/phone-address-normalizer.port.js';

/** A number (or SIP address) under a telephony configuration (spec 2.5, API.md section 5). */
export interface PhoneNumber {
  id: number;
  organizationId: number;
  telephonyConfigurationId: number;
  /** Copied from the configuration: with `accountId` and `addressNormalized` unique across organizations. */
  provider: string;
  accountId: string;
  /** As supplied, verbatim; immutable. */
  address: string;
  addressNormalized: string;
  addressType: AddressType;
  /** The extension of a `pstn` address written with one (`ext. 1234`, `;ext=1234`): digits, dialed after connecting; else null. */
  extension: string | null;
  countryCode: string | null;
  label: string | null;
  isActive: boolean;
  isDefaultCallerId: boolean;
  extraMetadata: Record<string, unknown>;
  inboundWorkflowId: number | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A number as the API returns it. */
export interface PhoneNumberView {
  number: PhoneNumber;
  inboundWorkflowName: string | null;
  /** Present whenever the inbound binding was pushed to the provider by this operation. */
  providerSync?: { ok: boolean; message: string };
}
