import { describe, expect, it } from '@jest/globals';
import { runIdentityRepositoryContract } from '../../../test/contracts/identity.repository.contract.js';
import { createMongoDouble } from '../../../test/fakes/mongo/mongo-double.js';
import { ensureMongoSchema } from './mongo-database.js';
import {
  MongoIdentityRepository, apiKeyFromDocument, apiKeyToDocument, organizationFromDocument, organizationNameKey, organizationToDocument,
  sessionFromDocument, sessionToDocument, userFromDocument, userToDocument,
} from './identity.mongo.js';
import { runContractOnMongo } from './mongo-test-support.js';

runContractOnMongo('identity repository on MongoDB', runIdentityRepositoryContract, (db) => new MongoIdentityRepository(db));

describe('identity document mappers', () => {
  const t = new Date('2026-03-04T05:06:07.089Z');

  it('maps an organization with its NOCASE name key, both ways', () => {
    const org = { id: 3, name: 'Ächme CORP', createdAt: t };
    const doc = organizationToDocument(org);
    expect(doc).toEqual({ _id: 3, name: 'Ächme CORP', nameKey: 'Ächme corp', createdAt: t });
    expect(organizationFromDocument(doc)).toEqual(org);
    expect(organizationNameKey('ABC xyz É')).toBe('abc xyz É'); // ASCII only, like SQLite NOCASE
  });

  it('maps users, sessions and API keys both ways, nulls kept', () => {
    const user = { id: 1, organizationId: 2, email: 'e@x', name: null, passwordHash: 'h', createdAt: t };
    expect(userToDocument(user)).toEqual({ _id: 1, organizationId: 2, email: 'e@x', name: null, passwordHash: 'h', createdAt: t });
    expect(userFromDocument(userToDocument(user))).toEqual(user);
    const session = { id: 4, organizationId: 2, userId: 1, tokenDigest: 'd', createdAt: t, expiresAt: new Date(t.getTime() + 1), revokedAt: null };
    expect(sessionToDocument(session)).toMatchObject({ _id: 4, tokenDigest: 'd', revokedAt: null });
    expect(sessionFromDocument(sessionToDocument(session))).toEqual(session);
    const key = { id: 5, organizationId: 2, userId: 1, name: 'k', keyPrefix: 'cpk_1', keyDigest: 'kd', createdAt: t, lastUsedAt: null, revokedAt: t };
    expect(apiKeyToDocument(key)).toEqual({ _id: 5, organizationId: 2, userId: 1, name: 'k', keyPrefix: 'cpk_1', keyDigest: 'kd', createdAt: t, lastUsedAt: null, revokedAt: t });
    expect(apiKeyFromDocument(apiKeyToDocument(key))).toEqual(key);
  });

  it('returns fresh Date objects, never the document\'s own', () => {
    const doc = organizationToDocument({ id: 1, name: 'n', createdAt: t });
    const org = organizationFromDocument(doc);
    expect(org.createdAt).not.toBe(doc.createdAt);
  });
});

describe('MongoIdentityRepository specifics [mongo test double (mingo), not a real mongod]', () => {
  it('removes the organization again when its user cannot be inserted', async () => {
    const mongo = createMongoDouble();
    await ensureMongoSchema(mongo.db);
    const repo = new MongoIdentityRepository(mongo.db);
    const now = new Date();
    await repo.createOrganizationWithUser({ organizationName: 'A', email: 'a@x', name: null, passwordHash: 'h', now });
    await expect(repo.createOrganizationWithUser({ organizationName: 'B', email: 'a@x', name: null, passwordHash: 'h', now }))
      .rejects.toMatchObject({ code: 'email_taken' });
    expect(await mongo.fakeDb.collection('organizations').countDocuments()).toBe(1);
    expect(await repo.findOrganizationByName('b')).toBeNull();
    await mongo.close();
  });
});
