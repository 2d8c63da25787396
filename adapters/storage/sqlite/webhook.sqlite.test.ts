import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebhookEventType } from '../../../core/ports/event-publisher.port.js';
import { runWebhookRepositoryContract } from '../../../test/contracts/webhook.repository.contract.js';
import { migrate, openMigratedSqlite, openSqlite, type SqliteDatabase } from './database.js';
import { migrations } from './migrations/index.js';
import { SqliteIdentityRepository } from './identity.sqlite.js';
import { DELIVERY_ID_BLOCK, SqliteWebhookRepository } from './webhook.sqlite.js';

runWebhookRepositoryContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  const identity = new SqliteIdentityRepository(db);
  const now = new Date();
  const a = await identity.createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now });
  const b = await identity.createOrganizationWithUser({ organizationName: 'B', email: 'b@x.io', name: null, passwordHash: 'h', now });
  return { repo: new SqliteWebhookRepository(db), organizations: [a.organization.id, b.organization.id], cleanup: async () => { db.close(); } };
});

describe('SqliteWebhookRepository.subscribedEndpoints (one lookup per published event)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const endpoint = (events: WebhookEventType[], url = 'https://hooks.example.com/') => ({
    url, events, description: null, secretCiphertext: 'v1:x', secretsKeyId: 'k1', now: new Date(),
  });

  it('reads the endpoints again only after an endpoint write on this connection, through any repository', async () => {
    const db = openMigratedSqlite(':memory:');
    const org = (await new SqliteIdentityRepository(db).createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now: new Date() })).organization.id;
    // counts the statements that read webhook_endpoints (prepare wrapped on the connection itself: the same connection)
    let reads = 0;
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const st = prepare(sql);
      if (!/FROM webhook_endpoints/.test(sql)) return st;
      const all = st.all.bind(st);
      st.all = ((...a: Parameters<typeof all>) => { reads++; return all(...a); }) as typeof st.all;
      return st;
    }) as typeof db.prepare;
    const repo = new SqliteWebhookRepository(db);
    const other = new SqliteWebhookRepository(db);
    const a = await repo.createEndpoint(org, endpoint(['call.ended']));
    expect((await repo.subscribedEndpoints(org, 'call.ended')).map((e) => e.id)).toEqual([a.id]);
    expect(await repo.subscribedEndpoints(org, 'call.started')).toEqual([]);
    expect((await repo.subscribedEndpoints(org, 'call.ended')).map((e) => e.id)).toEqual([a.id]);
    expect(reads).toBe(1);
    // written through another repository on the same connection: seen by the next lookup
    const b = await other.createEndpoint(org, endpoint(['call.ended', 'call.started']));
    expect((await repo.subscribedEndpoints(org, 'call.started')).map((e) => e.id)).toEqual([b.id]);
    await other.updateEndpoint(org, a.id, { events: ['call.started'], url: 'https://new.example.com/', now: new Date() });
    expect((await repo.subscribedEndpoints(org, 'call.started')).map((e) => [e.id, e.url])).toEqual([[a.id, 'https://new.example.com/'], [b.id, 'https://hooks.example.com/']]);
    await other.deleteEndpoint(org, b.id);
    expect((await repo.subscribedEndpoints(org, 'call.started')).map((e) => e.id)).toEqual([a.id]);
    expect(await repo.subscribedEndpoints(org, 'call.ended')).toEqual([]);
    expect(reads).toBe(4);
    db.close();
  });

  /** Two connections to one file database (the sender's process and the API's), an organization made through the second. */
  const twoConnections = async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-sqlite-'));
    dirs.push(dir);
    const path = join(dir, 'callplane.db');
    const worker = openMigratedSqlite(path);
    const api = openMigratedSqlite(path);
    const org = (await new SqliteIdentityRepository(api).createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now: new Date() })).organization.id;
    return { worker, api, org, repo: new SqliteWebhookRepository(worker), apiRepo: new SqliteWebhookRepository(api) };
  };

  it('sees what another connection (another process) committed', async () => {
    const { worker, api, org, repo, apiRepo } = await twoConnections();
    expect(await repo.subscribedEndpoints(org, 'call.ended')).toEqual([]);
    const a = await apiRepo.createEndpoint(org, endpoint(['call.ended']));
    expect((await repo.subscribedEndpoints(org, 'call.ended')).map((e) => e.id)).toEqual([a.id]);
    await apiRepo.updateEndpoint(org, a.id, { url: 'https://moved.example.com/', now: new Date() });
    expect((await repo.subscribedEndpoints(org, 'call.ended')).map((e) => e.url)).toEqual(['https://moved.example.com/']);
    await apiRepo.deleteEndpoint(org, a.id);
    expect(await repo.subscribedEndpoints(org, 'call.ended')).toEqual([]);
    worker.close();
    api.close();
  });

  it('enqueueEvent, which reads the endpoints inside its write transaction, sees what another connection committed', async () => {
    const { worker, api, org, repo, apiRepo } = await twoConnections();
    const event = () => repo.enqueueEvent(org, { event: 'call.ended', now: new Date(), body: (id) => `{"id":${id}}` });
    const a = await apiRepo.createEndpoint(org, endpoint(['call.ended']));
    expect((await event()).deliveries.map((d) => d.endpointId)).toEqual([a.id]);
    const b = await apiRepo.createEndpoint(org, endpoint(['call.ended']));
    expect((await event()).deliveries.map((d) => d.endpointId)).toEqual([a.id, b.id]);
    await apiRepo.deleteEndpoint(org, a.id);
    expect((await event()).endpoints.map((e) => e.id)).toEqual([b.id]);
    await apiRepo.deleteEndpoint(org, b.id);
    expect(await event()).toEqual({ endpoints: [], deliveries: [], leased: false });
    worker.close();
    api.close();
  });
});

