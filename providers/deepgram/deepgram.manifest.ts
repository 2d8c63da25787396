import type { ProviderManifest } from '../../core/telephony/provider-manifest.js';

export const DEEPGRAM_DEFAULT_BASE_URL = 'wss://api.deepgram.com';

/**
 * Deepgram (API.md 10): live transcription over its WebSocket (stt, deepgram-stt.client.ts) and Aura
 * text-to-speech (tts, deepgram-tts.client.ts).
 */
export const deepgramManifest: ProviderManifest = {
  id: 'deepgram',
  displayName: 'Deepgram',
  docsUrl: 'https://developers.deepgram.com/reference/speech-to-text/listen-streaming',
  mediaTransport: 'none',
  kinds: ['stt', 'tts'],
  fields: [
    {
      name: 'api_key',
      label: 'API key',
      type: 'password',
      required: true,
      sensitive: true,
      description: 'A Deepgram API key, sent as Authorization: Token.',
      placeholder: 'dg_…',
      constraints: { minLength: 1, maxLength: 512 },
    },
    {
      name: 'base_url',
      label: 'Base URL',
      type: 'url',
      schemes: ['wss', 'ws'],
      required: false,
      sensitive: false,
      description: 'The WebSocket API root (a self-hosted Deepgram server works). Private addresses only where CALLPLANE_ALLOW_PRIVATE_NETWORK allows.',
      placeholder: DEEPGRAM_DEFAULT_BASE_URL,
      default: DEEPGRAM_DEFAULT_BASE_URL,
      constraints: { maxLength: 2048 },
    },
  ],
};
