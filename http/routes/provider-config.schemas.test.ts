import { describe, expect, it } from '@jest/globals';
import { partialCredentialsSchema, providerMetadataSchema } from './provider-config.schemas.js';

describe('provider account schemas (telephony configurations and AI services alike)', () => {
  it('metadata: every provider has its name, docs and fields, plus the extra properties, all required', () => {
    const plain = providerMetadataSchema() as { properties: { providers: { items: { properties: Record<string, unknown>; required: string[] } } } };
    expect(plain.properties.providers.items.required).toEqual(['provider', 'display_name', 'docs_url', 'fields']);
    const withKinds = providerMetadataSchema({ kinds: { type: 'array' } }) as typeof plain;
    expect(withKinds.properties.providers.items.required).toEqual(['provider', 'display_name', 'docs_url', 'kinds', 'fields']);
    expect(Object.keys(withKinds.properties.providers.items.properties)).toEqual(['provider', 'display_name', 'docs_url', 'kinds', 'fields']);
    // one field schema for both kinds of account
    expect(withKinds.properties.providers.items.properties.fields).toEqual(plain.properties.providers.items.properties.fields);
  });

  it('a partial config names where its fields are listed and offers the provider ids as examples', () => {
    const s = partialCredentialsSchema('/organizations/ai-services/metadata', ['openai', 'deepgram']) as { description: string; properties: { provider: unknown }; additionalProperties: boolean };
    expect(s.description).toMatch(/GET \/organizations\/ai-services\/metadata\.$/);
    expect(s.description).toContain('keeps the stored secret');
    expect(s.properties.provider).toEqual({ type: 'string', examples: ['openai', 'deepgram'] });
    expect(s.additionalProperties).toBe(true);
  });
});
