import { describe, expect, it } from '@jest/globals';
import { canTransfer } from '../core/telephony/provider-manifest.js';
import { openaiManifest } from '../providers/openai/openai.manifest.js';
import { ariManifest } from '../providers/ari/ari.manifest.js';
import { plivoManifest } from '../providers/plivo/plivo.manifest.js';
import { simulatorManifest } from '../providers/simulator/simulator.manifest.js';
import { telnyxManifest } from '../providers/telnyx/telnyx.manifest.js';
import { twilioManifest } from '../providers/twilio/twilio.manifest.js';
import { vonageManifest } from '../providers/vonage/vonage.manifest.js';
import { validateProviderManifest } from './sdk.js';

describe('manifest capabilities (docs/voice.md "Transfers")', () => {
  it('every built-in carrier declares transfer, and the schema accepts it', () => {
    for (const m of [twilioManifest, telnyxManifest, plivoManifest, vonageManifest, ariManifest, simulatorManifest]) {
      expect({ id: m.id, transfer: canTransfer(m), problems: validateProviderManifest(m) }).toEqual({ id: m.id, transfer: true, problems: [] });
    }
  });

  it('refuses unknown capabilities, non-boolean values and capabilities on a model provider', () => {
    expect(validateProviderManifest({ ...twilioManifest, capabilities: { teleport: true } }).join('\n')).toMatch(/capabilities/);
    expect(validateProviderManifest({ ...twilioManifest, capabilities: { transfer: 'yes' } }).join('\n')).toMatch(/capabilities\.transfer/);
    expect(validateProviderManifest({ ...openaiManifest, capabilities: { transfer: true } })).toContain('manifest.capabilities: a model provider has no call control');
    expect(canTransfer({})).toBe(false);
  });
});
