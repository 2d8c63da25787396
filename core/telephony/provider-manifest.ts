/**
 * What a provider plugin declares about itself: carriers (kind `telephony`) and model providers (kinds `llm`,
 * `stt`, `tts`; API.md 10) alike. One manifest feeds the metadata endpoint, the `config` validation schema and
 * its OpenAPI member, masking, log redaction and (for carriers) account-id matching.
 */
import type { AudioFormat } from '../voice/audio-format.js';

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
  /**
   * How call audio reaches us (`none` for model providers). A carrier saying `none` (the simulator) places
   * calls that carry no caller audio of their own, so they need no talking agent (core/campaigns/agent-readiness.ts).
   */
  mediaTransport: 'websocket' | 'ari' | 'none';
  /** The carrier's media WebSocket, both ways (docs/voice.md "Carriers and media framing"); absent: none. */
  media?: MediaDeclaration;
  /** What the provider offers; absent means `['telephony']` (every carrier written before kinds existed). */
  kinds?: ProviderKind[];
  /** Call-control features beyond placing and ending calls; absent means none. */
  capabilities?: ProviderCapabilities;
}

/**
 * What a carrier can do with a live call besides hanging up. `transfer`: it implements `TelephonyProvider.transfer`
 * (docs/voice.md "Transfers"); a carrier without it ends transfer endings `transfer_failed` (`transfer_unsupported`).
 */
export interface ProviderCapabilities {
  transfer?: boolean;
}

/** True when the manifest declares that its provider can transfer a live call. */
export const canTransfer = (manifest: Pick<ProviderManifest, 'capabilities'>): boolean => manifest.capabilities?.transfer === true;

/**
 * What a carrier's media WebSocket carries and can do, as its framing (providers/<id>/<id>-media.ts) speaks it:
 * the audio formats on the wire each way, whether the carrier echoes marks itself (`native`) or the channel
 * emulates them from its playout clock (`emulated`), whether it has a clear message, and how a call is hung up
 * from the media side (`close`: closing the stream ends the call; `rest`: the stream is a fork, the carrier's
 * call-control API must hang up).
 */
export interface MediaDeclaration {
  transport: 'websocket';
  inFormat: AudioFormat;
  outFormat: AudioFormat;
  marks: 'native' | 'emulated';
  clear: 'native' | 'emulated';
  hangUp: 'close' | 'rest';
}

/** The declared kinds of a manifest, `['telephony']` when it declares none. */
export const kindsOf = (manifest: Pick<ProviderManifest, 'kinds'>): ProviderKind[] => (manifest.kinds?.length ? [...manifest.kinds] : ['telephony']);

/** True for a carrier (kind `telephony`). */
export const isTelephonyManifest = (manifest: Pick<ProviderManifest, 'kinds'>): boolean => kindsOf(manifest).includes('telephony');
