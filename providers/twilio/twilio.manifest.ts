import type { MediaDeclaration, ProviderManifest } from '../../core/telephony/provider-manifest.js';
import { MULAW_8K } from '../../core/voice/audio-format.js';

/** Twilio Media Streams (`<Connect><Stream>`): base64 μ-law 8 kHz both ways, marks echoed when played, `clear`; closing the stream ends the call (nothing follows the `<Connect>`). */
export const twilioMedia: MediaDeclaration = { transport: 'websocket', inFormat: MULAW_8K, outFormat: MULAW_8K, marks: 'native', clear: 'native', hangUp: 'close' };

/** Twilio Programmable Voice (API.md section 5): the account SID and its auth token. */
export const twilioManifest: ProviderManifest = {
  id: 'twilio',
  displayName: 'Twilio',
  docsUrl: 'https://www.twilio.com/docs/voice',
  mediaTransport: 'websocket',
  /** It can hand a live call over (docs/voice.md "Transfers"). */
  capabilities: { transfer: true },
  media: twilioMedia,
  fields: [
    {
      name: 'account_sid',
      label: 'Account SID',
      type: 'string',
      required: true,
      sensitive: false,
      description: 'Your Twilio account SID (Console → Account info). Starts with AC.',
      placeholder: 'ACxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
      constraints: { pattern: '^AC[0-9a-fA-F]{32}$' },
    },
    {
      name: 'auth_token',
      label: 'Auth token',
      type: 'password',
      required: true,
      sensitive: true,
      description: 'The auth token of that account. Signs API requests and verifies Twilio webhooks (X-Twilio-Signature).',
      placeholder: 'your auth token',
      constraints: { minLength: 1 },
    },
  ],
};
