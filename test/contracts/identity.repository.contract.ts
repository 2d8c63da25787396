import { describe, expect, it, beforeEach, afterEach } from '@jest/globals';
import { ConflictError } from '../../core/errors.js';
import type { IdentityRepository } from '../../core/ports/identity.repository.port.js';

export interface RepositoryHarness<R> {
  repo: R;
  cleanup(): Promise<void>;
}

/**
 * The IdentityRepository contract every storage adapter runs (SQLite always; MongoDB where reachable).
 * `make` returns a fresh, empty store for each test.
 */
export function runIdentityRepositoryContract(label: string, make: () => Promise<RepositoryHarness<IdentityRepository>>): void {
  describe(`IdentityRepository contract: ${label}`, () => {
    let h: RepositoryHarness<IdentityRepository>;
    const now = new Date('2026-01-02T03:04:05.678Z');
    beforeEach(async () => {
      h = await make();
    });
    afterEach(async () => {
      await h.cleanup();
    });
    const seed = (email = 'a@example.com', org = 'Org A') =>
      h.repo.createOrganizationWithUser({ organizationName: org, email, name: 'A', passwordHash: 'hash', now });

    it('creates an organization with its user and reads them back', async () => {
      const { organization, user } = await seed();
      expect(organization).toEqual({ id: expect.any(Number), name: 'Org A', createdAt: now });
      expect(user).toMatchObject({ organizationId: organization.id, email: 'a@example.com', name: 'A', passwordHash: 'hash', createdAt: now });
      expect(await h.repo.findUserByEmail('a@example.com')).toEqual(user);
      expect(await h.repo.getUser(organization.id, user.id)).toEqual(user);
      expect(await h.repo.getOrganization(organization.id)).toEqual(organization);
      expect(await h.repo.findOrganizationByName('org a')).toEqual(organization);
      expect(await h.repo.countUsers()).toBe(1);
    });

    it('refuses a second user with the same email and leaves no orphan organization', async () => {
      const { organization } = await seed();
      await expect(seed('a@example.com', 'Other')).rejects.toBeInstanceOf(ConflictError);
      await expect(h.repo.createUser(organization.id, { email: 'a@example.com', name: null, passwordHash: 'h', now })).rejects.toMatchObject({ code: 'email_taken' });
      expect(await h.repo.findOrganizationByName('Other')).toBeNull();
      expect(await h.repo.countUsers()).toBe(1);
    });

    it('scopes users by organization', async () => {
      const a = await seed();
      const b = await seed('b@example.com', 'Org B');
      expect(await h.repo.getUser(b.organization.id, a.user.id)).toBeNull();
      expect(await h.repo.findUserByEmail('nobody@example.com')).toBeNull();
      expect(await h.repo.getOrganization(999_999)).toBeNull();
    });

    it('stores sessions by digest and revokes idempotently within the organization', async () => {
      const a = await seed();
      const b = await seed('b@example.com', 'Org B');
      const s = await h.repo.createSession(a.organization.id, { userId: a.user.id, tokenDigest: 'd1', now, expiresAt: new Date(now.getTime() + 1000) });
      expect(await h.repo.findSessionByDigest('d1')).toEqual(s);
      expect(s.revokedAt).toBeNull();
      await h.repo.revokeSession(b.organization.id, s.id, now); // another org: no effect
      expect((await h.repo.findSessionByDigest('d1'))!.revokedAt).toBeNull();
      await h.repo.revokeSession(a.organization.id, s.id, now);
      await h.repo.revokeSession(a.organization.id, s.id, new Date(now.getTime() + 5000));
      expect((await h.repo.findSessionByDigest('d1'))!.revokedAt).toEqual(now);
      expect(await h.repo.findSessionByDigest('nope')).toBeNull();
    });

    it('stores API keys, lists them oldest first, touches and revokes within the organization', async () => {
      const a = await seed();
      const b = await seed('b@example.com', 'Org B');
      const k1 = await h.repo.createApiKey(a.organization.id, { userId: a.user.id, name: 'one', keyPrefix: 'cpk_aaaaaaaa', keyDigest: 'kd1', now });
      const k2 = await h.repo.createApiKey(a.organization.id, { userId: a.user.id, name: 'two', keyPrefix: 'cpk_bbbbbbbb', keyDigest: 'kd2', now });
      expect(k1).toMatchObject({ name: 'one', keyPrefix: 'cpk_aaaaaaaa', keyDigest: 'kd1', lastUsedAt: null, revokedAt: null });
      expect((await h.repo.listApiKeys(a.organization.id)).map((k) => k.id)).toEqual([k1.id, k2.id]);
      expect(await h.repo.listApiKeys(b.organization.id)).toEqual([]);
      expect(await h.repo.findApiKeyByDigest('kd2')).toEqual(k2);
      const later = new Date(now.getTime() + 60_000);
      await h.repo.touchApiKey(a.organization.id, k1.id, later);
      expect((await h.repo.findApiKeyByDigest('kd1'))!.lastUsedAt).toEqual(later);
      expect(await h.repo.revokeApiKey(b.organization.id, k1.id, later)).toBeNull();
      const revoked = await h.repo.revokeApiKey(a.organization.id, k1.id, later);
      expect(revoked!.revokedAt).toEqual(later);
      const again = await h.repo.revokeApiKey(a.organization.id, k1.id, new Date(later.getTime() + 1));
      expect(again!.revokedAt).toEqual(later);
    });
  });
}
