import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { NewWebhookEndpoint, WebhookRepository } from '../../core/ports/webhook.repository.port.js';

export interface WebhookRepositoryHarness {
  repo: WebhookRepository;
  /** Two existing, distinct organizations. */
  organizations: [number, number];
  cleanup(): Promise<void>;
}

const t0 = new Date('2026-03-01T10:00:00.000Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

/**
 * The WebhookRepository contract every storage adapter runs (API.md 14): endpoints scoped per organization,
 * subscription lookup by event, the outbox (enqueue with the id in the body, atomic claims under a lease that
 * two workers never share, attempts recorded only under a live claim, manual retry), the newest-first delivery
 * log, and deleting an endpoint with its deliveries. `make` returns a fresh, empty store for each test.
 */
export function runWebhookRepositoryContract(label: string, make: () => Promise<WebhookRepositoryHarness>): void {
  describe(`Webhook repository contract: ${label}`, () => {
    let h: WebhookRepositoryHarness;
    let orgA: number;
    let orgB: number;
    beforeEach(async () => {
      h = await make();
      [orgA, orgB] = h.organizations;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    const endpoint = (over: Partial<NewWebhookEndpoint> = {}): NewWebhookEndpoint => ({
      url: 'https://hooks.example.com/callplane', events: ['call.ended', 'campaign.completed'], description: 'CRM',
      secretCiphertext: 'v1:cipher', secretsKeyId: 'k1', now: t0, ...over,
    });
    const body = (id: number) => JSON.stringify({ id, type: 'call.ended' });

    it('creates endpoints with store ids and scopes every read and write to the organization', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const b = await h.repo.createEndpoint(orgB, endpoint({ url: 'https://b.example.com/' }));
      expect(a).toEqual({
        id: a.id, organizationId: orgA, url: 'https://hooks.example.com/callplane', events: ['call.ended', 'campaign.completed'],
        description: 'CRM', secretCiphertext: 'v1:cipher', secretsKeyId: 'k1', createdAt: t0, updatedAt: t0,
      });
      expect(b.id).not.toBe(a.id);
      expect(await h.repo.getEndpoint(orgA, a.id)).toEqual(a);
      expect(await h.repo.getEndpoint(orgB, a.id)).toBeNull();
      expect((await h.repo.listEndpoints(orgA)).map((e) => e.id)).toEqual([a.id]);
      expect(await h.repo.updateEndpoint(orgB, a.id, { url: 'https://evil.example/', now: later(1) })).toBeNull();
      expect(await h.repo.deleteEndpoint(orgB, a.id)).toBe(false);
      expect(await h.repo.getEndpoint(orgA, a.id)).toEqual(a);
      expect((await h.repo.findEndpoints([a.id, b.id, 999_999])).map((e) => e.id).sort()).toEqual([a.id, b.id].sort());
    });

    it('updates only the given fields, description to null included', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const u = await h.repo.updateEndpoint(orgA, a.id, { events: ['call.started'], now: later(5) });
      expect(u).toMatchObject({ url: a.url, events: ['call.started'], description: 'CRM', secretCiphertext: 'v1:cipher', updatedAt: later(5) });
      const v = await h.repo.updateEndpoint(orgA, a.id, { description: null, secretCiphertext: 'v1:new', url: 'https://x.example/', now: later(6) });
      expect(v).toMatchObject({ url: 'https://x.example/', events: ['call.started'], description: null, secretCiphertext: 'v1:new' });
    });

    it('finds the endpoints subscribed to an event in the organization only', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const c = await h.repo.createEndpoint(orgA, endpoint({ events: ['call.started'] }));
      await h.repo.createEndpoint(orgB, endpoint());
      expect((await h.repo.subscribedEndpoints(orgA, 'call.ended')).map((e) => e.id)).toEqual([a.id]);
      expect((await h.repo.subscribedEndpoints(orgA, 'call.started')).map((e) => e.id)).toEqual([c.id]);
      expect(await h.repo.subscribedEndpoints(orgA, 'phone_number.sync_failed')).toEqual([]);
    });

    it('enqueues pending deliveries due now whose body carries their own id', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const [d1, d2] = await h.repo.enqueue(orgA, [
        { endpointId: a.id, event: 'call.ended', now: t0, body },
        { endpointId: a.id, event: 'call.ended', now: t0, body },
      ]);
      expect(d1).toMatchObject({ organizationId: orgA, endpointId: a.id, event: 'call.ended', status: 'pending', attempts: 0, nextAttemptAt: t0, leaseUntil: null });
      expect(JSON.parse(d1!.body).id).toBe(d1!.id);
      expect(d2!.id).toBeGreaterThan(d1!.id);
      expect(await h.repo.nextDueAt()).toEqual(t0);
    });

    it('enqueues an event to the endpoints subscribed when it is stored, in the organization only, leased when the caller says so', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const c = await h.repo.createEndpoint(orgA, endpoint({ events: ['call.started', 'call.ended'] }));
      await h.repo.createEndpoint(orgA, endpoint({ events: ['call.started'] }));
      await h.repo.createEndpoint(orgB, endpoint());
      const asked: number[] = [];
      const r = await h.repo.enqueueEvent(orgA, { event: 'call.ended', now: t0, body, lease: (n) => { asked.push(n); return { leaseMs: 60_000 }; } });
      expect(asked).toEqual([2]);
      expect(r.leased).toBe(true);
      expect(r.endpoints.map((e) => e.id)).toEqual([a.id, c.id]);
      expect(r.deliveries.map((d) => d.endpointId)).toEqual([a.id, c.id]);
      for (const d of r.deliveries) {
        expect(d).toMatchObject({ organizationId: orgA, event: 'call.ended', status: 'pending', leaseUntil: later(60_000) });
        expect(JSON.parse(d.body).id).toBe(d.id);
        expect(await h.repo.getDelivery(orgA, d.endpointId, d.id)).toEqual(d);
      }
      // unleased (the caller has no room), and an endpoint changed just before is read as it is now
      await h.repo.updateEndpoint(orgA, c.id, { events: ['call.started'], now: t0 });
      const u = await h.repo.enqueueEvent(orgA, { event: 'call.ended', now: t0, body, lease: () => null });
      expect(u.leased).toBe(false);
      expect(u.deliveries).toEqual([expect.objectContaining({ endpointId: a.id, leaseUntil: null, leaseToken: null, nextAttemptAt: t0 })]);
      // with a key, at most once per endpoint
      const k1 = await h.repo.enqueueEvent(orgA, { event: 'call.ended', now: t0, body, eventKey: 'run:9:call.ended' });
      expect(k1.deliveries).toHaveLength(1);
      expect((await h.repo.enqueueEvent(orgA, { event: 'call.ended', now: t0, body, eventKey: 'run:9:call.ended' })).deliveries).toEqual([]);
      // nobody subscribed: nothing stored, the lease is not asked
      const none = await h.repo.enqueueEvent(orgB, { event: 'phone_number.sync_failed', now: t0, body, lease: () => { throw new Error('not asked'); } });
      expect(none).toEqual({ endpoints: [], deliveries: [], leased: false });
    });

    it('returns each enqueued delivery exactly as stored, leased or not, and skips one already stored under its event key', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const [plain] = await h.repo.enqueue(orgA, [{ endpointId: a.id, event: 'call.ended', now: t0, body }]);
      const [leased, keyed] = await h.repo.enqueue(orgA, [
        { endpointId: a.id, event: 'call.ended', now: t0, body },
        { endpointId: a.id, event: 'call.started', now: t0, body, eventKey: 'run:1:call.started' },
      ], { leaseMs: 60_000 });
      for (const d of [plain!, leased!, keyed!]) expect(await h.repo.getDelivery(orgA, a.id, d.id)).toEqual(d);
      expect(leased).toMatchObject({ leaseUntil: later(60_000), nextAttemptAt: later(60_000) });
      expect(typeof leased!.leaseToken).toBe('string');
      expect(await h.repo.enqueue(orgA, [{ endpointId: a.id, event: 'call.started', now: t0, body, eventKey: 'run:1:call.started' }], { leaseMs: 60_000 })).toEqual([]);
    });

    it('claims due deliveries once under a lease, oldest due first, and again after the lease expires', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const ds = await h.repo.enqueue(orgA, [1, 2, 3].map(() => ({ endpointId: a.id, event: 'call.ended' as const, now: t0, body })));
      expect(await h.repo.claimDue(later(-1), 60_000, 10)).toEqual([]);
      const [first, second] = await Promise.all([h.repo.claimDue(t0, 60_000, 2), h.repo.claimDue(t0, 60_000, 2)]);
      const ids = [...first, ...second].map((d) => d.id);
      expect(new Set(ids).size).toBe(3);
      expect(ids.sort()).toEqual(ds.map((d) => d.id).sort());
      expect([...first, ...second].every((d) => d.leaseUntil?.getTime() === later(60_000).getTime() && typeof d.leaseToken === 'string')).toBe(true);
      expect(await h.repo.claimDue(later(59_999), 60_000, 10)).toEqual([]);
      expect((await h.repo.claimDue(later(60_000), 60_000, 10)).map((d) => d.id).sort()).toEqual(ds.map((d) => d.id).sort());
    });

    it('skips excluded endpoints when claiming', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const b = await h.repo.createEndpoint(orgA, endpoint());
      await h.repo.enqueue(orgA, [{ endpointId: a.id, event: 'call.ended', now: t0, body }, { endpointId: b.id, event: 'call.ended', now: t0, body }]);
      expect((await h.repo.claimDue(t0, 1000, 10, [a.id])).map((d) => d.endpointId)).toEqual([b.id]);
    });

    it('records an attempt only under the live claim, which frees or reschedules the delivery', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const [d] = await h.repo.enqueue(orgA, [{ endpointId: a.id, event: 'call.ended', now: t0, body }]);
      const [c1] = await h.repo.claimDue(t0, 1000, 1);
      const [c2] = await h.repo.claimDue(later(1000), 1000, 1); // the first claim expired and was taken over
      expect(c2!.leaseToken).not.toBe(c1!.leaseToken);
      const retryAt = later(31_000);
      expect(await h.repo.recordAttempt(d!.id, c1!.leaseToken!, { status: 'pending', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: retryAt, now: later(1001) })).toBe(false);
      expect(await h.repo.recordAttempt(d!.id, c2!.leaseToken!, { status: 'pending', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: retryAt, now: later(1001) })).toBe(true);
      expect(await h.repo.getDelivery(orgA, a.id, d!.id)).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: retryAt, leaseUntil: null, leaseToken: null });
      expect(await h.repo.claimDue(later(30_999), 1000, 1)).toEqual([]);
      const [c3] = await h.repo.claimDue(retryAt, 1000, 1);
      expect(c3!.id).toBe(d!.id);
      expect(await h.repo.recordAttempt(d!.id, c3!.leaseToken!, { status: 'delivered', attempts: 2, lastStatusCode: 200, lastError: null, nextAttemptAt: null, now: retryAt })).toBe(true);
      expect(await h.repo.claimDue(later(10_000_000), 1000, 1)).toEqual([]);
      expect(await h.repo.nextDueAt()).toBeNull();
    });

    it('pages the delivery log newest first with the total, scoped to the endpoint and organization', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const b = await h.repo.createEndpoint(orgA, endpoint());
      const ds = await h.repo.enqueue(orgA, [1, 2, 3].map(() => ({ endpointId: a.id, event: 'call.ended' as const, now: t0, body })));
      await h.repo.enqueue(orgA, [{ endpointId: b.id, event: 'call.ended', now: t0, body }]);
      const p1 = await h.repo.listDeliveries(orgA, a.id, { page: 1, limit: 2 });
      expect(p1.totalCount).toBe(3);
      expect(p1.deliveries.map((d) => d.id)).toEqual([ds[2]!.id, ds[1]!.id]);
      expect((await h.repo.listDeliveries(orgA, a.id, { page: 2, limit: 2 })).deliveries.map((d) => d.id)).toEqual([ds[0]!.id]);
      expect(await h.repo.listDeliveries(orgB, a.id, { page: 1, limit: 2 })).toEqual({ deliveries: [], totalCount: 0 });
      expect(await h.repo.getDelivery(orgA, b.id, ds[0]!.id)).toBeNull();
      expect(await h.repo.getDelivery(orgB, a.id, ds[0]!.id)).toBeNull();
    });

    it('pages pending, delivered, failed and retried deliveries together, newest first, with the total', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const b = await h.repo.createEndpoint(orgA, endpoint());
      const ds = await h.repo.enqueue(orgA, [1, 2, 3, 4, 5].map(() => ({ endpointId: a.id, event: 'call.ended' as const, now: t0, body })));
      await h.repo.enqueue(orgA, [{ endpointId: b.id, event: 'call.ended', now: t0, body }]);
      const claimed = await h.repo.claimDue(t0, 1000, 6);
      const result = (status: 'delivered' | 'failed' | 'pending') => ({
        status, attempts: 1, lastStatusCode: status === 'delivered' ? 200 : 500, lastError: null, nextAttemptAt: status === 'pending' ? later(30_000) : null, now: t0,
      });
      // ds[0] delivered, ds[1] failed, ds[2] waiting for its retry, ds[3] leased (in flight), ds[4] retried by hand after delivery
      const outcome: Record<number, 'delivered' | 'failed' | 'pending'> = { [ds[0]!.id]: 'delivered', [ds[1]!.id]: 'failed', [ds[2]!.id]: 'pending', [ds[4]!.id]: 'delivered' };
      await h.repo.recordAttempts(claimed.filter((c) => outcome[c.id]).map((c) => ({ id: c.id, leaseToken: c.leaseToken!, result: result(outcome[c.id]!) })));
      await h.repo.retryDelivery(orgA, a.id, ds[4]!.id, later(1));
      const all = await h.repo.listDeliveries(orgA, a.id, { page: 1, limit: 10 });
      expect(all.totalCount).toBe(5);
      expect(all.deliveries.map((d) => [d.id, d.status])).toEqual([
        [ds[4]!.id, 'pending'], [ds[3]!.id, 'pending'], [ds[2]!.id, 'pending'], [ds[1]!.id, 'failed'], [ds[0]!.id, 'delivered'],
      ]);
      const pages = [];
      for (let page = 1; page <= 3; page++) pages.push((await h.repo.listDeliveries(orgA, a.id, { page, limit: 2 })).deliveries.map((d) => d.id));
      expect(pages).toEqual([[ds[4]!.id, ds[3]!.id], [ds[2]!.id, ds[1]!.id], [ds[0]!.id]]);
      expect(await h.repo.listDeliveries(orgA, a.id, { page: 4, limit: 2 })).toEqual({ deliveries: [], totalCount: 5 });
      expect((await h.repo.listDeliveries(orgA, b.id, { page: 1, limit: 10 })).totalCount).toBe(1);
      // deleting the endpoint takes finished and pending deliveries alike; the other endpoint's stay
      expect(await h.repo.deleteEndpoint(orgA, a.id)).toBe(true);
      expect(await h.repo.getDelivery(orgA, a.id, ds[0]!.id)).toBeNull();
      expect(await h.repo.getDelivery(orgA, a.id, ds[2]!.id)).toBeNull();
      expect((await h.repo.claimDue(later(10_000_000), 1000, 10)).map((d) => d.endpointId)).toEqual([b.id]);
    });

    it('retries a failed delivery: pending and due now, attempts kept; another organization gets null', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      const [d] = await h.repo.enqueue(orgA, [{ endpointId: a.id, event: 'call.ended', now: t0, body }]);
      const [c] = await h.repo.claimDue(t0, 1000, 1);
      await h.repo.recordAttempt(d!.id, c!.leaseToken!, { status: 'failed', attempts: 12, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: null, now: t0 });
      expect(await h.repo.retryDelivery(orgB, a.id, d!.id, later(5))).toBeNull();
      expect(await h.repo.retryDelivery(orgA, a.id, d!.id, later(5))).toMatchObject({ status: 'pending', attempts: 12, nextAttemptAt: later(5) });
      expect((await h.repo.claimDue(later(5), 1000, 1)).map((x) => x.id)).toEqual([d!.id]);
    });

    it('deletes an endpoint with its deliveries', async () => {
      const a = await h.repo.createEndpoint(orgA, endpoint());
      await h.repo.enqueue(orgA, [{ endpointId: a.id, event: 'call.ended', now: t0, body }]);
      expect(await h.repo.deleteEndpoint(orgA, a.id)).toBe(true);
      expect(await h.repo.getEndpoint(orgA, a.id)).toBeNull();
      expect(await h.repo.claimDue(later(1), 1000, 10)).toEqual([]);
      expect(await h.repo.deleteEndpoint(orgA, a.id)).toBe(false);
    });
  });
}
