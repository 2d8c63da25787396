/**
 * Process roles and a shared store, with every "process" a whole service container inside this test process
 * (multi-process-support.ts): the mongodb mode runs a simulator campaign to completion on Agenda's MongoDB
 * backend (on the in-process Mongo TEST DOUBLE, and on a real server when MONGODB_URI is set); an api process
 * serves HTTP, applies statuses and enqueues dispatch jobs but never runs jobs, dials or opens persistent provider
 * connections; worker processes have no HTTP and do the dialing; any number of them share one store (MongoDB or
 * one SQLite file). The spawned-process version with the cap measured across processes is
 * multi-process.e2e.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { ProviderPlugin } from '../../plugins/sdk.js';
import simulator from '../../providers/simulator/index.js';
import ari from '../../providers/ari/index.js';
import twilio from '../../providers/twilio/index.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';
import { JobScheduler } from '../../core/ports/job-scheduler.port.js';
import { AgendaJobScheduler } from '../../adapters/scheduler/agenda/agenda-job-scheduler.js';
import { DeferredJobScheduler } from '../../adapters/scheduler/deferred-job-scheduler.js';
import { AGENDA_JOBS_COLLECTION } from '../../plugins/modules/scheduler.module.js';
import { describeEachMongoTarget, type MongoConnection } from '../fakes/mongo/mongo-target.js';
import { createSimulatorConfig, createWorkflow, csvOf, uploadCsv, waitFor, type CampaignApi } from './campaign-support.js';
import { apiClient, startInProcessService, type InProcessService, type SharedStore } from './multi-process-support.js';

/** A registry whose simulator plugin counts the provider instances this process creates (optionally persistent). */
function countingRegistry(persistentConnection = false): { registry: ProviderRegistry; created: () => number } {
  let n = 0;
  const counted: ProviderPlugin = {
    ...simulator,
    persistentConnection,
    create: (config, context) => {
      const provider = simulator.create(config, context);
      // A persistent-connection plugin opens its connection when it listens; an api process only asks one-off
      // questions (the credentials check), so its instances never listen.
      if (persistentConnection) {
        if (context.listen !== false) n++;
        return provider;
      }
      // Otherwise what counts is dialing.
      const placeCall = provider.placeCall.bind(provider);
      provider.placeCall = (...args) => {
        n++;
        return placeCall(...args);
      };
      return provider;
    },
  };
  return { registry: ProviderRegistry.builtIn({ allowPrivateNetwork: true }, [ari, twilio, counted]), created: () => n };
}

async function signupWithCampaignSetup(api: CampaignApi, contacts: number, maxConcurrency: number) {
  const signup = await api.post('/auth/signup', { email: `roles${Date.now()}${Math.random()}@example.com`, password: 'correct horse battery' });
  expect(signup.status).toBe(200);
  const auth = { token: signup.body.token as string };
  const workflowId = await createWorkflow(api, auth);
  await createSimulatorConfig(api, auth, { ringMs: 5, talkMs: 20 });
  const key = await uploadCsv(api, auth, csvOf(contacts));
  const c = await api.post('/campaign/create', {
    name: 'Roles', workflow_id: workflowId, source_type: 'csv', source_id: key, max_concurrency: maxConcurrency, retry_config: { enabled: false },
  }, auth);
  expect(c.status).toBe(200);
  return { auth, campaignId: c.body.id as number };
}

/** The scheduler doing the work: on mongodb the bound one defers building it to its first use (DeferredJobScheduler). */
const realScheduler = (svc: InProcessService): JobScheduler | undefined => {
  const bound = svc.container.get<JobScheduler>(JobScheduler);
  return bound instanceof DeferredJobScheduler ? bound.current : bound;
};
const isStarted = (svc: InProcessService) => (realScheduler(svc) as unknown as { started?: boolean } | undefined)?.started === true;

