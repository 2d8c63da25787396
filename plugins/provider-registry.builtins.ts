import type { AiProviderPlugin } from '../core/ports/ai-service-provider.port.js';
import type { ProviderPlugin } from '../core/ports/telephony-provider.port.js';
import ari from '../providers/ari/index.js';
import deepgram from '../providers/deepgram/index.js';
import elevenlabs from '../providers/elevenlabs/index.js';
import openai from '../providers/openai/index.js';
import plivo from '../providers/plivo/index.js';
import simulator from '../providers/simulator/index.js';
import telnyx from '../providers/telnyx/index.js';
import twilio from '../providers/twilio/index.js';
import vonage from '../providers/vonage/index.js';

/** The carriers shipped with Callplane, in the order the telephony metadata endpoint lists them. */
export const BUILT_IN_TELEPHONY_PLUGINS: readonly ProviderPlugin[] = [ari, twilio, simulator, vonage, telnyx, plivo];

/** The model providers shipped with Callplane (API.md 10), in the order the AI metadata endpoint lists them. */
export const BUILT_IN_AI_PROVIDER_PLUGINS: readonly AiProviderPlugin[] = [openai, deepgram, elevenlabs];

/** Every built-in provider plugin: carriers first, then model providers. */
export const BUILT_IN_PROVIDER_PLUGINS: readonly (ProviderPlugin | AiProviderPlugin)[] = [...BUILT_IN_TELEPHONY_PLUGINS, ...BUILT_IN_AI_PROVIDER_PLUGINS];
