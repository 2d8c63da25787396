import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WebhookEventType } from '../../../core/ports/event-publisher.port.js';
import { runWebhookRepositoryContract } from '../../../test/contracts/webhook.repository.contract.js';
import { openMigratedSqlite } from './database.js';
import { SqliteIdentityRepository } from './identity.sqlite.js';
import { SqliteWebhookRepository } from './webhook.sqlite.js';

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

  it('sees what another connection (another process) committed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-sqlite-'));
    dirs.push(dir);
    const path = join(dir, 'callplane.db');
    const worker = openMigratedSqlite(path);
    const api = openMigratedSqlite(path);
    const org = (await new SqliteIdentityRepository(api).createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now: new Date() })).organization.id;
    const repo = new SqliteWebhookRepository(worker);
    const apiRepo = new SqliteWebhookRepository(api);
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
});
