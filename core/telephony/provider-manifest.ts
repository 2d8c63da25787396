/**
 * What a provider plugin declares about itself: carriers (kind `telephony`) and model providers (kinds `llm`,
 * `stt`, `tts`; API.md 10) alike. One manifest feeds the metadata endpoint, the `config` validation schema and
 * its OpenAPI member, masking, log redaction and (for carriers) account-id matching.
 */
export type ProviderKind = 'telephony' | 'llm' | 'stt' | 'tts';
export const PROVIDER_KINDS: readonly ProviderKind[] = ['telephony', 'llm', 'stt', 'tts'];
/** The kinds served by AI services (API.md 10): a manifest declares these or `telephony`, never both. */
export const AI_PROVIDER_KINDS: readonly ProviderKind[] = ['llm', 'stt', 'tts'];

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
  /** For `url` fields: the accepted schemes (default `['http', 'https']`; a WebSocket endpoint says `['ws', 'wss']`). */
  schemes?: Array<'http' | 'https' | 'ws' | 'wss'>;
}

export interface ProviderManifest {
  /** Lower-case identifier, the `provider` discriminator value. */
  id: string;
  displayName: string;
  docsUrl: string;
  fields: CredentialField[];
  /** How call audio reaches us (`none` for model providers). */
  mediaTransport: 'websocket' | 'ari' | 'none';
  /** What the provider offers; absent means `['telephony']` (every carrier written before kinds existed). */
  kinds?: ProviderKind[];
}

/** The declared kinds of a manifest, `['telephony']` when it declares none. */
export const kindsOf = (manifest: Pick<ProviderManifest, 'kinds'>): ProviderKind[] => (manifest.kinds?.length ? [...manifest.kinds] : ['telephony']);

/** True for a carrier (kind `telephony`). */
export const isTelephonyManifest = (manifest: Pick<ProviderManifest, 'kinds'>): boolean => kindsOf(manifest).includes('telephony');