describe('process roles', () => {
  let dir: string;
  const services: InProcessService[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'callplane-roles-'));
  });
  afterEach(async () => {
    for (const s of services.splice(0).reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async (...args: Parameters<typeof startInProcessService>) => {
    const s = await startInProcessService(...args);
    services.push(s);
    return s;
  };

  describeEachMongoTarget('mongodb mode', (target) => {
    let conn: MongoConnection;
    let store: SharedStore;
    beforeEach(async () => {
      conn = await target.connect();
      store = { kind: 'mongodb', client: conn.client, db: conn.db };
    });
    afterEach(async () => {
      for (const s of services.splice(0).reverse()) await s.stop();
      await conn.close();
    });

    it('runs a simulator campaign to completion with Agenda on @agendajs/mongo-backend (role all)', async () => {
      const svc = await start('all', store, dir);
      const scheduler = realScheduler(svc);
      expect(scheduler).toBeInstanceOf(AgendaJobScheduler);
      expect((scheduler as AgendaJobScheduler).agenda.db.constructor.name).toBe('MongoJobRepository');
      const api = apiClient(svc.url!);
      const { auth, campaignId } = await signupWithCampaignSetup(api, 30, 5);
      expect((await api.post(`/campaign/${campaignId}/start`, undefined, auth)).body.state).toBe('running');
      await waitFor(async () => (await api.get(`/campaign/${campaignId}`, auth)).body.state === 'completed', 20_000, 50);
      expect((await api.get(`/campaign/${campaignId}`, auth)).body).toMatchObject({ processed_rows: 30, executed_count: 30, total_rows: 30 });
      expect(await conn.db.collection('runs').countDocuments({ campaignId })).toBe(30);
      expect(await conn.db.collection('campaign_attempts').countDocuments({ campaignId })).toBe(30);
      // the scheduler's jobs live in the same database
      expect(await conn.db.collection(AGENDA_JOBS_COLLECTION).countDocuments({ name: 'campaign.reconcile' })).toBe(1);
      // usage and organization settings are served from MongoDB too
      const usage = await api.get('/organizations/usage/runs?limit=5', auth);
      expect(usage.status).toBe(200);
      expect(usage.body).toMatchObject({ total_count: 30, total_pages: 6 });
      expect(usage.body.runs).toHaveLength(5);
    }, 30_000);

    it('an api process enqueues dispatch without running it; two workers without HTTP dial every contact once', async () => {
      const apiCount = countingRegistry();
      const apiSvc = await start('api', store, dir, { providers: apiCount.registry });
      expect(isStarted(apiSvc)).toBe(false);
      const api = apiClient(apiSvc.url!);
      const { auth, campaignId } = await signupWithCampaignSetup(api, 40, 4);
      expect((await api.post(`/campaign/${campaignId}/start`, undefined, auth)).body.state).toBe('running');
      // the start left a dispatch job in the shared store; with no worker up nothing runs it
      const pending = () => conn.db.collection(AGENDA_JOBS_COLLECTION).countDocuments({ name: 'campaign.dispatch', 'data.payload.campaignId': campaignId });
      expect(await pending()).toBe(1);
      await new Promise((r) => setTimeout(r, 400)); // several polling periods of a worker (50 ms)
      expect(await pending()).toBe(1);
      expect(await conn.db.collection('runs').countDocuments({ campaignId })).toBe(0);

      const workers = [countingRegistry(), countingRegistry()];
      const w1 = await start('worker', store, dir, { providers: workers[0]!.registry });
      const w2 = await start('worker', store, dir, { providers: workers[1]!.registry });
      expect([w1.url, w2.url]).toEqual([null, null]);
      expect([isStarted(w1), isStarted(w2)]).toEqual([true, true]);
      await waitFor(async () => (await api.get(`/campaign/${campaignId}`, auth)).body.state === 'completed', 20_000, 50);
      expect((await api.get(`/campaign/${campaignId}`, auth)).body).toMatchObject({ processed_rows: 40, executed_count: 40 });
      const runs = await conn.db.collection('runs').find({ campaignId }).toArray();
      expect(runs).toHaveLength(40);
      expect(new Set(runs.map((r) => r.attemptId)).size).toBe(40);
      expect(new Set(runs.map((r) => r.providerCallId)).size).toBe(40);
      // dialing happened in the workers only
      expect(apiCount.created()).toBe(0);
      expect(workers[0]!.created() + workers[1]!.created()).toBeGreaterThan(0);
    }, 30_000);
  });

  it('on one SQLite file: api + two workers complete a campaign with one run per contact', async () => {
    const store: SharedStore = { kind: 'sqlite' };
    const apiCount = countingRegistry();
    const apiSvc = await start('api', store, dir, { providers: apiCount.registry });
    await start('worker', store, dir);
    await start('worker', store, dir);
    const api = apiClient(apiSvc.url!);
    const { auth, campaignId } = await signupWithCampaignSetup(api, 40, 4);
    expect((await api.post(`/campaign/${campaignId}/start`, undefined, auth)).body.state).toBe('running');
    await waitFor(async () => (await api.get(`/campaign/${campaignId}`, auth)).body.state === 'completed', 20_000, 50);
    const db = new Database(join(dir, 'callplane.db'), { readonly: true });
    try {
      const r = db.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT attempt_id) AS attempts, COUNT(DISTINCT provider_call_id) AS calls FROM runs WHERE campaign_id = ?').get(campaignId);
      expect(r).toEqual({ n: 40, attempts: 40, calls: 40 });
    } finally {
      db.close();
    }
    expect(apiCount.created()).toBe(0);
  }, 30_000);

  it('persistent provider connections open in worker and all processes, never in an api process', async () => {
    const store: SharedStore = { kind: 'sqlite' };
    const apiCount = countingRegistry(true);
    const apiSvc = await start('api', store, dir, { providers: apiCount.registry });
    const api = apiClient(apiSvc.url!);
    const signup = await api.post('/auth/signup', { email: 'persist@example.com', password: 'correct horse battery' });
    const auth = { token: signup.body.token as string };
    await createSimulatorConfig(api, auth); // a persistent-connection plugin's instance opens on create, except in an api process
    expect(apiCount.created()).toBe(0);

    const workerCount = countingRegistry(true);
    await start('worker', store, dir, { providers: workerCount.registry });
    expect(workerCount.created()).toBe(1); // opened at start for the stored configuration

    const allCount = countingRegistry(true);
    const allSvc = await start('all', store, dir, { providers: allCount.registry });
    expect(allCount.created()).toBe(1);
    await createSimulatorConfig(apiClient(allSvc.url!), auth, { name: 'Second', isDefault: false });
    expect(allCount.created()).toBe(2);
    expect(apiCount.created()).toBe(0);
  }, 30_000);
});
