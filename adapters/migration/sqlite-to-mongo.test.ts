/**
 * `callplane migrate --from sqlite --to mongodb`, run in-process through `runCli` with the MongoDB connection
 * injected: a SQLite installation populated through the API (every table, a finished campaign and one cut off with
 * calls in flight) is copied to the in-process Mongo TEST DOUBLE (and a real server when MONGODB_URI is set), the
 * counts match, a second run is refused without --force and idempotent with it, and the service then runs on
 * the MongoDB copy: old sessions and API keys authenticate, every record reads back through the Mongo adapters,
 * new ids continue after the copied ones, and the interrupted campaign finishes.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runCli } from '../../http/cli.js';
import { describeEachMongoTarget, type MongoConnection } from '../../test/fakes/mongo/mongo-target.js';
import { createSimulatorConfig, createWorkflow, uploadCsv, waitFor } from '../../test/e2e/campaign-support.js';
import { apiClient, startInProcessService, type InProcessService } from '../../test/e2e/multi-process-support.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { Collections } from '../storage/mongo/mongo-schema.js';
import { formatMigrationReport, migratedCollections } from './sqlite-to-mongo.js';

const TABLES = [
  'organizations', 'users', 'sessions', 'api_keys', 'workflows', 'workflow_definitions', 'runs', 'telephony_configurations', 'phone_numbers',
  'ai_services', 'chats', 'webhook_endpoints', 'webhook_deliveries', 'uploads', 'campaigns', 'campaign_contacts', 'campaign_attempts', 'campaign_logs', 'organization_settings',
];
const ENGINE = { CALLPLANE_CAMPAIGN_MAX_CALL_MS: '1000', CALLPLANE_CAMPAIGN_RECONCILE_MS: '200' };

interface Fixture {
  token: string;
  apiKey: string;
  workflowId: number;
  configId: number;
  aiServiceId: number;
  /** A chat (its greeting needs no model call) and its body as the SQLite service answered it. */
  chat: { workflowId: number; id: number; body: unknown };
  doneCampaign: number;
  cutCampaign: number;
}

/** Populates every table through the API of an embedded (SQLite) service, then stops it with two calls in flight. */
async function populate(dir: string): Promise<Fixture> {
  const svc = await startInProcessService('all', { kind: 'sqlite' }, dir, { env: ENGINE });
  try {
    const api = apiClient(svc.url!);
    const signup = await api.post('/auth/signup', { email: 'owner@example.com', password: 'correct horse battery', organization_name: 'Embedded' });
    const auth = { token: signup.body.token as string };
    const key = await api.post('/user/api-keys', { name: 'ci' }, auth);
    expect(key.status).toBe(200);
    const workflowId = await createWorkflow(api, auth);
    expect((await fetch(`${svc.url}/api/v1/workflow/${workflowId}`, {
      method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${auth.token}` },
      body: JSON.stringify({ workflow_definition: exampleWorkflowDefinition }),
    })).status).toBe(200);
    const configId = await createSimulatorConfig(api, auth, { ringMs: 5, talkMs: 10 });
    const aiService = await api.post('/organizations/ai-services', { name: 'Model', config: { provider: 'openai', api_key: 'sk-migrated-secret-4321' } }, auth);
    expect(aiService.status).toBe(200);
    // a webhook endpoint (nothing listens on port 9: its deliveries stay pending) fed by the campaigns below
    const hook = await api.post('/organizations/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['campaign.completed', 'call.ended'] }, auth);
    expect(hook.status).toBe(200);
    const chatAgent = await api.post('/workflow/create/definition', {
      name: 'Chat agent', workflow_definition: exampleWorkflowDefinition, workflow_configurations: { llm: { service_id: aiService.body.id, model: 'gpt-4o-mini' } },
    }, auth);
    expect(chatAgent.status).toBe(200);
    const chat = await api.post(`/workflow/${chatAgent.body.id}/chats`, { initial_context: { first_name: 'Dana' } }, auth);
    expect(chat.status).toBe(200);
    const number = await api.post(`/organizations/telephony-configs/${configId}/phone-numbers`, { address: '+15550001111', is_default_caller_id: true }, auth);
    expect(number.status).toBe(200);
    expect((await fetch(`${svc.url}/api/v1/organizations/settings`, {
      method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${auth.token}` }, body: JSON.stringify({ price_per_minute_usd: 0.5 }),
    })).status).toBe(200);

    const create = async (name: string, csv: string, configurationId: number) => {
      const file = await uploadCsv(api, auth, csv);
      const c = await api.post('/campaign/create', {
        name, workflow_id: workflowId, source_type: 'csv', source_id: file, max_concurrency: 2, retry_config: { enabled: false }, telephony_configuration_id: configurationId,
      }, auth);
      expect(c.status).toBe(200);
      expect((await api.post(`/campaign/${c.body.id}/start`, undefined, auth)).body.state).toBe('running');
      return c.body.id as number;
    };
    const doneCampaign = await create('Done', 'phone_number\n+15551000010\n+15551000011\n+15551000012\n', configId);
    await waitFor(async () => (await api.get(`/campaign/${doneCampaign}`, auth)).body.state === 'completed', 10_000, 20);

    // a campaign cut off: two long calls in flight, one contact (busy) still pending
    const slowConfig = await createSimulatorConfig(api, auth, { ringMs: 5, talkMs: 600_000, name: 'Slow', isDefault: false });
    const cutCampaign = await create('Cut', 'phone_number\n+15552000010\n+15552000011\n+15552000001\n', slowConfig);
    await waitFor(async () => (await api.get(`/campaign/${cutCampaign}`, auth)).body.executed_count === 2, 10_000, 20);
    return { token: auth.token, apiKey: key.body.api_key, workflowId, configId, aiServiceId: aiService.body.id, chat: { workflowId: chatAgent.body.id, id: chat.body.id, body: chat.body }, doneCampaign, cutCampaign };
  } finally {
    await svc.stop();
  }
}

