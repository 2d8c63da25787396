import type { Db } from 'mongodb';
import { ConflictError, NotFoundError } from '../../../core/errors.js';
import type { ApiKey, Organization, Session, User } from '../../../core/identity/identity.js';
import type { IdentityRepository } from '../../../core/ports/identity.repository.port.js';
import { dateOrNull, isDuplicateKey, nextId } from './mongo-database.js';
import { Collections, Indexes } from './mongo-schema.js';

export interface OrganizationDocument { _id: number; name: string; nameKey: string; createdAt: Date }
export interface UserDocument { _id: number; organizationId: number; email: string; name: string | null; passwordHash: string; createdAt: Date }
export interface SessionDocument {
  _id: number; organizationId: number; userId: number; tokenDigest: string; createdAt: Date; expiresAt: Date; revokedAt: Date | null;
}
export interface ApiKeyDocument {
  _id: number; organizationId: number; userId: number; name: string; keyPrefix: string; keyDigest: string;
  createdAt: Date; lastUsedAt: Date | null; revokedAt: Date | null;
}

/**
 * The case-folded name organizations are looked up by: ASCII letters lowered, everything else kept, which is
 * exactly SQLite's `COLLATE NOCASE` (so both stores match the same names).
 */
export const organizationNameKey = (name: string): string => name.replace(/[A-Z]/g, (c) => c.toLowerCase());

export const organizationToDocument = (o: Organization): OrganizationDocument => ({
  _id: o.id, name: o.name, nameKey: organizationNameKey(o.name), createdAt: new Date(o.createdAt),
});
export const organizationFromDocument = (d: OrganizationDocument): Organization => ({ id: d._id, name: d.name, createdAt: new Date(d.createdAt) });

export const userToDocument = (u: User): UserDocument => ({
  _id: u.id, organizationId: u.organizationId, email: u.email, name: u.name, passwordHash: u.passwordHash, createdAt: new Date(u.createdAt),
});
export const userFromDocument = (d: UserDocument): User => ({
  id: d._id, organizationId: d.organizationId, email: d.email, name: d.name ?? null, passwordHash: d.passwordHash, createdAt: new Date(d.createdAt),
});

export const sessionToDocument = (s: Session): SessionDocument => ({
  _id: s.id, organizationId: s.organizationId, userId: s.userId, tokenDigest: s.tokenDigest,
  createdAt: new Date(s.createdAt), expiresAt: new Date(s.expiresAt), revokedAt: dateOrNull(s.revokedAt),
});
export const sessionFromDocument = (d: SessionDocument): Session => ({
  id: d._id, organizationId: d.organizationId, userId: d.userId, tokenDigest: d.tokenDigest,
  createdAt: new Date(d.createdAt), expiresAt: new Date(d.expiresAt), revokedAt: dateOrNull(d.revokedAt),
});

export const apiKeyToDocument = (k: ApiKey): ApiKeyDocument => ({
  _id: k.id, organizationId: k.organizationId, userId: k.userId, name: k.name, keyPrefix: k.keyPrefix, keyDigest: k.keyDigest,
  createdAt: new Date(k.createdAt), lastUsedAt: dateOrNull(k.lastUsedAt), revokedAt: dateOrNull(k.revokedAt),
});
export const apiKeyFromDocument = (d: ApiKeyDocument): ApiKey => ({
  id: d._id, organizationId: d.organizationId, userId: d.userId, name: d.name, keyPrefix: d.keyPrefix, keyDigest: d.keyDigest,
  createdAt: new Date(d.createdAt), lastUsedAt: dateOrNull(d.lastUsedAt), revokedAt: dateOrNull(d.revokedAt),
});

const emailTaken = () => new ConflictError('email_taken', 'A user with this email already exists');

/**
 * IdentityRepository on MongoDB. Collections `organizations`, `users`, `sessions`, `api_keys`; ids from
 * `counters`. Uniqueness (user email, session and key digests) is the unique indexes' job.
 */
export class MongoIdentityRepository implements IdentityRepository {
  private readonly orgs;
  private readonly users;
  private readonly sessions;
  private readonly keys;

  constructor(private readonly db: Db) {
    this.orgs = db.collection<OrganizationDocument>(Collections.organizations);
    this.users = db.collection<UserDocument>(Collections.users);
    this.sessions = db.collection<SessionDocument>(Collections.sessions);
    this.keys = db.collection<ApiKeyDocument>(Collections.apiKeys);
  }

