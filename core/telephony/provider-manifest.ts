/**
 * What a telephony provider plugin declares about itself. One manifest feeds the metadata endpoint, the
 * `config` validation schema and its OpenAPI member, masking, log redaction and account-id matching.
 */
export type CredentialFieldType = 'string' | 'password' | 'url' | 'boolean' | 'string_array' | 'textarea';

export interface CredentialField {
  name: string;
  label: string;
  type: CredentialFieldType;
  required: boolean;
  /** Masked on read, restored on write only on an exact mask match, encrypted at rest, redacted from logs. */
  sensitive: boolean;
  description: string;
  placeholder: string;
  /** Applied when the field is absent on create. */
  default?: string | boolean | number | string[];
  /** Extra JSON Schema constraints on the value (pattern, minimum, maximum, maxLength...). */
  constraints?: Record<string, unknown>;
  /** Numbers travel as integers (simulator ring_ms/talk_ms); metadata still reports `string` for them. */
  valueType?: 'integer';
}

export interface ProviderManifest {
  /** Lower-case identifier, the `provider` discriminator value. */
  id: string;
  displayName: string;
  docsUrl: string;
  fields: CredentialField[];
  /** How call audio reaches us. */
  mediaTransport: 'websocket' | 'ari' | 'none';
}