describe('SqliteWebhookRepository delivery ids (reserved per connection, one sequence write per block)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const t0 = new Date('2026-03-01T10:00:00.000Z');
  const body = (id: number) => JSON.stringify({ id });
  const setup = async (db: SqliteDatabase) => {
    const org = (await new SqliteIdentityRepository(db).createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now: t0 })).organization.id;
    const repo = new SqliteWebhookRepository(db);
    const endpoint = await repo.createEndpoint(org, { url: 'https://hooks.example.com/', events: ['call.ended'], description: null, secretCiphertext: 'v1:x', secretsKeyId: 'k1', now: t0 });
    const enqueue = async (r: SqliteWebhookRepository, n = 1, make = body) =>
      (await r.enqueue(org, Array.from({ length: n }, () => ({ endpointId: endpoint.id, event: 'call.ended' as const, now: t0, body: make })))).map((d) => d.id);
    return { org, repo, endpoint, enqueue };
  };
  const sequence = (db: SqliteDatabase) => db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'webhook_deliveries'").pluck().get() as number;

  it('writes the sequence once per block of ids, not once per stored delivery', async () => {
    const db = openMigratedSqlite(':memory:');
    const { repo, enqueue } = await setup(db);
    const [first] = await enqueue(repo);
    expect(sequence(db)).toBe(first! + DELIVERY_ID_BLOCK - 1);
    const more = await enqueue(repo, DELIVERY_ID_BLOCK - 1);
    expect(more).toEqual(Array.from({ length: DELIVERY_ID_BLOCK - 1 }, (_, i) => first! + 1 + i));
    expect(sequence(db)).toBe(first! + DELIVERY_ID_BLOCK - 1);
    // the block is used up: the next delivery reserves the next one
    expect(await enqueue(repo)).toEqual([first! + DELIVERY_ID_BLOCK]);
    expect(sequence(db)).toBe(first! + 2 * DELIVERY_ID_BLOCK - 1);
    db.close();
  });

  it('never uses an id twice: not across connections (processes), nor after the newest deliveries were deleted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-sqlite-ids-'));
    dirs.push(dir);
    const path = join(dir, 'callplane.db');
    const one = openMigratedSqlite(path);
    const two = openMigratedSqlite(path);
    const a = await setup(one);
    const b = new SqliteWebhookRepository(two);
    const ids: number[] = [];
    for (let i = 0; i < 3 * DELIVERY_ID_BLOCK; i++) ids.push(...await a.enqueue(i % 2 ? a.repo : b, 1 + (i % 3)));
    expect(new Set(ids).size).toBe(ids.length);
    // every body carries its own row's id
    const rows = one.prepare('SELECT id, body FROM webhook_deliveries').all() as Array<{ id: number; body: string }>;
    expect(rows).toHaveLength(ids.length);
    for (const r of rows) expect(JSON.parse(r.body).id).toBe(r.id);
    // the endpoint and every delivery deleted; a process started afterwards takes ids above all of them
    const highest = Math.max(...ids);
    await a.repo.deleteEndpoint(a.org, a.endpoint.id);
    one.close();
    two.close();
    const three = openMigratedSqlite(path);
    const org = three.prepare('SELECT id FROM organizations').pluck().get() as number;
    const repo = new SqliteWebhookRepository(three);
    const e = await repo.createEndpoint(org, { url: 'https://hooks.example.com/', events: ['call.ended'], description: null, secretCiphertext: 'v1:x', secretsKeyId: 'k1', now: t0 });
    const [next] = await repo.enqueue(org, [{ endpointId: e.id, event: 'call.ended', now: t0, body }]);
    expect(next!.id).toBeGreaterThan(highest);
    three.close();
  });

  it('keeps the block as it was when the insert is rolled back', async () => {
    const db = openMigratedSqlite(':memory:');
    const { repo, enqueue } = await setup(db);
    await expect(enqueue(repo, 1, () => { throw new Error('no body'); })).rejects.toThrow('no body');
    expect(db.prepare('SELECT COUNT(*) FROM sqlite_sequence WHERE name = ?').pluck().get('webhook_deliveries')).toBe(0);
    const [id] = await enqueue(repo);
    expect(id).toBe(1);
    expect(sequence(db)).toBe(DELIVERY_ID_BLOCK);
    db.close();
  });
});