  /**
   * Without a transaction: the organization is inserted first, then the user; when the user insert fails
   * (duplicate email or anything else) the organization is deleted again before the error is rethrown, so no
   * orphan is left behind. Between the two inserts the organization exists without a user; nothing reads an
   * organization except through one of its users or by id, so that window is harmless. A crash inside the
   * window leaves an organization no one can log in to (no user), never a user without an organization.
   */
  async createOrganizationWithUser(input: { organizationName: string; email: string; name: string | null; passwordHash: string; now: Date }) {
    const organization: Organization = { id: await nextId(this.db, Collections.organizations), name: input.organizationName, createdAt: input.now };
    await this.orgs.insertOne(organizationToDocument(organization));
    try {
      const user = await this.insertUser(organization.id, input);
      return { organization, user };
    } catch (e) {
      await this.orgs.deleteOne({ _id: organization.id });
      throw e;
    }
  }

  async createUser(organizationId: number, input: { email: string; name: string | null; passwordHash: string; now: Date }) {
    if (!(await this.orgs.findOne({ _id: organizationId }, { projection: { _id: 1 } }))) {
      throw new NotFoundError('organization_not_found', 'Organization not found');
    }
    return this.insertUser(organizationId, input);
  }

  private async insertUser(organizationId: number, input: { email: string; name: string | null; passwordHash: string; now: Date }): Promise<User> {
    const user: User = {
      id: await nextId(this.db, Collections.users), organizationId, email: input.email, name: input.name, passwordHash: input.passwordHash, createdAt: input.now,
    };
    try {
      await this.users.insertOne(userToDocument(user));
    } catch (e) {
      if (isDuplicateKey(e, Indexes.usersEmail)) throw emailTaken();
      throw e;
    }
    return user;
  }

  async findUserByEmail(email: string) {
    const d = await this.users.findOne({ email });
    return d ? userFromDocument(d) : null;
  }
  async getUser(organizationId: number, userId: number) {
    const d = await this.users.findOne({ _id: userId, organizationId });
    return d ? userFromDocument(d) : null;
  }
  async getOrganization(organizationId: number) {
    const d = await this.orgs.findOne({ _id: organizationId });
    return d ? organizationFromDocument(d) : null;
  }
  async findOrganizationByName(name: string) {
    const [d] = await this.orgs.find({ nameKey: organizationNameKey(name) }).sort({ _id: 1 }).limit(1).toArray();
    return d ? organizationFromDocument(d) : null;
  }
  async countUsers() {
    return this.users.countDocuments({});
  }

  async createSession(organizationId: number, input: { userId: number; tokenDigest: string; now: Date; expiresAt: Date }) {
    const session: Session = {
      id: await nextId(this.db, Collections.sessions), organizationId, userId: input.userId, tokenDigest: input.tokenDigest,
      createdAt: input.now, expiresAt: input.expiresAt, revokedAt: null,
    };
    await this.sessions.insertOne(sessionToDocument(session));
    return sessionFromDocument(sessionToDocument(session));
  }
  async findSessionByDigest(tokenDigest: string) {
    const d = await this.sessions.findOne({ tokenDigest });
    return d ? sessionFromDocument(d) : null;
  }
  /** One conditional update: only an unrevoked session of that organization changes, so the first time stays. */
  async revokeSession(organizationId: number, sessionId: number, now: Date) {
    await this.sessions.updateOne({ _id: sessionId, organizationId, revokedAt: null }, { $set: { revokedAt: now } });
  }

  async createApiKey(organizationId: number, input: { userId: number; name: string; keyPrefix: string; keyDigest: string; now: Date }) {
    const key: ApiKey = {
      id: await nextId(this.db, Collections.apiKeys), organizationId, userId: input.userId, name: input.name, keyPrefix: input.keyPrefix,
      keyDigest: input.keyDigest, createdAt: input.now, lastUsedAt: null, revokedAt: null,
    };
    await this.keys.insertOne(apiKeyToDocument(key));
    return apiKeyFromDocument(apiKeyToDocument(key));
  }
  async findApiKeyByDigest(keyDigest: string) {
    const d = await this.keys.findOne({ keyDigest });
    return d ? apiKeyFromDocument(d) : null;
  }
  async listApiKeys(organizationId: number) {
    return (await this.keys.find({ organizationId }).sort({ _id: 1 }).toArray()).map(apiKeyFromDocument);
  }
  /** One atomic pipeline update: `revokedAt` keeps its first value (`$ifNull`), and the key comes back. */
  async revokeApiKey(organizationId: number, apiKeyId: number, now: Date) {
    const d = await this.keys.findOneAndUpdate(
      { _id: apiKeyId, organizationId },
      [{ $set: { revokedAt: { $ifNull: ['$revokedAt', now] } } }],
      { returnDocument: 'after' },
    );
    return d ? apiKeyFromDocument(d) : null;
  }
  async touchApiKey(organizationId: number, apiKeyId: number, now: Date) {
    await this.keys.updateOne({ _id: apiKeyId, organizationId }, { $set: { lastUsedAt: now } });
  }
}
