// An embedder's own storage adapter: Callplane's IdentityRepository port kept in memory.
// The contract suite from `callplane/testing` proves it behaves like the built-in adapters.
import { ConflictError, NotFoundError, type ApiKey, type IdentityRepository, type Organization, type Session, type User } from 'callplane/core';

export class MemoryIdentityRepository implements IdentityRepository {
  private nextId = 1;
  private readonly organizations = new Map<number, Organization>();
  private readonly users = new Map<number, User>();
  private readonly sessions = new Map<number, Session>();
  private readonly keys = new Map<number, ApiKey>();

  async createOrganizationWithUser(input: { organizationName: string; email: string; name: string | null; passwordHash: string; now: Date }) {
    if ([...this.users.values()].some((u) => u.email === input.email)) throw new ConflictError('email_taken', 'A user with this email already exists');
    const organization: Organization = { id: this.nextId++, name: input.organizationName, createdAt: input.now };
    this.organizations.set(organization.id, organization);
    const user = await this.createUser(organization.id, input);
    return { organization: { ...organization }, user };
  }
  async createUser(organizationId: number, input: { email: string; name: string | null; passwordHash: string; now: Date }) {
    if (!this.organizations.has(organizationId)) throw new NotFoundError('organization_not_found', 'Organization not found');
    if ([...this.users.values()].some((u) => u.email === input.email)) throw new ConflictError('email_taken', 'A user with this email already exists');
    const user: User = { id: this.nextId++, organizationId, email: input.email, name: input.name, passwordHash: input.passwordHash, createdAt: input.now };
    this.users.set(user.id, user);
    return { ...user };
  }
  async findUserByEmail(email: string) {
    const u = [...this.users.values()].find((x) => x.email === email);
    return u ? { ...u } : null;
  }
  async getUser(organizationId: number, userId: number) {
    const u = this.users.get(userId);
    return u && u.organizationId === organizationId ? { ...u } : null;
  }
  async getOrganization(organizationId: number) {
    const o = this.organizations.get(organizationId);
    return o ? { ...o } : null;
  }
  async findOrganizationByName(name: string) {
    const o = [...this.organizations.values()].find((x) => x.name.toLowerCase() === name.toLowerCase());
    return o ? { ...o } : null;
  }
  async countUsers() {
    return this.users.size;
  }
  async createSession(organizationId: number, input: { userId: number; tokenDigest: string; now: Date; expiresAt: Date }) {
    const s: Session = { id: this.nextId++, organizationId, userId: input.userId, tokenDigest: input.tokenDigest, createdAt: input.now, expiresAt: input.expiresAt, revokedAt: null };
    this.sessions.set(s.id, s);
    return { ...s };
  }
  async findSessionByDigest(tokenDigest: string) {
    const s = [...this.sessions.values()].find((x) => x.tokenDigest === tokenDigest);
    return s ? { ...s } : null;
  }
  async revokeSession(organizationId: number, sessionId: number, now: Date) {
    const s = this.sessions.get(sessionId);
    if (s && s.organizationId === organizationId && !s.revokedAt) s.revokedAt = now;
  }
  async createApiKey(organizationId: number, input: { userId: number; name: string; keyPrefix: string; keyDigest: string; now: Date }) {
    const k: ApiKey = { id: this.nextId++, organizationId, userId: input.userId, name: input.name, keyPrefix: input.keyPrefix, keyDigest: input.keyDigest, createdAt: input.now, lastUsedAt: null, revokedAt: null };
    this.keys.set(k.id, k);
    return { ...k };
  }
  async findApiKeyByDigest(keyDigest: string) {
    const k = [...this.keys.values()].find((x) => x.keyDigest === keyDigest);
    return k ? { ...k } : null;
  }
  async listApiKeys(organizationId: number) {
    return [...this.keys.values()].filter((k) => k.organizationId === organizationId).sort((a, b) => a.id - b.id).map((k) => ({ ...k }));
  }
  async revokeApiKey(organizationId: number, apiKeyId: number, now: Date) {
    const k = this.keys.get(apiKeyId);
    if (!k || k.organizationId !== organizationId) return null;
    k.revokedAt ??= now;
    return { ...k };
  }
  async touchApiKey(organizationId: number, apiKeyId: number, now: Date) {
    const k = this.keys.get(apiKeyId);
    if (k && k.organizationId === organizationId) k.lastUsedAt = now;
  }
}
