import type { MediaDeclaration, ProviderManifest } from '../../core/telephony/provider-manifest.js';
import { MULAW_8K } from '../../core/voice/audio-format.js';

/** Plivo bidirectional `<Stream keepCallAlive>`: μ-law 8 kHz `media` in, `playAudio` out, `checkpoint` → `playedStream`, `clearAudio`; closing the stream ends the call. */
export const plivoMedia: MediaDeclaration = { transport: 'websocket', inFormat: MULAW_8K, outFormat: MULAW_8K, marks: 'native', clear: 'native', hangUp: 'close' };

/** Plivo Voice (API.md section 5): the account's Auth ID and Auth Token, and optionally the application its numbers use. */
export const plivoManifest: ProviderManifest = {
  id: 'plivo',
  displayName: 'Plivo',
  docsUrl: 'https://www.plivo.com/docs/voice/',
  mediaTransport: 'websocket',
  /** It can hand a live call over (docs/voice.md "Transfers"). */
  capabilities: { transfer: true },
  media: plivoMedia,
  fields: [
    {
      name: 'auth_id',
      label: 'Auth ID',
      type: 'string',
      required: true,
      sensitive: false,
      description: 'Your Plivo Auth ID (Console → Overview). It names the account in every API URL and is the account id of your numbers.',
      placeholder: 'MAXXXXXXXXXXXXXXXXXX',
      constraints: { minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9]+$' },
    },
    {
      name: 'auth_token',
      label: 'Auth Token',
      type: 'password',
      required: true,
      sensitive: true,
      description: 'Your Plivo Auth Token (Console → Overview). Authenticates API requests (Basic auth) and signs every webhook (X-Plivo-Signature-V3).',
      placeholder: 'Your Plivo Auth Token',
      constraints: { minLength: 1 },
    },
    {
      name: 'application_id',
      label: 'Application ID',
      type: 'string',
      required: false,
      sensitive: false,
      description:
        'The Plivo voice application (Console → Voice → Applications) that answers your numbers. When set, binding a number to a workflow ' +
        'links the number to it and points its answer URL at Callplane; without it, link numbers and set the answer URL by hand.',
      placeholder: '12345678901234567',
      constraints: { maxLength: 64, pattern: '^[0-9A-Za-z_-]*$' },
    },
  ],
};
