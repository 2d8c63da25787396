import { RateLimitedError, UnauthenticatedError } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import type { PasswordHasher } from '../ports/crypto.port.js';
import type { IdentityRepository } from '../ports/identity.repository.port.js';
import type { RateLimiter } from '../ports/rate-limiter.port.js';
import { normalizeEmail } from './identity.js';
import type { IssuedSession, SessionIssuer } from './session-issuer.js';

const INVALID = 'Incorrect email or password';

/** A hash that never matches, verified when the email is unknown so both failures take the same time. */
const DECOY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/**
 * Email + password → session. Unknown email and wrong password fail alike (401 `invalid_credentials`).
 * Attempts are throttled per email and per client address (429 `rate_limited` with Retry-After): each attempt
 * is counted before its password is verified, and a success takes its own attempt back.
 */
export class LogIn {
  constructor(
    private readonly identities: IdentityRepository,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionIssuer,
    private readonly limiters: { perEmail: RateLimiter; perAddress: RateLimiter },
    private readonly clock: Clock,
  ) {}

  async execute(input: { email: string; password: string; clientAddress: string }): Promise<IssuedSession> {
    const email = normalizeEmail(input.email);
    const address = input.clientAddress;
    const { perEmail, perAddress } = this.limiters;
    const now = this.clock.now();
    // reserve, then verify: the attempt counts before the password is checked, so parallel attempts cannot
    // all pass a limit that none of them has counted yet
    const emailWait = await perEmail.reserve(email, now);
    if (emailWait > 0) throw new RateLimitedError(emailWait, 'Too many failed logins; try again later');
    const addressWait = await perAddress.reserve(address, now);
    if (addressWait > 0) {
      await perEmail.release(email, now);
      throw new RateLimitedError(addressWait, 'Too many failed logins; try again later');
    }

    const user = await this.identities.findUserByEmail(email);
    const ok = await this.passwords.verify(input.password, user?.passwordHash ?? DECOY_HASH);
    if (!user || !ok) throw new UnauthenticatedError('invalid_credentials', INVALID);
    // a success is no failure: the email starts afresh, the address gets its reserved attempt back
    await perEmail.reset(email);
    await perAddress.release(address, now);
    return this.sessions.issue(user);
  }
}
