import type { SpeechToText } from './speech-to-text.port.js';
import type { TextToSpeech } from './text-to-speech.port.js';

/**
 * Builds the speech clients of an organization's AI services (API.md 10, workflow_configurations `stt` and
 * `tts`) for the voice session. Implemented by the plugin host: it decrypts the service's credentials and calls
 * its provider plugin's `createSpeechToText` / `createTextToSpeech`, giving it the SSRF-checked fetch and
 * WebSocket check. The counterpart of `LanguageModelFactory`.
 */
export const SpeechServices = Symbol.for('callplane.SpeechServices');
export interface SpeechServices {
  /**
   * A new `SpeechToText` on service `serviceId` of the organization; nothing connects until `open`.
   * Throws `NotFoundError('ai_service_not_found')` when the service is absent or in another organization,
   * `InputError('ai_service_kind_mismatch')` when its provider offers no `stt`, and
   * `InputError('provider_not_registered')` when its plugin is no longer loaded. Idempotent (reads only).
   */
  stt(organizationId: number, serviceId: number): Promise<SpeechToText>;
  /** The same for `tts`: a new `TextToSpeech`; nothing connects until `synthesize`. Same errors, for kind `tts`. */
  tts(organizationId: number, serviceId: number): Promise<TextToSpeech>;
}
