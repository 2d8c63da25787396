import type { ValidationIssue } from '../errors.js';
import type { AiProviderPlugin } from './ai-service-provider.port.js';
import type { ProviderConfig } from './telephony-provider.port.js';

/** The registered AI provider plugins as core sees them (the provider registry implements it). */
export const AiProviderCatalog = Symbol.for('callplane.AiProviderCatalog');
export interface AiProviderCatalog {
  /** Registered AI provider ids, in registration order. */
  ids(): string[];
  /** The plugin, or null when no AI provider has this id (carriers are not AI providers). */
  get(provider: string): AiProviderPlugin | null;
  /**
   * Validates a complete `config` (with `provider`) against the manifest's schema and the plugin's
   * `validateConfig` hook. Returns the clean config (defaults filled, `provider` and undeclared fields
   * dropped, nulls removed); issue `loc`s are relative to the config object. Pure; never throws.
   */
  validateConfig(config: Record<string, unknown>): { ok: true; config: ProviderConfig } | { ok: false; issues: ValidationIssue[] };
}
