/**
 * Schemas that telephony configurations (API.md 9) and AI services (API.md 10) share because both are accounts at
 * a provider described by its manifest: the metadata answer listing every provider's credential fields, and the
 * partial `config` of an update (masked values keep the stored secrets).
 */
import type { JsonSchema } from '../routing/route.js';
import { arr, bool, obj, str } from '../routing/schema-helpers.js';

/** One credential field of a provider's manifest, as the metadata routes describe it. */
const providerFieldSchema = obj({
  name: str(), label: str(), type: str({ enum: ['string', 'password', 'url', 'boolean', 'string_array', 'textarea'] }),
  value_type: str({ enum: ['string', 'integer', 'boolean', 'string_array'], description: 'the JSON type to send for the field' }),
  required: bool(), sensitive: bool(), description: str(), placeholder: str(),
}, ['name', 'label', 'type', 'value_type', 'required', 'sensitive', 'description', 'placeholder']);

/** `{providers: [...]}`: each provider's name, docs and fields, with `extra` (all required) before `fields`. */
export function providerMetadataSchema(extra: Record<string, JsonSchema> = {}): JsonSchema {
  return obj({
    providers: arr(obj(
      { provider: str(), display_name: str(), docs_url: str(), ...extra, fields: arr(providerFieldSchema) },
      ['provider', 'display_name', 'docs_url', ...Object.keys(extra), 'fields'],
    )),
  }, ['providers']);
}

/** The `config` of an update: partial credentials merged over the stored ones; `metadataPath` lists the fields. */
export function partialCredentialsSchema(metadataPath: string, providerIds: string[]): JsonSchema {
  return {
    type: 'object',
    description: 'Partial provider credentials: only the sent fields change (merged over the stored ones; null unsets an optional field). ' +
      'A sensitive value equal to the mask of the stored one keeps the stored secret. `provider` may be omitted; if sent it must be the stored one ' +
      `(else 400 \`provider_immutable\`). Fields per provider: see the create body and GET ${metadataPath}.`,
    properties: { provider: str({ examples: providerIds }) },
    additionalProperties: true,
  };
}
