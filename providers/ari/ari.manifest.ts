import type { MediaDeclaration, ProviderManifest } from '../../core/telephony/provider-manifest.js';
import { MULAW_8K } from '../../core/voice/audio-format.js';

/** The default dial string: the called number as a PJSIP endpoint/URI. Most setups add their trunk: `PJSIP/{number}@my-trunk`. */
export const DEFAULT_DIAL_TEMPLATE = 'PJSIP/{number}';

/**
 * Asterisk chan_websocket (ARI `externalMedia` with transport `websocket`, bridged with the answered caller by
 * ari-media-bridge.ts when `ws_client_name` is set): binary μ-law frames, text control messages (`MARK_MEDIA` →
 * `MEDIA_MARK_PROCESSED`, `FLUSH_MEDIA`, `HANGUP`). Hang-up is `close`: `HANGUP` ends the media channel, and the
 * provider then hangs the caller's channel up through ARI.
 */
export const ariMedia: MediaDeclaration = { transport: 'websocket', inFormat: MULAW_8K, outFormat: MULAW_8K, marks: 'native', clear: 'native', hangUp: 'close' };

/**
 * Asterisk REST Interface (API.md section 5). The ARI user is the application name: ari.conf holds a user
 * named `app_name` with password `app_password`, and the dialplan sends calls to `Stasis(app_name)`.
 * `dial_template` (beyond API.md) says how an outbound call's number becomes an Asterisk dial string.
 */
export const ariManifest: ProviderManifest = {
  id: 'ari',
  displayName: 'Asterisk (ARI)',
  docsUrl: 'https://docs.asterisk.org/Configuration/Interfaces/Asterisk-REST-Interface-ARI/',
  mediaTransport: 'ari',
  /** It can hand a live call over (docs/voice.md "Transfers"). */
  capabilities: { transfer: true },
  media: ariMedia,
  fields: [
    {
      name: 'ari_endpoint',
      label: 'ARI endpoint',
      type: 'url',
      required: true,
      sensitive: false,
      description: "Base URL of Asterisk's HTTP server (http.conf), e.g. https://pbx.example.com:8089. Callplane connects to it.",
      placeholder: 'https://pbx.example.com:8089',
      constraints: { pattern: '^[hH][tT][tT][pP][sS]?://', maxLength: 2048 },
    },
    {
      name: 'app_name',
      label: 'Stasis application',
      type: 'string',
      required: true,
      sensitive: false,
      description: 'The Stasis application name, also the ARI user name in ari.conf.',
      placeholder: 'callplane',
      constraints: { pattern: '^[A-Za-z0-9_.-]{1,64}$' },
    },
    {
      name: 'app_password',
      label: 'ARI password',
      type: 'password',
      required: true,
      sensitive: true,
      description: 'The password of that ARI user (ari.conf).',
      placeholder: 'ARI password',
      constraints: { minLength: 1 },
    },
    {
      name: 'ws_client_name',
      label: 'WebSocket client name',
      type: 'string',
      required: false,
      sensitive: false,
      description: 'Name of the websocket_client.conf connection Asterisk uses to stream call media to Callplane (chan_websocket, Asterisk 20.16/21.11/22.6+). Empty: calls carry no media.',
      placeholder: 'callplane-media',
      default: '',
      constraints: { maxLength: 128 },
    },
    {
      name: 'dial_template',
      label: 'Dial template',
      type: 'string',
      required: false,
      sensitive: false,
      description: 'How an outbound number becomes a dial string; {number} is replaced by the called number, e.g. PJSIP/{number}@my-trunk.',
      placeholder: 'PJSIP/{number}@my-trunk',
      default: DEFAULT_DIAL_TEMPLATE,
      constraints: { pattern: '^[A-Za-z0-9_-]+/[^,&|\\s]*\\{number\\}[^,&|\\s]*$', maxLength: 256 },
    },
  ],
};