describe('migration 12: the due index holds pending deliveries only', () => {
  it('rebuilds the index of an existing database; its deliveries are still claimed and recorded', async () => {
    const db = openSqlite(':memory:');
    migrate(db, migrations.filter((m) => m.version <= 11));
    const org = (await new SqliteIdentityRepository(db).createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now: new Date() })).organization.id;
    const t0 = new Date('2026-03-01T10:00:00.000Z');
    const before = new SqliteWebhookRepository(db);
    const e = await before.createEndpoint(org, { url: 'https://hooks.example.com/', events: ['call.ended'], description: null, secretCiphertext: 'v1:x', secretsKeyId: 'k1', now: t0 });
    const stored = await before.enqueue(org, [1, 2].map(() => ({ endpointId: e.id, event: 'call.ended' as const, now: t0, body: (id: number) => `{"id":${id}}` })));
    expect(migrate(db, migrations.filter((m) => m.version <= 12))).toEqual([12]);
    expect(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'webhook_deliveries_due'").pluck().get()).toMatch(/WHERE status = 'pending'/);
    const repo = new SqliteWebhookRepository(db);
    const claimed = await repo.claimDue(t0, 1000, 10);
    expect(claimed.map((d) => d.id)).toEqual(stored.map((d) => d.id));
    await repo.recordAttempts(claimed.map((d) => ({ id: d.id, leaseToken: d.leaseToken!, result: { status: 'delivered', attempts: 1, lastStatusCode: 200, lastError: null, nextAttemptAt: null, now: t0 } })));
    expect(db.prepare("SELECT COUNT(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE status = 'pending'").pluck().get()).toBe(0);
    expect(await repo.nextDueAt()).toBeNull();
    // a new delivery after the migration continues above the old ones
    const [next] = await repo.enqueue(org, [{ endpointId: e.id, event: 'call.ended', now: t0, body: (id: number) => `{"id":${id}}` }]);
    expect(next!.id).toBeGreaterThan(stored[1]!.id);
    db.close();
  });
});

