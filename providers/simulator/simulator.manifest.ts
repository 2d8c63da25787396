import type { ProviderManifest } from '../../plugins/sdk.js';
import type { MediaDeclaration } from '../../core/telephony/provider-manifest.js';
import { MULAW_8K } from '../../core/voice/audio-format.js';
import { CALLER_SCRIPT_LIMITS } from '../../core/ports/simulated-callers.port.js';

/** The simulator's own framing for simulated callers (Twilio-shaped JSON, binary caller audio accepted): μ-law 8 kHz both ways, `clear`; marks emulated from the playout clock. */
export const simulatorMedia: MediaDeclaration = { transport: 'websocket', inFormat: MULAW_8K, outFormat: MULAW_8K, marks: 'emulated', clear: 'native', hangUp: 'close' };

/** API.md section 8. */
export const simulatorManifest: ProviderManifest = {
  id: 'simulator',
  displayName: 'Simulator (no real calls)',
  docsUrl: 'https://github.com/callplane/callplane/blob/main/docs/providers.md#the-simulator',
  mediaTransport: 'none',
  /** It can hand a live call over (docs/voice.md "Transfers"). */
  capabilities: { transfer: true },
  media: simulatorMedia,
  fields: [
    {
      name: 'account_id',
      label: 'Account id',
      type: 'string',
      required: false,
      sensitive: false,
      description: 'Names the simulated account; with the address it makes a number unique across organizations.',
      placeholder: 'simulator',
      default: 'simulator',
      constraints: { minLength: 1, maxLength: 128 },
    },
    {
      name: 'api_key',
      label: 'API key',
      type: 'password',
      required: false,
      sensitive: true,
      description: 'Optional. Webhooks posted to /telephony/simulator/... always need the organization\'s API credentials; when this is set, they must also carry it in X-Simulator-Key.',
      placeholder: 'sim_...',
      constraints: { maxLength: 256 },
    },
    {
      name: 'ring_ms',
      label: 'Ring time (ms)',
      type: 'string',
      valueType: 'integer',
      required: false,
      sensitive: false,
      description: 'How long a simulated call rings before its outcome (0 to 60000).',
      placeholder: '300',
      default: 300,
      constraints: { minimum: 0, maximum: 60000 },
    },
    {
      name: 'talk_ms',
      label: 'Talk time (ms)',
      type: 'string',
      valueType: 'integer',
      required: false,
      sensitive: false,
      description: 'How long an answered call lasts before it ends normally (0 to 600000).',
      placeholder: '1000',
      default: 1000,
      constraints: { minimum: 0, maximum: 600000 },
    },
    // API.md 13's `caller: {lines, persona?}` as two flat fields (docs/api.md "Deviations"): with either set, every
    // answered outbound call of this configuration brings that simulated caller (an inbound test call's own
    // `caller` replaces it)
    {
      name: 'caller_lines',
      label: 'Simulated caller: lines',
      type: 'string_array',
      required: false,
      sensitive: false,
      description: 'Optional. What a simulated caller says on each answered call, one line per turn, through the organization\'s TTS (at most 50 lines).',
      placeholder: 'Yes, this is Dana speaking.',
      constraints: { maxItems: CALLER_SCRIPT_LIMITS.maxLines, items: { type: 'string', minLength: 1, maxLength: CALLER_SCRIPT_LIMITS.maxLineLength, pattern: '\\S' } },
    },
    {
      name: 'caller_persona',
      label: 'Simulated caller: persona',
      type: 'textarea',
      required: false,
      sensitive: false,
      description: 'Optional. Who the simulated caller is once its lines run out; the organization\'s LLM plays it.',
      placeholder: 'You are Dana, a patient who wants to move her appointment to Friday.',
      constraints: { minLength: 1, maxLength: CALLER_SCRIPT_LIMITS.maxPersonaLength, pattern: '\\S' },
    },
  ],
};
