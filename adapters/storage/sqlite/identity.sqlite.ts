import { ConflictError, NotFoundError } from '../../../core/errors.js';
import type { ApiKey, Organization, Session, User } from '../../../core/identity/identity.js';
import type { IdentityRepository } from '../../../core/ports/identity.repository.port.js';
import { fromMs, fromMsOrNull, isUniqueViolation, toMs, type SqliteDatabase } from './database.js';

interface OrganizationRow { id: number; name: string; created_at: number }
interface UserRow { id: number; organization_id: number; email: string; name: string | null; password_hash: string; created_at: number }
interface SessionRow { id: number; organization_id: number; user_id: number; token_digest: string; created_at: number; expires_at: number; revoked_at: number | null }
interface ApiKeyRow { id: number; organization_id: number; user_id: number; name: string; key_prefix: string; key_digest: string; created_at: number; last_used_at: number | null; revoked_at: number | null }

export const organizationFromRow = (r: OrganizationRow): Organization => ({ id: r.id, name: r.name, createdAt: fromMs(r.created_at) });
export const userFromRow = (r: UserRow): User => ({
  id: r.id, organizationId: r.organization_id, email: r.email, name: r.name, passwordHash: r.password_hash, createdAt: fromMs(r.created_at),
});
export const sessionFromRow = (r: SessionRow): Session => ({
  id: r.id, organizationId: r.organization_id, userId: r.user_id, tokenDigest: r.token_digest,
  createdAt: fromMs(r.created_at), expiresAt: fromMs(r.expires_at), revokedAt: fromMsOrNull(r.revoked_at),
});
export const apiKeyFromRow = (r: ApiKeyRow): ApiKey => ({
  id: r.id, organizationId: r.organization_id, userId: r.user_id, name: r.name, keyPrefix: r.key_prefix, keyDigest: r.key_digest,
  createdAt: fromMs(r.created_at), lastUsedAt: fromMsOrNull(r.last_used_at), revokedAt: fromMsOrNull(r.revoked_at),
});

const emailTaken = () => new ConflictError('email_taken', 'A user with this email already exists');

export class SqliteIdentityRepository implements IdentityRepository {
  private readonly q;

  constructor(private readonly db: SqliteDatabase) {
    this.q = {
      insertOrg: db.prepare<[string, number], OrganizationRow>('INSERT INTO organizations (name, created_at) VALUES (?, ?) RETURNING *'),
      insertUser: db.prepare<[number, string, string | null, string, number], UserRow>(
        'INSERT INTO users (organization_id, email, name, password_hash, created_at) VALUES (?, ?, ?, ?, ?) RETURNING *'),
      userByEmail: db.prepare<[string], UserRow>('SELECT * FROM users WHERE email = ?'),
      user: db.prepare<[number, number], UserRow>('SELECT * FROM users WHERE organization_id = ? AND id = ?'),
      org: db.prepare<[number], OrganizationRow>('SELECT * FROM organizations WHERE id = ?'),
      orgByName: db.prepare<[string], OrganizationRow>('SELECT * FROM organizations WHERE name = ? COLLATE NOCASE ORDER BY id LIMIT 1'),
      countUsers: db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM users'),
      insertSession: db.prepare<[number, number, string, number, number], SessionRow>(
        'INSERT INTO sessions (organization_id, user_id, token_digest, created_at, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING *'),
      sessionByDigest: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE token_digest = ?'),
      revokeSession: db.prepare<[number, number, number]>(
        'UPDATE sessions SET revoked_at = ? WHERE organization_id = ? AND id = ? AND revoked_at IS NULL'),
      insertKey: db.prepare<[number, number, string, string, string, number], ApiKeyRow>(
        'INSERT INTO api_keys (organization_id, user_id, name, key_prefix, key_digest, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *'),
      keyByDigest: db.prepare<[string], ApiKeyRow>('SELECT * FROM api_keys WHERE key_digest = ?'),
      listKeys: db.prepare<[number], ApiKeyRow>('SELECT * FROM api_keys WHERE organization_id = ? ORDER BY id'),
      revokeKey: db.prepare<[number, number, number], ApiKeyRow>(
        'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE organization_id = ? AND id = ? RETURNING *'),
      touchKey: db.prepare<[number, number, number]>('UPDATE api_keys SET last_used_at = ? WHERE organization_id = ? AND id = ?'),
    };
  }

