import type { ProviderManifest } from '../../core/telephony/provider-manifest.js';

/** Twilio Programmable Voice (API.md section 5): the account SID and its auth token. */
export const twilioManifest: ProviderManifest = {
  id: 'twilio',
  displayName: 'Twilio',
  docsUrl: 'https://www.twilio.com/docs/voice',
  mediaTransport: 'websocket',
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
