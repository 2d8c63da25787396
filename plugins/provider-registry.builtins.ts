import type { ProviderPlugin } from '../core/ports/telephony-provider.port.js';
import ari from '../providers/ari/index.js';
import plivo from '../providers/plivo/index.js';
import simulator from '../providers/simulator/index.js';
import telnyx from '../providers/telnyx/index.js';
import twilio from '../providers/twilio/index.js';
import vonage from '../providers/vonage/index.js';

/** The providers shipped with Callplane, in the order the metadata endpoint lists them. */
export const BUILT_IN_PROVIDER_PLUGINS: readonly ProviderPlugin[] = [ari, twilio, simulator, vonage, telnyx, plivo];