  async createOrganizationWithUser(input: { organizationName: string; email: string; name: string | null; passwordHash: string; now: Date }) {
    const tx = this.db.transaction(() => {
      const org = this.q.insertOrg.get(input.organizationName, toMs(input.now))!;
      const user = this.q.insertUser.get(org.id, input.email, input.name, input.passwordHash, toMs(input.now))!;
      return { organization: organizationFromRow(org), user: userFromRow(user) };
    });
    try {
      return tx.immediate();
    } catch (e) {
      if (isUniqueViolation(e, 'users.email')) throw emailTaken();
      throw e;
    }
  }

  async createUser(organizationId: number, input: { email: string; name: string | null; passwordHash: string; now: Date }) {
    if (!this.q.org.get(organizationId)) throw new NotFoundError('organization_not_found', 'Organization not found');
    try {
      return userFromRow(this.q.insertUser.get(organizationId, input.email, input.name, input.passwordHash, toMs(input.now))!);
    } catch (e) {
      if (isUniqueViolation(e, 'users.email')) throw emailTaken();
      throw e;
    }
  }

  async findUserByEmail(email: string) {
    const r = this.q.userByEmail.get(email);
    return r ? userFromRow(r) : null;
  }
  async getUser(organizationId: number, userId: number) {
    const r = this.q.user.get(organizationId, userId);
    return r ? userFromRow(r) : null;
  }
  async getOrganization(organizationId: number) {
    const r = this.q.org.get(organizationId);
    return r ? organizationFromRow(r) : null;
  }
  async findOrganizationByName(name: string) {
    const r = this.q.orgByName.get(name);
    return r ? organizationFromRow(r) : null;
  }
  async countUsers() {
    return this.q.countUsers.get()!.n;
  }
  async createSession(organizationId: number, input: { userId: number; tokenDigest: string; now: Date; expiresAt: Date }) {
    return sessionFromRow(this.q.insertSession.get(organizationId, input.userId, input.tokenDigest, toMs(input.now), toMs(input.expiresAt))!);
  }
  async findSessionByDigest(tokenDigest: string) {
    const r = this.q.sessionByDigest.get(tokenDigest);
    return r ? sessionFromRow(r) : null;
  }
  async revokeSession(organizationId: number, sessionId: number, now: Date) {
    this.q.revokeSession.run(toMs(now), organizationId, sessionId);
  }
  async createApiKey(organizationId: number, input: { userId: number; name: string; keyPrefix: string; keyDigest: string; now: Date }) {
    return apiKeyFromRow(this.q.insertKey.get(organizationId, input.userId, input.name, input.keyPrefix, input.keyDigest, toMs(input.now))!);
  }
  async findApiKeyByDigest(keyDigest: string) {
    const r = this.q.keyByDigest.get(keyDigest);
    return r ? apiKeyFromRow(r) : null;
  }
  async listApiKeys(organizationId: number) {
    return this.q.listKeys.all(organizationId).map(apiKeyFromRow);
  }
  async revokeApiKey(organizationId: number, apiKeyId: number, now: Date) {
    const r = this.q.revokeKey.get(toMs(now), organizationId, apiKeyId);
    return r ? apiKeyFromRow(r) : null;
  }
  async touchApiKey(organizationId: number, apiKeyId: number, now: Date) {
    this.q.touchKey.run(toMs(now), organizationId, apiKeyId);
  }
}
