import { checkUrlShape, configString, defineAiProviderPlugin } from '../../plugins/sdk.js';
import { ELEVENLABS_DEFAULT_BASE_URL, elevenlabsManifest } from './elevenlabs.manifest.js';
import { ElevenLabsTextToSpeech } from './elevenlabs.client.js';

/**
 * ElevenLabs (API.md 10): tts for talking calls; `base_url` passes the SSRF policy's shape check at save
 * (WebSocket schemes) and every connection is checked again when it opens.
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
