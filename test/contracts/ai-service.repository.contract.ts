import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { AiServiceRepository, NewAiService } from '../../core/ports/ai-service.repository.port.js';
import { conflictCode } from './conflict-code.js';

export interface AiServiceRepositoryHarness {
  repo: AiServiceRepository;
  /** Two existing, distinct organizations. */
  organizations: [number, number];
  cleanup(): Promise<void>;
}

const t0 = new Date('2026-03-01T10:00:00.000Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

/**
 * The AiServiceRepository contract every storage adapter runs (API.md 10): ids from the store, oldest-first
 * lists, case-insensitive unique names per organization, partial updates, and tenant scoping on every method.
 * `make` returns a fresh, empty store with two organizations for each test.
 */
export function runAiServiceRepositoryContract(label: string, make: () => Promise<AiServiceRepositoryHarness>): void {
  describe(`AI service repository contract: ${label}`, () => {
    let h: AiServiceRepositoryHarness;
    let orgA: number;
    let orgB: number;
    beforeEach(async () => {
      h = await make();
      [orgA, orgB] = h.organizations;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    const service = (over: Partial<NewAiService> = {}): NewAiService => ({
      name: 'Main model', provider: 'openai', secretsKeyId: 'k-1', settings: { base_url: 'https://api.openai.com/v1' },
      secrets: { api_key: 'v1:cipher' }, now: t0, ...over,
    });

    it('creates with a store id, reads, and lists oldest first', async () => {
      const a = await h.repo.create(orgA, service());
      expect(a).toEqual({
        id: expect.any(Number), organizationId: orgA, name: 'Main model', provider: 'openai', secretsKeyId: 'k-1',
        settings: { base_url: 'https://api.openai.com/v1' }, secrets: { api_key: 'v1:cipher' }, createdAt: t0, updatedAt: t0,
      });
      expect(a.id).toBeGreaterThan(0);
      const b = await h.repo.create(orgA, service({ name: 'Voice', provider: 'deepgram', secretsKeyId: 'k-2', now: later(1) }));
      expect(b.id).not.toBe(a.id);
      expect(await h.repo.get(orgA, a.id)).toEqual(a);
      expect((await h.repo.list(orgA)).map((s) => s.id)).toEqual([a.id, b.id]);
      expect(await h.repo.get(orgA, 999_999)).toBeNull();
    });

    it('scopes every method by organization', async () => {
      const a = await h.repo.create(orgA, service());
      expect(await h.repo.get(orgB, a.id)).toBeNull();
      expect(await h.repo.list(orgB)).toEqual([]);
      expect(await h.repo.update(orgB, a.id, { name: 'Stolen', now: later(5) })).toBeNull();
      expect(await h.repo.delete(orgB, a.id)).toBe(false);
      expect(await h.repo.get(orgA, a.id)).toEqual(a);
    });

    it('refuses a name the organization already has, case-insensitively, on create and on rename', async () => {
      await h.repo.create(orgA, service({ name: 'Main Model' }));
      expect(await conflictCode(h.repo.create(orgA, service({ name: 'MAIN model', secretsKeyId: 'k-2' })))).toBe('ai_service_name_taken');
      const other = await h.repo.create(orgA, service({ name: 'Other', secretsKeyId: 'k-3' }));
      expect(await conflictCode(h.repo.update(orgA, other.id, { name: 'main MODEL', now: later(1) }))).toBe('ai_service_name_taken');
      expect((await h.repo.get(orgA, other.id))!.name).toBe('Other');
      // another organization may use the name
      expect((await h.repo.create(orgB, service({ name: 'Main Model' }))).organizationId).toBe(orgB);
      // renaming to its own name in another case is fine
      expect((await h.repo.update(orgA, other.id, { name: 'OTHER', now: later(2) }))!.name).toBe('OTHER');
    });

    it('updates only the given fields and updatedAt', async () => {
      const a = await h.repo.create(orgA, service());
      const renamed = await h.repo.update(orgA, a.id, { name: 'Renamed', now: later(10) });
      expect(renamed).toEqual({ ...a, name: 'Renamed', updatedAt: later(10) });
      const rekeyed = await h.repo.update(orgA, a.id, { settings: { base_url: 'http://localhost:11434/v1' }, secrets: {}, now: later(20) });
      expect(rekeyed).toEqual({ ...a, name: 'Renamed', settings: { base_url: 'http://localhost:11434/v1' }, secrets: {}, updatedAt: later(20) });
      expect(await h.repo.get(orgA, a.id)).toEqual(rekeyed);
      expect(await h.repo.update(orgA, 999_999, { name: 'x', now: later(30) })).toBeNull();
    });

    it('deletes idempotently and frees the name', async () => {
      const a = await h.repo.create(orgA, service());
      expect(await h.repo.delete(orgA, a.id)).toBe(true);
      expect(await h.repo.delete(orgA, a.id)).toBe(false);
      expect(await h.repo.get(orgA, a.id)).toBeNull();
      const again = await h.repo.create(orgA, service());
      expect(again.id).not.toBe(a.id);
    });

    it('keeps credential field names and values exactly (dots, dollars, unicode)', async () => {
      const a = await h.repo.create(orgA, service({ settings: { 'x.y': 1, $z: [true, null], note: 'élan' }, secrets: { 'a.b': 'v1:c' } }));
      expect(await h.repo.get(orgA, a.id)).toMatchObject({ settings: { 'x.y': 1, $z: [true, null], note: 'élan' }, secrets: { 'a.b': 'v1:c' } });
    });
  });
}
