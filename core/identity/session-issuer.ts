import type { Clock } from '../ports/clock.port.js';
import type { TokenService } from '../ports/crypto.port.js';
import type { IdentityRepository } from '../ports/identity.repository.port.js';
import type { Session, User } from './identity.js';

export interface IssuedSession {
  token: string;
  session: Session;
  user: User;
}

/** Creates a session for a user: a random token returned once, only its digest stored. */
export class SessionIssuer {
  constructor(
    private readonly identities: IdentityRepository,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  async issue(user: User): Promise<IssuedSession> {
    const token = this.tokens.randomToken(32);
    const now = this.clock.now();
    const session = await this.identities.createSession(user.organizationId, {
      userId: user.id,
      tokenDigest: this.tokens.digest(token),
      now,
      expiresAt: new Date(now.getTime() + this.ttlMs),
    });
    return { token, session, user };
  }
}
