import type { MediaDeclaration, ProviderManifest } from '../../core/telephony/provider-manifest.js';
import { L16_16K } from '../../core/voice/audio-format.js';

/** Vonage `connect` to a WebSocket: binary L16 16 kHz frames of 640 bytes (20 ms) both ways, `{"action":"clear"}`; no marks on the wire (emulated from the playout clock); closing the stream ends the call. */
export const vonageMedia: MediaDeclaration = { transport: 'websocket', inFormat: L16_16K, outFormat: L16_16K, marks: 'emulated', clear: 'native', hangUp: 'close' };

/** Vonage Voice API (API.md section 5): a Voice application with its private key, the account key and secrets. */
export const vonageManifest: ProviderManifest = {
  id: 'vonage',
  displayName: 'Vonage',
  docsUrl: 'https://developer.vonage.com/en/voice/voice-api/overview',
  mediaTransport: 'websocket',
  /** It can hand a live call over (docs/voice.md "Transfers"). */
  capabilities: { transfer: true },
  media: vonageMedia,
  fields: [
    {
      name: 'application_id',
      label: 'Application ID',
      type: 'string',
      required: true,
      sensitive: false,
      description: 'The id of the Vonage application with Voice capability (Dashboard → Applications). Calls are placed as this application.',
      placeholder: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab',
      constraints: { minLength: 1, maxLength: 64 },
    },
    {
      name: 'api_key',
      label: 'API key',
      type: 'string',
      required: true,
      sensitive: false,
      description: 'Your account\'s API key (Dashboard → API settings). An account identifier, shown in the Dashboard and carried in every signed webhook.',
      placeholder: 'a1b2c3d4',
      constraints: { minLength: 1, maxLength: 64 },
    },
    {
      name: 'api_secret',
      label: 'API secret',
      type: 'password',
      required: true,
      sensitive: true,
      description: 'The API secret of that key. Used for the Numbers and Applications APIs (linking numbers to the application).',
      placeholder: 'your API secret',
      constraints: { minLength: 1 },
    },
    {
      name: 'private_key',
      label: 'Private key (PEM)',
      type: 'textarea',
      required: true,
      sensitive: true,
      description: 'The application\'s private key as downloaded when the application was created (-----BEGIN PRIVATE KEY----- …). Signs the RS256 JWT of every Voice API request.',
      placeholder: '-----BEGIN PRIVATE KEY-----\n…\n-----END PRIVATE KEY-----',
      constraints: { minLength: 1, pattern: '-----BEGIN (RSA )?PRIVATE KEY-----' },
    },
    {
      name: 'signature_secret',
      label: 'Signature secret',
      type: 'password',
      required: true,
      sensitive: true,
      description: 'The account\'s signature secret (Dashboard → API settings). Verifies the HS256 JWT Vonage puts in the Authorization header of signed webhooks.',
      placeholder: 'your signature secret',
      constraints: { minLength: 1 },
    },
  ],
};
