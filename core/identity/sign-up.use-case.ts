import { ForbiddenError, InputError } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import type { PasswordHasher } from '../ports/crypto.port.js';
import type { IdentityRepository } from '../ports/identity.repository.port.js';
import { normalizeEmail } from './identity.js';
import type { IssuedSession, SessionIssuer } from './session-issuer.js';

export type SignupPolicy = 'first-user' | 'open' | 'closed';

export interface SignUpInput {
  email: string;
  password: string;
  name?: string | null;
  organizationName?: string | null;
}

export const MIN_PASSWORD_LENGTH = 8;

/**
 * Creates a user with a new organization it owns, then a session. `first-user` (default) allows it only
 * while no user exists; `closed` refuses with 403 `signup_disabled`. Throws `ConflictError('email_taken')`.
 */
export class SignUp {
  constructor(
    private readonly identities: IdentityRepository,
    private readonly passwords: PasswordHasher,
    private readonly sessions: SessionIssuer,
    private readonly clock: Clock,
    private readonly policy: SignupPolicy,
  ) {}

  async execute(input: SignUpInput): Promise<IssuedSession> {
    if (this.policy === 'closed') throw new ForbiddenError('signup_disabled', 'Signup is disabled on this installation');
    if (this.policy === 'first-user' && (await this.identities.countUsers()) > 0) {
      throw new ForbiddenError('signup_disabled', 'Signup is closed: this installation already has a user; ask an operator for an account');
    }
    if (input.password.length < MIN_PASSWORD_LENGTH) {
      throw new InputError('password_too_short', `Password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    const email = normalizeEmail(input.email);
    const name = input.name?.trim() || null;
    const { user } = await this.identities.createOrganizationWithUser({
      organizationName: input.organizationName?.trim() || defaultOrganizationName(name, email),
      email,
      name,
      passwordHash: await this.passwords.hash(input.password),
      now: this.clock.now(),
    });
    return this.sessions.issue(user);
  }
}

export function defaultOrganizationName(name: string | null, email: string): string {
  return `${name ?? email.split('@')[0]}'s organization`;
}

/** Operator path (CLI): creates a user regardless of the signup policy, in a named or new organization. */
export class CreateUser {
  constructor(
    private readonly identities: IdentityRepository,
    private readonly passwords: PasswordHasher,
    private readonly clock: Clock,
  ) {}

  async execute(input: { email: string; password: string; name?: string | null; organizationName?: string | null }) {
    if (input.password.length < MIN_PASSWORD_LENGTH) {
      throw new InputError('password_too_short', `Password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    const email = normalizeEmail(input.email);
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new InputError('invalid_email', 'Email must look like name@domain');
    const passwordHash = await this.passwords.hash(input.password);
    const name = input.name?.trim() || null;
    const now = this.clock.now();
    const orgName = input.organizationName?.trim();
    const existing = orgName ? await this.identities.findOrganizationByName(orgName) : null;
    if (existing) {
      const user = await this.identities.createUser(existing.id, { email, name, passwordHash, now });
      return { organization: existing, user };
    }
    return this.identities.createOrganizationWithUser({
      organizationName: orgName || defaultOrganizationName(name, email),
      email,
      name,
      passwordHash,
      now,
    });
  }
}

