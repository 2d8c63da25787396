import { checkUrlShape, configString, defineAiProviderPlugin } from '../../plugins/sdk.js';
import { ELEVENLABS_DEFAULT_BASE_URL, elevenlabsManifest } from './elevenlabs.manifest.js';
import { ElevenLabsTextToSpeech } from './elevenlabs.client.js';

/**
 * ElevenLabs (API.md 10): tts. The streaming client comes with the voice pipeline; today the plugin stores
 * and checks the account (`base_url` through the SSRF policy's shape check, WebSocket schemes).
 */
export default defineAiProviderPlugin({
  manifest: elevenlabsManifest,
  validateConfig: (config, context) =>
    checkUrlShape(configString(config.base_url) || ELEVENLABS_DEFAULT_BASE_URL, {
      allowPrivateNetwork: context.allowPrivateNetwork, field: 'base_url', protocols: ['wss:', 'ws:'],
    }),
  createTextToSpeech: (config, deps) => new ElevenLabsTextToSpeech({
    apiKey: configString(config.api_key), baseUrl: configString(config.base_url) || ELEVENLABS_DEFAULT_BASE_URL, checkConnect: deps.checkConnect,
  }),
});
