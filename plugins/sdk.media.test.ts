import { describe, expect, it } from '@jest/globals';
import { ariManifest } from '../providers/ari/ari.manifest.js';
import { plivoManifest } from '../providers/plivo/plivo.manifest.js';
import { simulatorManifest } from '../providers/simulator/simulator.manifest.js';
import { telnyxManifest } from '../providers/telnyx/telnyx.manifest.js';
import { twilioManifest } from '../providers/twilio/twilio.manifest.js';
import { vonageManifest } from '../providers/vonage/vonage.manifest.js';
import { validateProviderManifest } from './sdk.js';

describe('manifest media declarations', () => {
  it('every built-in carrier declares its media both ways, and the schema accepts it', () => {
    for (const m of [twilioManifest, telnyxManifest, plivoManifest, vonageManifest, ariManifest, simulatorManifest]) {
      expect({ id: m.id, problems: validateProviderManifest(m) }).toEqual({ id: m.id, problems: [] });
      expect(m.media).toMatchObject({ transport: 'websocket', marks: expect.stringMatching(/^(native|emulated)$/), clear: expect.stringMatching(/^(native|emulated)$/) });
    }
    expect(vonageManifest.media).toMatchObject({ inFormat: { encoding: 'l16', sampleRate: 16000 }, marks: 'emulated' });
    expect(telnyxManifest.media?.hangUp).toBe('rest');
  });

  it('refuses a malformed declaration, and media on a model provider', () => {
    const bad = { ...twilioManifest, media: { ...twilioManifest.media, inFormat: { encoding: 'opus', sampleRate: 8000 }, marks: 'sometimes' } };
    const problems = validateProviderManifest(bad).join('\n');
    expect(problems).toMatch(/manifest\.media\.inFormat\.encoding/);
    expect(problems).toMatch(/manifest\.media\.marks/);
    expect(validateProviderManifest({ ...twilioManifest, media: { transport: 'websocket' } }).join()).toMatch(/manifest\.media: must have required property/);
    const model = { id: 'acme', displayName: 'Acme', docsUrl: 'https://acme.example', fields: [], mediaTransport: 'none', kinds: ['llm'], media: twilioManifest.media };
    expect(validateProviderManifest(model)).toEqual(['manifest.media: a model provider carries no call media']);
  });
});
