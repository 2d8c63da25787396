/** Password hashing (scrypt in the default adapter). */
export const PasswordHasher = Symbol.for('callplane.PasswordHasher');
export interface PasswordHasher {
  /** Returns a self-describing hash string (algorithm, parameters, salt, digest). Never throws on input. */
  hash(password: string): Promise<string>;
  /** True when `password` matches `stored`, compared in constant time; false for a malformed `stored`. */
  verify(password: string, stored: string): Promise<boolean>;
}

/** Opaque secrets (session tokens, API keys): random generation and one-way digests. */
export const TokenService = Symbol.for('callplane.TokenService');
export interface TokenService {
  /** `bytes` random bytes, base64url without padding. */
  randomToken(bytes?: number): string;
  /** Hex SHA-256 of `token`: the only form stored. Deterministic; never throws. */
  digest(token: string): string;
  /** Constant-time equality of two digests (false when lengths differ). */
  equalDigests(a: string, b: string): boolean;
  /** A random v4 UUID. */
  uuid(): string;
}

/**
 * Authenticated encryption of secrets at rest (AES-256-GCM in the default adapter). `context` is bound
 * as associated data (for example `telephony_configuration:12:auth_token`), so a ciphertext copied to
 * another record does not decrypt.
 */
export const SecretCipher = Symbol.for('callplane.SecretCipher');
export interface SecretCipher {
  /** Returns an opaque, versioned ciphertext string. */
  encrypt(plaintext: string, context: string): string;
  /** Throws `Error` when the ciphertext was tampered with or `context` differs. */
  decrypt(ciphertext: string, context: string): string;
}

/** HMAC signatures for signed URLs (uploads, artifact downloads). */
export const UrlSigner = Symbol.for('callplane.UrlSigner');
export interface UrlSigner {
  /** Hex HMAC-SHA256 of `payload` under the service's signing key. */
  sign(payload: string): string;
  /** Constant-time check of `signature` against `payload`; false on any malformed input. */
  verify(payload: string, signature: string): boolean;
}
