import type { SecretCipher } from '../ports/crypto.port.js';
import type { ProviderConfig } from '../ports/telephony-provider.port.js';
import type { ProviderManifest } from './provider-manifest.js';
import type { TelephonyConfiguration } from './telephony-configuration.js';

/**
 * Splits a provider config into clear settings and encrypted secrets by the manifest's `sensitive` flags,
 * and joins them back. The cipher context is `telephony_configuration:<org>:<secretsKeyId>:<field>`:
 * `secretsKeyId` is random and chosen before the insert, so it works without knowing the row id (and on
 * stores that hand out ids at insert). Reading accepts a field from either side, so flipping `sensitive` on
 * a manifest field needs no data migration: the next write stores it on its new side.
 */
export class CredentialVault {
  constructor(private readonly cipher: SecretCipher) {}

  static context(organizationId: number, secretsKeyId: string, field: string): string {
    return `telephony_configuration:${organizationId}:${secretsKeyId}:${field}`;
  }

  /** Unset (null/undefined) fields and fields the manifest does not declare are left out. */
  seal(manifest: ProviderManifest, organizationId: number, secretsKeyId: string, config: ProviderConfig): { settings: Record<string, unknown>; secrets: Record<string, string> } {
    const settings: Record<string, unknown> = {};
    const secrets: Record<string, string> = {};
    for (const f of manifest.fields) {
      const v = config[f.name];
      if (v === undefined || v === null) continue;
      if (f.sensitive) secrets[f.name] = this.cipher.encrypt(JSON.stringify(v), CredentialVault.context(organizationId, secretsKeyId, f.name));
      else settings[f.name] = v;
    }
    return { settings, secrets };
  }

  /** The decrypted config (manifest fields only). Throws `Error` when a ciphertext was tampered with or moved. */
  open(manifest: ProviderManifest, c: Pick<TelephonyConfiguration, 'organizationId' | 'secretsKeyId' | 'settings' | 'secrets'>): ProviderConfig {
    const out: ProviderConfig = {};
    for (const f of manifest.fields) {
      const sealed = c.secrets[f.name];
      if (sealed !== undefined) out[f.name] = JSON.parse(this.cipher.decrypt(sealed, CredentialVault.context(c.organizationId, c.secretsKeyId, f.name)));
      else if (c.settings[f.name] !== undefined) out[f.name] = c.settings[f.name];
    }
    return out;
  }
}