describeEachMongoTarget('callplane migrate --from sqlite --to mongodb', (target) => {
  let dir: string;
  let conn: MongoConnection;
  const services: InProcessService[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'callplane-migrate-'));
    conn = await target.connect();
  });
  afterEach(async () => {
    for (const s of services.splice(0)) await s.stop();
    await conn.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const migrate = async (...extra: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(['migrate', '--from', 'sqlite', '--to', 'mongodb', '--mongodb-uri', 'mongodb://injected/x', ...extra], { CALLPLANE_DATA_DIR: dir },
      (s) => (stdout += s), (s) => (stderr += s), { openMongo: async () => ({ db: conn.db, close: async () => undefined }) });
    return { code, stdout, stderr };
  };

  it('copies every table with its ids, verified by counts; refuses a non-empty target without --force; the service runs on the copy', async () => {
    const f = await populate(dir);
    const sqlite = new Database(join(dir, 'callplane.db'), { readonly: true });
    const counts = Object.fromEntries(TABLES.map((t) => [t, (sqlite.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n]));
    const maxIds = Object.fromEntries(TABLES.filter((t) => t !== 'organization_settings').map((t) => [t, (sqlite.prepare(`SELECT MAX(id) AS m FROM ${t}`).get() as { m: number }).m]));
    const openAttempts = sqlite.prepare(`SELECT id, check_at FROM campaign_attempts WHERE status <> 'ended' ORDER BY id`).all() as { id: number; check_at: number }[];
    const sourceRuns = sqlite.prepare('SELECT * FROM runs ORDER BY id').all() as { id: number; name: string; provider_call_id: string | null }[];
    sqlite.close();
    for (const t of TABLES) expect([t, counts[t]! > 0]).toEqual([t, true]); // the fixture covers every table
    expect(openAttempts).toHaveLength(2);

    const first = await migrate();
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    for (const t of TABLES) expect(first.stdout).toMatch(new RegExp(`^${t} +${counts[t]} +${counts[t]}  ok$`, 'm'));
    expect(first.stdout).toContain('migration complete: every count matches');
    expect(first.stdout).toContain('scheduler jobs: not copied');

    // ids kept, counters past them, calls in flight carried as slots held by their attempts and contacts
    const runs = await conn.db.collection('runs').find({}).sort({ _id: 1 }).toArray();
    expect(runs.map((r) => [r._id, r.name, r.providerCallId])).toEqual(sourceRuns.map((r) => [r.id, r.name, r.provider_call_id]));
    for (const [t, max] of Object.entries(maxIds)) {
      const counter = await conn.db.collection<{ _id: string; seq: number }>(Collections.counters).findOne({ _id: t });
      expect([t, counter?.seq]).toEqual([t, max]);
    }
    const cut = await conn.db.collection<{ _id: number; inFlightSlots: unknown[] }>('campaigns').findOne({ _id: f.cutCampaign });
    expect(cut!.inFlightSlots).toEqual(openAttempts.map((a) => ({ token: a.id, until: new Date(a.check_at) })));
    expect(await conn.db.collection('campaign_contacts').countDocuments({ campaignId: f.cutCampaign, status: 'active', slotToken: { $in: openAttempts.map((a) => a.id) } })).toBe(2);

    // a second run: refused without --force, idempotent with it
    const again = await migrate();
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already holds Callplane records .*--force/);
    const forced = await migrate('--force');
    expect(forced.code).toBe(0);
    for (const t of TABLES) expect(forced.stdout).toMatch(new RegExp(`^${t} +${counts[t]} +${counts[t]}  ok$`, 'm'));

    // the service on the copy (same secret key, same data directory for the uploaded files)
    const svc = await startInProcessService('all', { kind: 'mongodb', client: conn.client, db: conn.db }, dir, { env: ENGINE });
    services.push(svc);
    const api = apiClient(svc.url!);
    const auth = { token: f.token };
    expect((await api.get('/auth/me', auth)).status).toBe(200);
    const byKey = await fetch(`${svc.url}/api/v1/workflow/${f.workflowId}`, { headers: { 'x-api-key': f.apiKey } });
    expect(byKey.status).toBe(200);
    expect((await api.get(`/workflow/${f.workflowId}/versions`, auth)).body.versions).toHaveLength(counts.workflow_definitions! - 1); // the chat agent holds the other
    const config = await api.get(`/organizations/telephony-configs/${f.configId}`, auth);
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({ id: f.configId, provider: 'simulator', is_default_outbound: true });
    expect((await api.get(`/organizations/telephony-configs/${f.configId}/phone-numbers`, auth)).body.phone_numbers).toMatchObject([{ address_normalized: '+15550001111', is_default_caller_id: true }]);
    expect((await api.get('/organizations/settings', auth)).body).toMatchObject({ price_per_minute_usd: 0.5 });
    // an AI service's secret still opens (same key, same record-bound context): the masked tail is the original's
    expect((await api.get(`/organizations/ai-services/${f.aiServiceId}`, auth)).body).toMatchObject({ provider: 'openai', credentials: { api_key: '*******************4321' } });
    expect((await api.get(`/campaign/${f.doneCampaign}`, auth)).body).toMatchObject({ state: 'completed', processed_rows: 3, executed_count: 3 });
    // the webhook endpoint and its delivery log came along
    const hooks = (await api.get('/organizations/webhooks', auth)).body.webhooks;
    expect(hooks).toMatchObject([{ url: 'http://127.0.0.1:9/hook', events: ['campaign.completed', 'call.ended'] }]);
    // (the interrupted campaign goes on calling on the copy: its calls add deliveries)
    expect((await api.get(`/organizations/webhooks/${hooks[0].id}/deliveries`, auth)).body.total_count).toBeGreaterThanOrEqual(counts.webhook_deliveries!);
    // a chat reads back whole (its conversation state, revision and times)
    expect((await api.get(`/workflow/${f.chat.workflowId}/chats/${f.chat.id}`, auth)).body).toEqual(f.chat.body);
    // new records continue after the copied ids
    const next = await createWorkflow(api, auth, 'After migration');
    expect(next).toBe(maxIds.workflows! + 1);
    // the interrupted campaign: the sweep times its two lost calls out, the last contact is dialed, it completes
    await waitFor(async () => (await api.get(`/campaign/${f.cutCampaign}`, auth)).body.state === 'completed', 15_000, 50);
    expect((await api.get(`/campaign/${f.cutCampaign}`, auth)).body).toMatchObject({ processed_rows: 3, executed_count: 3 });
    expect(await conn.db.collection('runs').countDocuments({ campaignId: f.cutCampaign })).toBe(3);
    // the copied runs plus the one dialed since, read back through the usage report
    expect((await api.get('/organizations/usage/runs', auth)).body.total_count).toBe(counts.runs! + 1);
  }, 60_000);

  it('answers bad arguments, a missing source and a missing target with a usage line and a non-zero exit', async () => {
    const out: string[] = [];
    const run = (argv: string[], env: Record<string, string> = { CALLPLANE_DATA_DIR: dir }) => runCli(argv, env, (s) => out.push(s), (s) => out.push(s), {
      openMongo: async () => ({ db: conn.db, close: async () => undefined }),
    });
    expect(await run(['migrate', '--from', 'mongodb', '--to', 'sqlite'])).toBe(2);
    expect(await run(['migrate', '--from', 'sqlite', '--to', 'mongodb', '--mongodb-uri', 'mongodb://x/y'])).toBe(1);
    expect(out.join('')).toContain('no SQLite database at');
    new Database(join(dir, 'callplane.db')).close();
    expect(await run(['migrate', '--from', 'sqlite', '--to', 'mongodb'])).toBe(2);
    expect(out.join('')).toContain('--mongodb-uri or MONGODB_URI');
    expect(await run(['migrate', '--from', 'sqlite', '--to', 'mongodb'], { CALLPLANE_DATA_DIR: dir, MONGODB_URI: 'mongodb://env/db' })).toBe(0);
    expect(await conn.db.collection('organizations').countDocuments()).toBe(0);
  });
});

describe('migration report', () => {
  it('marks differing counts and says the migration is incomplete', () => {
    const text = formatMigrationReport({ ok: false, notes: [], tables: [{ table: 'runs', collection: 'runs', source: 3, target: 2 }] });
    expect(text).toMatch(/^runs +3 +2  MISMATCH$/m);
    expect(text).toContain('migration INCOMPLETE');
    expect(migratedCollections()).toEqual(expect.arrayContaining(['runs', 'organization_settings', 'campaign_logs']));
    expect(migratedCollections()).not.toContain('counters');
  });
});
