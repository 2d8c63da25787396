import type { MediaDeclaration, ProviderManifest } from '../../core/telephony/provider-manifest.js';
import { MULAW_8K } from '../../core/voice/audio-format.js';

/** Telnyx media streaming with `stream_bidirectional_mode: rtp` (PCMU): base64 RTP payloads both ways, `mark` echoes, `clear`; the stream is a fork of the call, so hanging up goes through Call Control. */
export const telnyxMedia: MediaDeclaration = { transport: 'websocket', inFormat: MULAW_8K, outFormat: MULAW_8K, marks: 'native', clear: 'native', hangUp: 'rest' };

/** Telnyx Call Control (Voice API v2), API.md section 5: an API key, the Call Control application and its webhook key. */
export const telnyxManifest: ProviderManifest = {
  id: 'telnyx',
  displayName: 'Telnyx',
  docsUrl: 'https://developers.telnyx.com/docs/voice/programmable-voice/get-started',
  mediaTransport: 'websocket',
  /** It can hand a live call over (docs/voice.md "Transfers"). */
  capabilities: { transfer: true },
  media: telnyxMedia,
  fields: [
    {
      name: 'api_key',
      label: 'API key',
      type: 'password',
      required: true,
      sensitive: true,
      description: 'A Telnyx API v2 key (Mission Control Portal → Account settings → Keys & credentials). Sent as Authorization: Bearer.',
      placeholder: 'KEY0123456789ABCDEF…',
      constraints: { minLength: 1 },
    },
    {
      name: 'connection_id',
      label: 'Call Control application (connection) id',
      type: 'string',
      required: true,
      sensitive: false,
      description: 'The id of the Voice API / Call Control application that places the calls and owns the numbers Callplane answers.',
      placeholder: '1494404757140276705',
      constraints: { minLength: 1, maxLength: 64 },
    },
    {
      name: 'webhook_public_key',
      label: 'Webhook public key',
      type: 'string',
      required: true,
      sensitive: false,
      description:
        'Your account\'s public key for webhook signatures (Portal → Account settings → Keys & credentials → Public key), base64. ' +
        'Every webhook is checked with telnyx-signature-ed25519 and telnyx-timestamp against it.',
      placeholder: 'base64 Ed25519 public key (44 characters)',
      constraints: { minLength: 1, maxLength: 200 },
    },
  ],
};
