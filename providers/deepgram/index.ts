import { checkUrlShape, configString, defineAiProviderPlugin } from '../../plugins/sdk.js';
import { DEEPGRAM_DEFAULT_BASE_URL, deepgramManifest } from './deepgram.manifest.js';
import { DeepgramSpeechToText } from './deepgram-stt.client.js';
import { DeepgramTextToSpeech } from './deepgram-tts.client.js';

const baseUrlOf = (config: Record<string, unknown>) => configString(config.base_url) || DEEPGRAM_DEFAULT_BASE_URL;

/**
 * Deepgram (API.md 10): stt and tts for talking calls; `base_url` passes the SSRF policy's shape check at save
 * (WebSocket schemes) and every connection is checked again when it opens.
 */
export default defineAiProviderPlugin({
  manifest: deepgramManifest,
  validateConfig: (config, context) =>
    checkUrlShape(configString(config.base_url) || DEEPGRAM_DEFAULT_BASE_URL, {
      allowPrivateNetwork: context.allowPrivateNetwork, field: 'base_url', protocols: ['wss:', 'ws:'],
    }),
  createSpeechToText: (config, deps) =>
    new DeepgramSpeechToText({ apiKey: configString(config.api_key), baseUrl: baseUrlOf(config), checkConnect: deps.checkConnect }),
  createTextToSpeech: (config, deps) => new DeepgramTextToSpeech({ apiKey: configString(config.api_key), baseUrl: baseUrlOf(config), fetch: deps.fetch }),
});
