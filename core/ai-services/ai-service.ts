import type { ProviderKind } from '../telephony/provider-manifest.js';

/**
 * An AI service: one model-provider account of an organization (API.md 10). Stored exactly like a telephony
 * configuration's credentials (API.md 5): non-sensitive fields in clear (`settings`), sensitive ones as
 * SecretCipher ciphertexts (`secrets`) whose associated data names the organization, `secretsKeyId` and the
 * field, so a ciphertext copied into another record or field does not decrypt (core/telephony/credential-vault.ts).
 */
export interface AiService {
  id: number;
  organizationId: number;
  /** 1..64 characters, unique in the organization case-insensitively. */
  name: string;
  /** The AI provider plugin id (`openai`); never changes. */
  provider: string;
  /** A random id chosen before the insert and bound into every secret's context. */
  secretsKeyId: string;
  /** Non-sensitive credential fields, in clear. */
  settings: Record<string, unknown>;
  /** Sensitive credential fields: field name → ciphertext of the JSON value. */
  secrets: Record<string, string>;
  createdAt: Date;
  updatedAt: Date;
}

/** What the API shows of a service: its provider's kinds and its credentials masked. */
export interface AiServiceView {
  service: AiService;
  /** The provider manifest's kinds (`llm`, `stt`, `tts`); empty when the plugin is no longer loaded. */
  kinds: ProviderKind[];
  /** Every manifest field (null when unset), sensitive ones masked. */
  credentials: Record<string, unknown>;
}

export const AI_SERVICE_NAME_MAX_LENGTH = 64;
