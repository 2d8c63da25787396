import type { LanguageModel } from './language-model.port.js';

/**
 * Builds the chat model of an organization's AI service (API.md 10) for whoever drives the conversation
 * engine (chats, the voice session). Implemented by the plugin host: it decrypts the service's credentials and
 * calls its provider plugin's `createLanguageModel`, giving it the SSRF-checked fetch.
 */
export const LanguageModelFactory = Symbol.for('callplane.LanguageModelFactory');
export interface LanguageModelFactory {
  /**
   * The `LanguageModel` of service `serviceId` of the organization; no request is made until it is used. The
   * same instance may come back while the service's stored credentials are unchanged (a model serves
   * concurrent requests); a changed service gets a new one.
   * Throws `NotFoundError('ai_service_not_found')` when the service is absent or in another organization,
   * `InputError('ai_service_kind_mismatch')` when its provider offers no `llm`, and
   * `InputError('provider_not_registered')` when its plugin is no longer loaded. Idempotent (reads only).
   */
  forService(organizationId: number, serviceId: number): Promise<LanguageModel>;
}
