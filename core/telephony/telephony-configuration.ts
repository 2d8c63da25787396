/**
 * A telephony configuration: one provider account of an organization (API.md section 5). Credentials are
 * kept split: non-sensitive fields in clear (`settings`), sensitive ones as SecretCipher ciphertexts
 * (`secrets`) whose associated data names the organization, `secretsKeyId` and the field, so a ciphertext
 * copied into another record or field does not decrypt.
 */
export interface TelephonyConfiguration {
  id: number;
  organizationId: number;
  name: string;
  provider: string;
  isDefaultOutbound: boolean;
  /** The account part of the (provider, account id, address) uniqueness tuple, derived by the plugin. */
  accountId: string;
  /** A random id chosen before the insert (the row id is not known yet) and bound into every secret's context. */
  secretsKeyId: string;
  /** Non-sensitive credential fields, in clear. */
  settings: Record<string, unknown>;
  /** Sensitive credential fields: field name → ciphertext of the JSON value. */
  secrets: Record<string, string>;
  /**
   * What the provider said of the current credentials when they were last stored (API.md section 5
   * `credentials_check`); null until checked. Only `ok: true` proves the account id is the caller's.
   */
  credentialsCheck: CredentialsCheck | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The result of asking the provider whether a configuration's credentials work (an authenticated read,
 * `TelephonyProvider.checkCredentials`), and when it was asked.
 */
export interface CredentialsCheck {
  ok: boolean;
  message: string;
  checkedAt: Date;
}

/**
 * True when the provider accepted the configuration's current credentials: the one fact that proves the
 * configuration's account id belongs to its organization (number claims, docs/security.md).
 */
export const credentialsProven = (c: Pick<TelephonyConfiguration, 'credentialsCheck'>): boolean => c.credentialsCheck?.ok === true;

/** What the API shows of a configuration: credentials masked, plus its number count. */
export interface TelephonyConfigurationView {
  configuration: TelephonyConfiguration;
  /** Every manifest field (null when unset), sensitive ones masked. */
  credentials: Record<string, unknown>;
  phoneNumberCount: number;
  /** Present when the change pushed the inbound bindings of its numbers to the provider again. */
  providerSync?: ProviderSync;
}

/** `provider_sync` of API.md section 5: the result of pushing an inbound binding to the provider. */
export interface ProviderSync {
  ok: boolean;
  message: string;
}

/** The URL a provider posts inbound calls of `provider` to (built by core/calls/call-urls.ts, the one URL builder). */
export { inboundWebhookUrl } from '../calls/call-urls.js';
