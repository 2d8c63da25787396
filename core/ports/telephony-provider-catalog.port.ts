import type { ValidationIssue } from '../errors.js';
import type { ProviderConfig, ProviderPlugin } from './telephony-provider.port.js';

/**
 * The registered telephony provider plugins, as core sees them (the provider registry implements it).
 */
export const TelephonyProviderCatalog = Symbol.for('callplane.TelephonyProviderCatalog');
export interface TelephonyProviderCatalog {
  /** Registered provider ids, in registration order. */
  ids(): string[];
  /** The plugin, or null when no plugin has this id. */
  get(provider: string): ProviderPlugin | null;
  /**
   * Validates a complete `config` (with `provider`) against the schema generated from the provider's manifest
   * and the plugin's own `validateConfig` hook. On success returns the clean config: defaults filled,
   * `provider`, `from_numbers` and undeclared fields dropped, null values removed. Issue `loc`s are relative
   * to the config object (`['ari_endpoint']`). Pure; never throws.
   */
  validateConfig(config: Record<string, unknown>): { ok: true; config: ProviderConfig } | { ok: false; issues: ValidationIssue[] };
}
