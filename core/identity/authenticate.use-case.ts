import { ForbiddenError, UnauthenticatedError } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import type { TokenService } from '../ports/crypto.port.js';
import type { IdentityRepository } from '../ports/identity.repository.port.js';
import type { Principal } from './identity.js';

/** How often a key's `last_used_at` is written at most (keeps hot read paths free of writes). */
const TOUCH_EVERY_MS = 60_000;

/**
 * Resolves the credentials of a request to a principal. When an API key is present it decides, even if a
 * valid bearer token is sent too. Throws `UnauthenticatedError` (`not_authenticated` when nothing usable
 * was sent, `invalid_credentials` when a token or key is unknown, expired or revoked).
 */
export class Authenticate {
  constructor(
    private readonly identities: IdentityRepository,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
  ) {}

  async execute(credentials: { apiKey?: string | null; bearerToken?: string | null }): Promise<Principal> {
    const now = this.clock.now();
    if (credentials.apiKey != null) return this.byApiKey(credentials.apiKey.trim(), now);
    if (credentials.bearerToken != null) return this.bySession(credentials.bearerToken.trim(), now);
    throw new UnauthenticatedError('not_authenticated', 'Not authenticated: send Authorization: Bearer <token> or X-API-Key');
  }

  private async byApiKey(key: string, now: Date): Promise<Principal> {
    const digest = this.tokens.digest(key);
    const found = key ? await this.identities.findApiKeyByDigest(digest) : null;
    if (!found || !this.tokens.equalDigests(found.keyDigest, digest) || found.revokedAt) {
      throw new UnauthenticatedError('invalid_credentials', 'Invalid or revoked API key');
    }
    if (!found.lastUsedAt || now.getTime() - found.lastUsedAt.getTime() >= TOUCH_EVERY_MS) {
      await this.identities.touchApiKey(found.organizationId, found.id, now);
    }
    return { organizationId: found.organizationId, userId: found.userId, via: 'api_key', apiKeyId: found.id };
  }

  private async bySession(token: string, now: Date): Promise<Principal> {
    const digest = this.tokens.digest(token);
    const found = token ? await this.identities.findSessionByDigest(digest) : null;
    if (!found || !this.tokens.equalDigests(found.tokenDigest, digest) || found.revokedAt || found.expiresAt <= now) {
      throw new UnauthenticatedError('invalid_credentials', 'Invalid or expired token');
    }
    return { organizationId: found.organizationId, userId: found.userId, via: 'session', sessionId: found.id };
  }
}

/**
 * Revokes the session the request was made with. An API-key request has no session to end: 403
 * `session_required` (keys are revoked with `RevokeApiKey`), rather than answering as if it logged out.
 * Idempotent for an already revoked session.
 */
export class LogOut {
  constructor(
    private readonly identities: IdentityRepository,
    private readonly clock: Clock,
  ) {}

  async execute(principal: Principal): Promise<void> {
    if (principal.via !== 'session' || principal.sessionId == null) {
      throw new ForbiddenError('session_required', 'Logging out ends a session token (Authorization: Bearer); revoke an API key with DELETE /user/api-keys/{id}');
    }
    await this.identities.revokeSession(principal.organizationId, principal.sessionId, this.clock.now());
  }
}
