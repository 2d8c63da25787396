import { ForbiddenError, NotFoundError } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import type { TokenService } from '../ports/crypto.port.js';
import type { IdentityRepository } from '../ports/identity.repository.port.js';
import type { ApiKey, Organization, Principal, User } from './identity.js';

export const API_KEY_PREFIX = 'cpk_';
export const KEY_PREFIX_LENGTH = 12;

/** Creates an API key (session only: a key cannot mint keys). The full key is returned this once. */
export class CreateApiKey {
  constructor(
    private readonly identities: IdentityRepository,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
  ) {}

  async execute(principal: Principal, name: string): Promise<{ apiKey: ApiKey; secret: string }> {
    if (principal.via !== 'session') {
      throw new ForbiddenError('session_required', 'API keys can only be created with a session token, not with an API key');
    }
    const secret = API_KEY_PREFIX + this.tokens.randomToken(32);
    const apiKey = await this.identities.createApiKey(principal.organizationId, {
      userId: principal.userId,
      name,
      keyPrefix: secret.slice(0, KEY_PREFIX_LENGTH),
      keyDigest: this.tokens.digest(secret),
      now: this.clock.now(),
    });
    return { apiKey, secret };
  }
}

export class ListApiKeys {
  constructor(private readonly identities: IdentityRepository) {}
  execute(principal: Principal): Promise<ApiKey[]> {
    return this.identities.listApiKeys(principal.organizationId);
  }
}

/** Revokes a key of the caller's organization; 404 `api_key_not_found` otherwise. Idempotent. */
export class RevokeApiKey {
  constructor(
    private readonly identities: IdentityRepository,
    private readonly clock: Clock,
  ) {}
  async execute(principal: Principal, apiKeyId: number): Promise<ApiKey> {
    const key = await this.identities.revokeApiKey(principal.organizationId, apiKeyId, this.clock.now());
    if (!key) throw new NotFoundError('api_key_not_found', 'API key not found');
    return key;
  }
}

/** The caller's user and organization. */
export class GetMe {
  constructor(private readonly identities: IdentityRepository) {}
  async execute(principal: Principal): Promise<{ user: User; organization: Organization }> {
    const [user, organization] = await Promise.all([
      this.identities.getUser(principal.organizationId, principal.userId),
      this.identities.getOrganization(principal.organizationId),
    ]);
    if (!user || !organization) throw new NotFoundError('user_not_found', 'User not found');
    return { user, organization };
  }
}
