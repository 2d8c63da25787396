import type { ProviderManifest } from '../../core/telephony/provider-manifest.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * OpenAI and every OpenAI-compatible server (API.md 10): chat completions with streaming and tools (llm);
 * `/audio/transcriptions` (stt) and `/audio/speech` (tts) in openai-speech.client.ts. `base_url` points at
 * vLLM, Ollama, llama.cpp, Groq, Together...; a local server needs no key.
 */
export const openaiManifest: ProviderManifest = {
  id: 'openai',
  displayName: 'OpenAI (or any OpenAI-compatible server)',
  docsUrl: 'https://platform.openai.com/docs/api-reference/chat',
  mediaTransport: 'none',
  kinds: ['llm', 'stt', 'tts'],
  fields: [
    {
      name: 'api_key',
      label: 'API key',
      type: 'password',
      required: false,
      sensitive: true,
      description: 'Sent as Authorization: Bearer. Optional: local OpenAI-compatible servers (Ollama, llama.cpp) usually need none.',
      placeholder: 'sk-…',
      constraints: { maxLength: 512 },
    },
    {
      name: 'base_url',
      label: 'Base URL',
      type: 'url',
      required: false,
      sensitive: false,
      description: 'The API root the paths /chat/completions, /audio/... are appended to. Redirects are not followed; private addresses only where CALLPLANE_ALLOW_PRIVATE_NETWORK allows.',
      placeholder: OPENAI_DEFAULT_BASE_URL,
      default: OPENAI_DEFAULT_BASE_URL,
      constraints: { maxLength: 2048 },
    },
  ],
};
