import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { transformFileSync } from '@swc/core';
import { DEFAULT_CIRCUIT_BREAKER, DEFAULT_RETRY_CONFIG } from '../../../core/campaigns/campaign.js';
import { runCampaignRepositoryContract } from '../../../test/contracts/campaign.repository.contract.js';
import { SqliteCampaignRepository, attemptFromRow, campaignFromRow } from './campaign.sqlite.js';
import { openMigratedSqlite, type SqliteDatabase } from './database.js';
import { SqliteUploadRepository } from './upload.sqlite.js';

function seedOrganizations(db: SqliteDatabase): [number, number] {
  const insert = db.prepare<[string], { id: number }>('INSERT INTO organizations (name, created_at) VALUES (?, 0) RETURNING id');
  return [insert.get('A')!.id, insert.get('B')!.id];
}

runCampaignRepositoryContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  return { repo: new SqliteCampaignRepository(db), organizations: seedOrganizations(db), cleanup: async () => void db.close() };
});

describe('sqlite campaign mappers', () => {
  it('maps rows to domain objects', () => {
    const c = campaignFromRow({
      id: 1, organization_id: 2, name: 'n', workflow_id: 3, telephony_configuration_id: null, state: 'draft', source_type: 'csv', source_id: 's',
      total_rows: 4, processed_rows: 1, failed_rows: 1, executed_count: 2, total_queued_count: 5, in_flight: 0, retry_config: JSON.stringify(DEFAULT_RETRY_CONFIG),
      max_concurrency: 5, schedule_config: null, circuit_breaker: JSON.stringify(DEFAULT_CIRCUIT_BREAKER), parent_campaign_id: null, redialed_campaign_id: null,
      breaker_reset_at: null, created_at: 10, started_at: null, completed_at: 20, updated_at: 30,
    });
    expect(c).toMatchObject({ organizationId: 2, workflowId: 3, totalQueuedCount: 5, scheduleConfig: null, createdAt: new Date(10), completedAt: new Date(20) });
    expect(attemptFromRow({
      id: 1, organization_id: 2, campaign_id: 3, contact_id: 4, attempt_number: 1, status: 'placed', run_id: 9, provider_call_id: 'p', outcome: null,
      claimed_at: 1, check_at: 2, placed_at: 3, ended_at: null,
    })).toMatchObject({ runId: 9, providerCallId: 'p', placedAt: new Date(3), endedAt: null });
  });
});

describe('sqlite upload repository', () => {
  it('records an upload, finds it only in its organization, marks it uploaded', async () => {
    const db = openMigratedSqlite(':memory:');
    const [a, b] = seedOrganizations(db);
    const repo = new SqliteUploadRepository(db);
    const now = new Date('2026-01-01T00:00:00Z');
    const u = await repo.create(a, { fileKey: `uploads/${a}/u/list.csv`, fileName: 'list.csv', declaredSize: 10, contentType: 'text/csv', expiresAt: new Date(now.getTime() + 3600_000), now });
    expect(u).toMatchObject({ organizationId: a, declaredSize: 10, uploadedAt: null, size: null });
    await expect(repo.create(a, { fileKey: u.fileKey, fileName: 'x.csv', declaredSize: 1, contentType: 'text/csv', expiresAt: now, now })).rejects.toMatchObject({ code: 'upload_exists' });
    expect(await repo.getByKey(b, u.fileKey)).toBeNull();
    expect(await repo.markUploaded(b, u.fileKey, { size: 9, now })).toBeNull();
    expect(await repo.markUploaded(a, u.fileKey, { size: 9, now })).toMatchObject({ size: 9, uploadedAt: now });
    expect((await repo.getByKey(a, u.fileKey))!.size).toBe(9);
    db.close();
  });
});

describe('sqlite campaign creation of a large list', () => {
  const input = (contacts: Array<{ row: number; phoneNumber: string; context: Record<string, string> }>) => ({
    name: 'big', workflowId: 1, telephonyConfigurationId: 1, sourceType: 'csv' as const, sourceId: 'k', retryConfig: DEFAULT_RETRY_CONFIG,
    maxConcurrency: 5, scheduleConfig: null, circuitBreaker: DEFAULT_CIRCUIT_BREAKER, logs: [], now: new Date(), contacts,
  });
  const numbers = (n: number) => Array.from({ length: n }, (_, i) => ({ row: i + 2, phoneNumber: `+1555${String(i).padStart(7, '0')}`, context: { i: String(i) } }));

  it('stores every contact over several transactions, letting timers run in between', async () => {
    const db = openMigratedSqlite(':memory:');
    const [org] = seedOrganizations(db);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 0);
    const c = await new SqliteCampaignRepository(db).create(org, input(numbers(5_000)));
    clearInterval(timer);
    expect(c.totalRows).toBe(5_000);
    expect((db.prepare('SELECT COUNT(*) AS n FROM campaign_contacts WHERE campaign_id = ?').get(c.id) as { n: number }).n).toBe(5_000);
    expect(ticks).toBeGreaterThan(0);
    db.close();
  });

  it('removes the campaign, its contacts and logs when a later batch fails', async () => {
    const db = openMigratedSqlite(':memory:');
    const [org] = seedOrganizations(db);
    // a number repeated far into the list breaks UNIQUE (campaign_id, phone_number) in a later transaction (the 7th).
    // Matched by its code, not with toThrow(): better-sqlite3's native addon keeps the SqliteError class of the first
    // test file that loaded it in this jest worker, so in a later file the error's Error.prototype is another realm's
    // and toThrow() reports "did not throw" (seen in full runs only, never when this file runs alone).
    const contacts = [...numbers(3_000), { row: 3_002, phoneNumber: '+15550000001', context: {} }];
    await expect(new SqliteCampaignRepository(db).create(org, { ...input(contacts), logs: [{ ts: new Date(), level: 'info' as const, event: 'campaign_created', message: 'x', details: {} }] }))
      .rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE', message: expect.stringContaining('campaign_contacts.phone_number') });
    for (const table of ['campaigns', 'campaign_contacts', 'campaign_logs']) {
      expect([table, (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n]).toEqual([table, 0]);
    }
    db.close();
  });
});

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(here, '../../..');

