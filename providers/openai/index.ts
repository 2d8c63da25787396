import { checkUrlShape, configString, defineAiProviderPlugin } from '../../plugins/sdk.js';
import { createOpenAiLanguageModel } from './openai-language-model.js';
import { OpenAiSpeechToText, OpenAiTextToSpeech } from './openai-speech.client.js';
import { OPENAI_DEFAULT_BASE_URL, openaiManifest } from './openai.manifest.js';

const baseUrlOf = (config: Record<string, unknown>) => configString(config.base_url) || OPENAI_DEFAULT_BASE_URL;

/**
 * OpenAI and OpenAI-compatible servers (API.md 10). `base_url` passes the SSRF policy's shape check when the
 * service is saved; every request then goes through the host's policy fetch (addresses checked after DNS,
 * redirects refused).
 */
export default defineAiProviderPlugin({
  manifest: openaiManifest,
  validateConfig: (config, context) => checkUrlShape(baseUrlOf(config), { allowPrivateNetwork: context.allowPrivateNetwork, field: 'base_url' }),
  createLanguageModel: (config, deps) =>
    createOpenAiLanguageModel({ apiKey: configString(config.api_key) || undefined, baseUrl: baseUrlOf(config), fetch: deps.fetch }),
  createSpeechToText: (config, deps) => new OpenAiSpeechToText({ apiKey: configString(config.api_key) || undefined, baseUrl: baseUrlOf(config), fetch: deps.fetch }),
  createTextToSpeech: (config, deps) => new OpenAiTextToSpeech({ apiKey: configString(config.api_key) || undefined, baseUrl: baseUrlOf(config), fetch: deps.fetch }),
});
