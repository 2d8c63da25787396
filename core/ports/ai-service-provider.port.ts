import type { ProviderManifest } from '../telephony/provider-manifest.js';
import type { LanguageModel } from './language-model.port.js';
import type { ProviderConfig } from './telephony-provider.port.js';

/** What an AI provider plugin gets to build a client: the host's network access, nothing else. */
export interface AiProviderDeps {
  /**
   * The only way the plugin reaches the network: the host's SSRF-checked fetch (resolved addresses checked
   * against the private-network setting, cloud metadata always refused, redirects never followed).
   */
  fetch: typeof fetch;
}

/**
 * A model-provider plugin (API.md 10): the same framework as carriers (`defineAiProviderPlugin` in
 * `callplane/plugins/sdk`), its manifest declaring kinds among `llm`, `stt`, `tts`. A hook per kind builds a
 * client from a service's decrypted config; this issue ships the `llm` hook (stt/tts come with the voice pipeline).
 */
export interface AiProviderPlugin {
  manifest: ProviderManifest;
  /** Extra checks beyond the manifest schema (the SSRF shape check of `base_url`); issues as [field, message]. Pure. */
  validateConfig?(config: ProviderConfig, context: { allowPrivateNetwork: boolean }): Array<[string, string]>;
  /** For kind `llm`: a chat model client on `config` (the validated, decrypted fields). Must not do I/O itself. */
  createLanguageModel?(config: ProviderConfig, deps: AiProviderDeps): LanguageModel;
}
