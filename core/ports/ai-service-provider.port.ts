import type { ProviderManifest } from '../telephony/provider-manifest.js';
import type { LanguageModel } from './language-model.port.js';
import type { SpeechToText } from './speech-to-text.port.js';
import type { TextToSpeech } from './text-to-speech.port.js';
import type { ProviderConfig } from './telephony-provider.port.js';

/** What an AI provider plugin gets to build a client: the host's network access, nothing else. */
export interface AiProviderDeps {
  /**
   * The only way the plugin reaches the network: the host's SSRF-checked fetch (resolved addresses checked
   * against the private-network setting, cloud metadata always refused, redirects never followed).
   */
  fetch: typeof fetch;
}

/** A connection the host's network policy allowed (see `SpeechProviderDeps.checkConnect`). */
export interface ConnectPermit {
  /**
   * node's `LookupFunction` answering only the addresses that were checked: pass it as `lookup` to the
   * socket (`new WebSocket(url, { lookup })`) so the connection goes where the check looked (no DNS rebinding).
   */
  lookup: (...args: never[]) => void;
}

/** What a speech client (stt, tts) gets: the policy fetch, and the same policy for WebSocket URLs. */
export interface SpeechProviderDeps extends AiProviderDeps {
  /**
   * Checks a URL the plugin connects to without `fetch` (a `ws:`/`wss:` URL) against the outbound network
   * policy right before connecting: scheme, host, every resolved address. Throws `NetworkPolicyError`.
   */
  checkConnect(url: string): Promise<ConnectPermit>;
}

/**
 * A model-provider plugin (API.md 10): the same framework as carriers (`defineAiProviderPlugin` in
 * `callplane/plugins/sdk`), its manifest declaring kinds among `llm`, `stt`, `tts`. A hook per kind builds a
 * client from a service's decrypted config: `createLanguageModel` (llm), `createSpeechToText` (stt), `createTextToSpeech` (tts).
 */
export interface AiProviderPlugin {
  manifest: ProviderManifest;
  /** Extra checks beyond the manifest schema (the SSRF shape check of `base_url`); issues as [field, message]. Pure. */
  validateConfig?(config: ProviderConfig, context: { allowPrivateNetwork: boolean }): Array<[string, string]>;
  /** For kind `llm`: a chat model client on `config` (the validated, decrypted fields). Must not do I/O itself. */
  createLanguageModel?(config: ProviderConfig, deps: AiProviderDeps): LanguageModel;
  /** For kind `stt`: a speech recognizer on `config`. Must not do I/O itself (streams connect on `open`). */
  createSpeechToText?(config: ProviderConfig, deps: SpeechProviderDeps): SpeechToText;
  /** For kind `tts`: a speech synthesizer on `config`. Must not do I/O itself. */
  createTextToSpeech?(config: ProviderConfig, deps: SpeechProviderDeps): TextToSpeech;
}
