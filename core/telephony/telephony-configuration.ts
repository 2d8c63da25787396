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
  createdAt: Date;
  updatedAt: Date;
}

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

/** The URL a provider posts inbound calls of `provider` to. */
export const inboundWebhookUrl = (publicUrl: string, provider: string) => `${publicUrl.replace(/\/+$/, '')}/api/v1/telephony/${provider}/inbound`;