describe('migration 13: the per-endpoint delivery index holds finished deliveries only', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const t0 = new Date('2026-03-01T10:00:00.000Z');
  const delivered = (now: Date) => ({ status: 'delivered' as const, attempts: 1, lastStatusCode: 200, lastError: null, nextAttemptAt: null, now });

  it('rebuilds the indexes of an existing database; its delivery log pages pending and finished deliveries together', async () => {
    const db = openSqlite(':memory:');
    migrate(db, migrations.filter((m) => m.version <= 12));
    const org = (await new SqliteIdentityRepository(db).createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now: t0 })).organization.id;
    const before = new SqliteWebhookRepository(db);
    const e = await before.createEndpoint(org, { url: 'https://hooks.example.com/', events: ['call.ended'], description: null, secretCiphertext: 'v1:x', secretsKeyId: 'k1', now: t0 });
    const stored = await before.enqueue(org, [1, 2, 3].map(() => ({ endpointId: e.id, event: 'call.ended' as const, now: t0, body: (id: number) => `{"id":${id}}` })));
    const [c] = await before.claimDue(t0, 1000, 1);
    await before.recordAttempt(c!.id, c!.leaseToken!, delivered(t0));
    expect(migrate(db)).toEqual([13]);
    expect(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'webhook_deliveries_endpoint_done'").pluck().get()).toMatch(/WHERE status <> 'pending'/);
    expect(db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name = 'webhook_deliveries_endpoint'").pluck().get()).toBe(0);
    const repo = new SqliteWebhookRepository(db);
    const [next] = await repo.enqueue(org, [{ endpointId: e.id, event: 'call.ended', now: t0, body: (id: number) => `{"id":${id}}` }]);
    const ids = [next!.id, ...stored.map((d) => d.id).reverse()];
    expect((await repo.listDeliveries(org, e.id, { page: 1, limit: 10 })).deliveries.map((d) => [d.id, d.status])).toEqual(
      ids.map((id) => [id, id === c!.id ? 'delivered' : 'pending']));
    expect((await repo.listDeliveries(org, e.id, { page: 2, limit: 3 }))).toMatchObject({ totalCount: 4, deliveries: [{ id: ids[3] }] });
    // only the finished delivery is in the endpoint index
    expect(db.prepare("SELECT COUNT(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_endpoint_done WHERE organization_id = ? AND endpoint_id = ? AND status <> 'pending'").pluck().get(org, e.id)).toBe(1);
    db.close();
  });

  it('reads an endpoint\'s log, its count and its deletion through indexes, never a scan of every delivery', () => {
    const db = openMigratedSqlite(':memory:');
    const repo = new SqliteWebhookRepository(db);
    const sqls = (repo as unknown as { q: Record<string, { source: string }> }).q;
    for (const name of ['page', 'count', 'deleteDone', 'deletePending']) {
      const params = name === 'page' ? [{ org: 1, endpoint: 1, limit: 10, offset: 0 }] : name === 'count' ? [{ org: 1, endpoint: 1 }] : [1, 1];
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${sqls[name]!.source}`).all(...(params as never[])) as Array<{ detail: string }>;
      const details = plan.map((r) => r.detail);
      // a SCAN of the table itself would read every delivery of every endpoint; scans of the small due index are fine
      expect(details.filter((d) => /^SCAN (webhook_deliveries|d)\b(?! USING)/.test(d))).toEqual([]);
    }
    db.close();
  });

  it('stores a published event with one WAL page fewer: the insert writes the table and the due index only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-webhook-wal-'));
    dirs.push(dir);
    const db = openMigratedSqlite(join(dir, 'db.sqlite'));
    db.pragma('wal_autocheckpoint = 0');
    const org = (await new SqliteIdentityRepository(db).createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now: t0 })).organization.id;
    const repo = new SqliteWebhookRepository(db);
    const e = await repo.createEndpoint(org, { url: 'https://hooks.example.com/', events: ['call.ended'], description: null, secretCiphertext: 'v1:x', secretsKeyId: 'k1', now: t0 });
    const one = () => repo.enqueue(org, [{ endpointId: e.id, event: 'call.ended', now: t0, body: (id: number) => `{"id":${id},"data":"${'x'.repeat(600)}"}` }]);
    await one(); // reserves the connection's block of ids (one sequence write)
    const frames = () => (db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]!.log;
    db.pragma('wal_checkpoint(TRUNCATE)');
    const start = frames();
    for (let i = 0; i < 20; i++) await one();
    // the table's leaf and the due index's leaf per commit (a page split now and then adds a few); with the full
    // per-endpoint index it was three per commit (3.35 here)
    expect((frames() - start) / 20).toBeLessThan(2.8);
    db.close();
  });
});
