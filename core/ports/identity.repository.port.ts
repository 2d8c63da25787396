import type { ApiKey, Organization, Session, User } from '../identity/identity.js';

/**
 * Organizations, users, sessions and API keys. Every query that reads tenant data takes the organization
 * id. The only lookups without one are the authentication entry points (a user by email at login, a
 * session or key by digest), which is where the organization is learned.
 */
export const IdentityRepository = Symbol.for('callplane.IdentityRepository');
export interface IdentityRepository {
  /**
   * Creates an organization and its first user together (atomically where the store allows; a failed
   * user insert leaves no orphan organization). Throws `ConflictError('email_taken')` when the normalized
   * email exists. Not idempotent.
   */
  createOrganizationWithUser(input: {
    organizationName: string;
    email: string;
    name: string | null;
    passwordHash: string;
    now: Date;
  }): Promise<{ organization: Organization; user: User }>;
  /** Adds a user to an existing organization. Throws `ConflictError('email_taken')`, `NotFoundError('organization_not_found')`. */
  createUser(organizationId: number, input: { email: string; name: string | null; passwordHash: string; now: Date }): Promise<User>;
  /** Authentication entry point: the user with this normalized email, or null. */
  findUserByEmail(email: string): Promise<User | null>;
  /** The user in that organization, or null. */
  getUser(organizationId: number, userId: number): Promise<User | null>;
  /** The organization, or null. */
  getOrganization(organizationId: number): Promise<Organization | null>;
  /** The first organization whose name equals `name` case-insensitively, or null. */
  findOrganizationByName(name: string): Promise<Organization | null>;
  /** Number of users in the whole installation (first-user signup policy). */
  countUsers(): Promise<number>;

  /** Stores a new session. Not idempotent. */
  createSession(organizationId: number, input: { userId: number; tokenDigest: string; now: Date; expiresAt: Date }): Promise<Session>;
  /** Authentication entry point: the session with this digest (revoked or expired ones included), or null. */
  findSessionByDigest(tokenDigest: string): Promise<Session | null>;
  /** Marks the session revoked. Idempotent: revoking twice keeps the first time. No-op when absent. */
  revokeSession(organizationId: number, sessionId: number, now: Date): Promise<void>;

  /** Stores a new API key. Not idempotent. */
  createApiKey(organizationId: number, input: { userId: number; name: string; keyPrefix: string; keyDigest: string; now: Date }): Promise<ApiKey>;
  /** Authentication entry point: the key with this digest (revoked ones included), or null. */
  findApiKeyByDigest(keyDigest: string): Promise<ApiKey | null>;
  /** The organization's keys, oldest first. */
  listApiKeys(organizationId: number): Promise<ApiKey[]>;
  /** Revokes the key; returns it, or null when absent in that organization. Idempotent. */
  revokeApiKey(organizationId: number, apiKeyId: number, now: Date): Promise<ApiKey | null>;
  /** Records a use. Idempotent; no-op when absent. */
  touchApiKey(organizationId: number, apiKeyId: number, now: Date): Promise<void>;
}
