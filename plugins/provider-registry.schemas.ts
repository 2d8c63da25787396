/**
 * Everything generated from provider manifests: the metadata response, the JSON Schema of each `config`
 * member (ajv validation and the OpenAPI `oneOf`, sensitive fields `writeOnly`), the union discriminated by
 * `provider`.
 */
import { kindsOf, type CredentialField, type ProviderManifest } from '../core/telephony/provider-manifest.js';
import type { JsonSchema } from '../http/routing/route.js';

/** The JSON type a field's value travels as, which its widget `type` alone does not tell (a number in a text box). */
export type FieldValueType = 'string' | 'integer' | 'boolean' | 'string_array';

/** The one rule: `valueType` first, then `boolean` and `string_array` widgets; every other widget holds a string. */
export function fieldValueType(f: CredentialField): FieldValueType {
  if (f.valueType === 'integer') return 'integer';
  if (f.type === 'boolean' || f.type === 'string_array') return f.type;
  return 'string';
}

/** API.md 2.4 / 4.5; `value_type` (docs/api.md) says what JSON type to send for the field. */
export function providerMetadata(manifest: ProviderManifest) {
  return {
    provider: manifest.id,
    display_name: manifest.displayName,
    docs_url: manifest.docsUrl,
    fields: manifest.fields.map((f) => ({
      name: f.name,
      label: f.label,
      type: f.type,
      value_type: fieldValueType(f),
      required: f.required,
      sensitive: f.sensitive,
      description: f.description,
      placeholder: f.placeholder,
    })),
  };
}

/** API.md 10: the AI metadata entry also names the provider's kinds. */
export function aiProviderMetadata(manifest: ProviderManifest) {
  const { fields, ...rest } = providerMetadata(manifest);
  return { ...rest, kinds: kindsOf(manifest), fields };
}

/** A case-insensitive `^(http|https)://host` pattern for the field's schemes and the words of its error message. */
function urlPattern(schemes: readonly string[]): { pattern: string; description: string } {
  const ci = (w: string) => [...w].map((c) => `[${c.toUpperCase()}${c}]`).join('');
  const alternatives = [...schemes].sort((a, b) => b.length - a.length).map(ci).join('|');
  const words = schemes.length === 1 ? schemes[0] : `${schemes.slice(0, -1).join(', ')} or ${schemes[schemes.length - 1]}`;
  return { pattern: `^(?:${alternatives})://[^\\s/]+`, description: `a URL with scheme ${words}` };
}

function valueSchema(f: CredentialField): JsonSchema {
  if (f.valueType === 'integer') return { type: 'integer' };
  switch (f.type) {
    case 'boolean':
      return { type: 'boolean' };
    case 'string_array':
      return { type: 'array', items: { type: 'string' } };
    case 'url':
      // the pattern sits in allOf so its error message reads "an http or https URL", not the field's description
      if (f.schemes) return { type: 'string', format: 'uri', allOf: [urlPattern(f.schemes)] };
      return { type: 'string', format: 'uri', allOf: [{ pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/]+', description: 'an http or https URL' }] };
    default:
      return { type: 'string' };
  }
}

/** The schema of one credential field. Optional fields also accept null (on PUT: unset the field). */
export function fieldSchema(f: CredentialField, options: { optional: boolean }): JsonSchema {
  const base = valueSchema(f);
  const s: JsonSchema = { ...base, ...(f.constraints ?? {}), title: f.label };
  if (f.description) s.description = f.description;
  if (f.placeholder) s.examples = [f.placeholder];
  if (f.default !== undefined) s.default = f.default;
  if (f.sensitive) s.writeOnly = true;
  if (options.optional) s.type = [base.type as string, 'null'];
  return s;
}

const requiredOnCreate = (f: CredentialField) => f.required && f.default === undefined;

/**
 * One member of the `config` union. `partial` (PUT): nothing but `provider` is required, no defaults are
 * filled. Unknown properties are stripped (additionalProperties false with ajv's removeAdditional).
 */
export function configMemberSchema(manifest: ProviderManifest, options: { partial?: boolean } = {}): JsonSchema {
  const carrier = kindsOf(manifest).includes('telephony');
  const properties: Record<string, JsonSchema> = {
    provider: { type: 'string', const: manifest.id, description: manifest.displayName },
  };
  for (const f of manifest.fields) {
    const s = fieldSchema(f, { optional: options.partial || !requiredOnCreate(f) });
    if (options.partial) delete s.default;
    properties[f.name] = s;
  }
  // carriers accept and ignore from_numbers (API.md 5); model providers have no numbers
  if (carrier) properties.from_numbers = { type: 'array', items: { type: 'string' }, description: 'Accepted and ignored: numbers are managed through the phone-number endpoints' };
  return {
    type: 'object',
    title: `${manifest.displayName} (${manifest.id})`,
    properties,
    required: ['provider', ...(options.partial ? [] : manifest.fields.filter(requiredOnCreate).map((f) => f.name))],
    additionalProperties: false,
  };
}

/** The `config` union discriminated by `provider` (oneOf + discriminator). `metadataPath` names where the fields are listed. */
export function configUnionSchema(
  manifests: readonly ProviderManifest[],
  options: { partial?: boolean; metadataPath?: string } = {},
): JsonSchema {
  return {
    type: 'object',
    description: options.partial
      ? 'Provider credentials, discriminated by `provider`. Only the sent fields change; a masked value equal to the stored mask keeps the stored secret; null unsets an optional field.'
      : `Provider credentials, a union discriminated by \`provider\`; the fields of each provider come from its manifest (GET ${options.metadataPath ?? '/organizations/telephony-providers/metadata'}).`,
    discriminator: { propertyName: 'provider' },
    required: ['provider'],
    oneOf: manifests.map((m) => configMemberSchema(m, options)),
  };
}
