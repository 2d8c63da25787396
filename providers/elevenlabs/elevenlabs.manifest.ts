import type { ProviderManifest } from '../../core/telephony/provider-manifest.js';

export const ELEVENLABS_DEFAULT_BASE_URL = 'wss://api.elevenlabs.io';

/**
 * ElevenLabs (API.md 10): text-to-speech over the stream-input WebSocket (`output_format=ulaw_8000`,
 * elevenlabs.client.ts).
 */
export const elevenlabsManifest: ProviderManifest = {
  id: 'elevenlabs',
  displayName: 'ElevenLabs',
  docsUrl: 'https://elevenlabs.io/docs/api-reference/text-to-speech/v-1-text-to-speech-voice-id-stream-input',
  mediaTransport: 'none',
  kinds: ['tts'],
  fields: [
    {
      name: 'api_key',
      label: 'API key',
      type: 'password',
      required: true,
      sensitive: true,
      description: 'An ElevenLabs API key, sent as xi-api-key.',
      placeholder: 'sk_…',
      constraints: { minLength: 1, maxLength: 512 },
    },
    {
      name: 'base_url',
      label: 'Base URL',
      type: 'url',
      schemes: ['wss', 'ws'],
      required: false,
      sensitive: false,
      description: 'The WebSocket API root. Private addresses only where CALLPLANE_ALLOW_PRIVATE_NETWORK allows.',
      placeholder: ELEVENLABS_DEFAULT_BASE_URL,
      default: ELEVENLABS_DEFAULT_BASE_URL,
      constraints: { maxLength: 2048 },
    },
  ],
};