describe('claims from several OS processes on one database file', () => {
  it('never exceed max_concurrency and never claim a contact twice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'campaign-claims-'));
    try {
      symlinkSync(join(projectRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
      // each source and, transitively, the project files it imports at run time (type-only imports are gone after
      // swc), at the same place under dir, so a new helper module of the repository needs no change here
      const compiled = new Set<string>();
      const compile = (src: string): void => {
        if (compiled.has(src)) return;
        compiled.add(src);
        const { code } = transformFileSync(src, { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } });
        const dest = join(dir, relative(projectRoot, src)).replace(/\.ts$/, '.js');
        mkdirSync(dirname(dest), { recursive: true });
        writeFileSync(dest, code);
        for (const m of code.matchAll(/(?:\bfrom|\bimport)\s*['"](\.{1,2}\/[^'"]+)\.js['"]/g)) compile(resolve(dirname(src), `${m[1]}.ts`));
      };
      for (const f of ['database.ts', 'campaign.sqlite.ts']) compile(join(here, f));
      const compiledDir = `./${relative(projectRoot, here)}`;
      const file = join(dir, 'db.sqlite');
      const db = openMigratedSqlite(file);
      const [org] = seedOrganizations(db);
      const repo = new SqliteCampaignRepository(db);
      const CAP = 3;
      const N = 60;
      const c = await repo.create(org, {
        name: 'mp', workflowId: 1, telephonyConfigurationId: 1, sourceType: 'csv', sourceId: 'k', retryConfig: DEFAULT_RETRY_CONFIG, maxConcurrency: CAP,
        scheduleConfig: null, circuitBreaker: DEFAULT_CIRCUIT_BREAKER, logs: [], now: new Date(),
        contacts: Array.from({ length: N }, (_, i) => ({ row: i + 2, phoneNumber: `+1555${String(i).padStart(7, '0')}`, context: {} })),
      });
      await repo.transition(org, c.id, { from: ['draft'], to: 'running', now: new Date() });
      writeFileSync(join(dir, 'worker.mjs'), `
import { openSqlite } from '${compiledDir}/database.js';
import { SqliteCampaignRepository } from '${compiledDir}/campaign.sqlite.js';
const db = openSqlite(process.argv[2]);
const repo = new SqliteCampaignRepository(db);
const [org, id] = [Number(process.argv[3]), Number(process.argv[4])];
const claimed = [];
let maxSeen = 0;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
for (;;) {
  const r = await repo.claimNextContact(org, id, { now: new Date(), leaseMs: 60000 });
  if (r.kind === 'none_due' || r.kind === 'not_running') break;
  if (r.kind === 'at_capacity') { await sleep(1); continue; }
  claimed.push(r.contact.id);
  maxSeen = Math.max(maxSeen, db.prepare('SELECT in_flight FROM campaigns WHERE id = ?').get(id).in_flight);
  await repo.markDialing(org, r.attempt.id, { now: new Date(), checkAt: new Date(Date.now() + 60000) });
  await repo.attachRun(org, r.attempt.id, { runId: r.attempt.id, now: new Date() });
  await sleep(2);
  await repo.recordOutcome(org, r.attempt.id, { outcome: 'completed', now: new Date(), retryAt: null });
}
process.stdout.write(JSON.stringify({ claimed, maxSeen }));
db.close();
`);
      const runWorker = () =>
        new Promise<{ claimed: number[]; maxSeen: number }>((ok, fail) => {
          const child = spawn(process.execPath, [join(dir, 'worker.mjs'), file, String(org), String(c.id)], { cwd: dir });
          let out = '';
          let err = '';
          child.stdout.on('data', (d) => (out += d));
          child.stderr.on('data', (d) => (err += d));
          child.on('exit', (code) => (code === 0 ? ok(JSON.parse(out)) : fail(new Error(err))));
        });
      const results = await Promise.all([runWorker(), runWorker(), runWorker(), runWorker()]);
      const all = results.flatMap((r) => r.claimed);
      expect(all.length).toBe(N);
      expect(new Set(all).size).toBe(N);
      for (const r of results) expect(r.maxSeen).toBeLessThanOrEqual(CAP);
      const final = await repo.get(org, c.id);
      expect(final).toMatchObject({ inFlight: 0, processedRows: N, executedCount: N });
      expect((await repo.listAttempts(org, c.id)).length).toBe(N);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
