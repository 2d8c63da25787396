import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CredentialField } from '../core/telephony/provider-manifest.js';
import { startTestService, type TestService } from '../test/support/test-service.js';
import { ProviderRegistry } from './provider-registry.js';
import { configMemberSchema, fieldValueType } from './provider-registry.schemas.js';

const field = (type: CredentialField['type'], valueType?: 'integer'): CredentialField => ({
  name: 'f', label: 'F', type, required: false, sensitive: false, description: '', placeholder: '', ...(valueType ? { valueType } : {}),
});

/** The JSON type the config schema accepts for a field, in value_type's words. */
function schemaValueType(s: { type?: string | string[]; items?: { type?: string } }): string {
  const t = [s.type].flat().find((x) => x !== 'null');
  return t === 'array' && s.items?.type === 'string' ? 'string_array' : String(t);
}

describe('provider metadata value_type', () => {
  it('derives the JSON type of each widget, valueType first', () => {
    expect(fieldValueType(field('string', 'integer'))).toBe('integer');
    expect(fieldValueType(field('boolean'))).toBe('boolean');
    expect(fieldValueType(field('string_array'))).toBe('string_array');
    for (const t of ['string', 'password', 'url', 'textarea'] as const) expect([t, fieldValueType(field(t))]).toEqual([t, 'string']);
  });

  it('agrees with the config schema for every field of every built-in provider, telephony and AI', () => {
    const registry = ProviderRegistry.builtIn({ allowPrivateNetwork: false });
    const manifests = [...registry.list(), ...registry.ai.list()].map((p) => p.manifest);
    expect(manifests.length).toBeGreaterThan(5);
    for (const m of manifests) {
      const props = (configMemberSchema(m) as { properties: Record<string, { type?: string | string[]; items?: { type?: string } }> }).properties;
      for (const f of m.fields) expect([m.id, f.name, fieldValueType(f)]).toEqual([m.id, f.name, schemaValueType(props[f.name]!)]);
    }
  });

  describe('over HTTP', () => {
    let svc: TestService;
    let auth: { token: string };
    beforeAll(async () => {
      svc = await startTestService();
      auth = await svc.signup();
    });
    afterAll(() => svc.close());

    it('telephony metadata says the simulator\'s ring_ms and talk_ms are integers', async () => {
      const r = await svc.get('/organizations/telephony-providers/metadata', auth);
      const sim = r.body.providers.find((p: { provider: string }) => p.provider === 'simulator');
      const types = Object.fromEntries(sim.fields.map((f: { name: string; value_type: string }) => [f.name, f.value_type]));
      expect(types).toMatchObject({ account_id: 'string', api_key: 'string', ring_ms: 'integer', talk_ms: 'integer', caller_lines: 'string_array' });
      for (const p of r.body.providers) for (const f of p.fields) expect(['string', 'integer', 'boolean', 'string_array']).toContain(f.value_type);
    });

    it('AI metadata carries value_type on every field', async () => {
      const r = await svc.get('/organizations/ai-services/metadata', auth);
      const openai = r.body.providers.find((p: { provider: string }) => p.provider === 'openai');
      expect(openai.fields.map((f: { name: string; value_type: string }) => [f.name, f.value_type])).toEqual([['api_key', 'string'], ['base_url', 'string']]);
    });

    it('documents value_type in the OpenAPI document of both metadata responses', async () => {
      const doc = (await svc.get('/openapi.json')).body;
      for (const path of ['/api/v1/organizations/telephony-providers/metadata', '/api/v1/organizations/ai-services/metadata']) {
        const fields = doc.paths[path].get.responses['200'].content['application/json'].schema.properties.providers.items.properties.fields.items;
        expect([path, fields.properties.value_type.enum, fields.required]).toEqual([path, ['string', 'integer', 'boolean', 'string_array'], expect.arrayContaining(['value_type'])]);
      }
    });
  });
});
