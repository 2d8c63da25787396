/**
 * Scale-out with real processes: one `api` and two `worker` processes of the built service (`node dist/http/main.js`,
 * built by `npm test`) share one store: the SQLite file (WAL) of one data directory, and a MongoDB database when
 * MONGODB_URI is set (a visible skip otherwise: there is no mongod on this machine). A simulator campaign of 300
 * contacts at max_concurrency 10 runs to completion, and the store proves:
 * - the cap held across processes: the campaign's stored in-flight count, sampled all along, never exceeded 10,
 *   and the runs' [created, ended] intervals never overlapped more than 10 deep (each run lives strictly inside
 *   its claim's slot: created after the claim, ended before the slot is freed);
 * - exactly-once dialing: one attempt per contact, one run per attempt, 300 distinct provider call ids;
 * - the roles: the worker processes listen on no port (that an api process runs no jobs, dials nothing and opens no
 *   persistent connection is shown in multi-process-roles.test.ts, where each process's container can be inspected).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { MongoClient } from 'mongodb';
import { distFile, freePort, spawnService, type SpawnedService } from '../support/process.js';
import { realMongoSkipReason, realMongoUri } from '../fakes/mongo/mongo-target.js';
import { createSimulatorConfig, createWorkflow, csvOf, uploadCsv, waitFor } from './campaign-support.js';
import { apiClient, maxOverlap } from './multi-process-support.js';

const CONTACTS = 300;
const CAP = 10;

interface Worker {
  child: ChildProcess;
  port: number;
  output: string[];
  exited: Promise<unknown>;
}

/** Starts a worker process (no HTTP): ready when it logs "callplane started". */
async function spawnWorker(env: Record<string, string>): Promise<Worker> {
  const port = await freePort();
  const child = spawn(process.execPath, [distFile('http/main.js')], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env, CALLPLANE_ROLE: 'worker', LOG_LEVEL: 'info', PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout!.on('data', (d) => output.push(String(d)));
  child.stderr!.on('data', (d) => output.push(String(d)));
  const exited = new Promise((resolve) => child.once('close', resolve));
  await waitFor(() => output.join('').includes('"callplane started"') || child.exitCode !== null, 20_000, 20);
  if (child.exitCode !== null) throw new Error(`worker exited: ${output.join('')}`);
  return { child, port, output, exited };
}

/** What the test reads from the shared store. */
interface StoreProbe {
  inFlight(campaignId: number): Promise<number>;
  /** Per run: attempt id, provider call id, created and ended (ms). */
  runs(campaignId: number): Promise<Array<{ attemptId: number; providerCallId: string | null; created: number; ended: number | null }>>;
  attempts(campaignId: number): Promise<Array<{ contactId: number; attemptNumber: number; status: string }>>;
  pendingJobs(name: string): Promise<number>;
  close(): Promise<void>;
}

function sqliteProbe(file: string): StoreProbe {
  const db = new Database(file, { readonly: true });
  db.pragma('busy_timeout = 5000');
  return {
    inFlight: async (id) => (db.prepare('SELECT in_flight AS n FROM campaigns WHERE id = ?').get(id) as { n: number }).n,
    runs: async (id) => (db.prepare('SELECT attempt_id, provider_call_id, created_at, ended_at FROM runs WHERE campaign_id = ?').all(id) as
      { attempt_id: number; provider_call_id: string | null; created_at: number; ended_at: number | null }[])
      .map((r) => ({ attemptId: r.attempt_id, providerCallId: r.provider_call_id, created: r.created_at, ended: r.ended_at })),
    attempts: async (id) => (db.prepare('SELECT contact_id, attempt_number, status FROM campaign_attempts WHERE campaign_id = ?').all(id) as
      { contact_id: number; attempt_number: number; status: string }[]).map((a) => ({ contactId: a.contact_id, attemptNumber: a.attempt_number, status: a.status })),
    pendingJobs: async (name) => (db.prepare('SELECT COUNT(*) AS n FROM agenda_jobs WHERE name = ?').get(name) as { n: number }).n,
    close: async () => void db.close(),
  };
}

async function mongoProbe(uri: string, dbName: string): Promise<StoreProbe> {
  const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 5000 });
  const db = client.db(dbName);
  return {
    inFlight: async (id) => ((await db.collection('campaigns').findOne({ _id: id as never }))?.inFlightSlots ?? []).length,
    runs: async (id) => (await db.collection('runs').find({ campaignId: id }).toArray())
      .map((r) => ({ attemptId: r.attemptId, providerCallId: r.providerCallId, created: new Date(r.createdAt).getTime(), ended: r.endedAt ? new Date(r.endedAt).getTime() : null })),
    attempts: async (id) => (await db.collection('campaign_attempts').find({ campaignId: id }).toArray())
      .map((a) => ({ contactId: a.contactId, attemptNumber: a.attemptNumber, status: a.status })),
    pendingJobs: async (name) => db.collection('agendaJobs').countDocuments({ name }),
    async close() {
      try {
        await db.dropDatabase();
      } finally {
        await client.close();
      }
    },
  };
}

function scenario(label: string, storeEnv: (dir: string) => Record<string, string>, probeFor: (dir: string, env: Record<string, string>) => Promise<StoreProbe>) {
  describe(`one api and two worker processes sharing ${label}`, () => {
    let dir: string;
    let api: SpawnedService | null = null;
    const workers: Worker[] = [];
    let probe: StoreProbe | null = null;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'callplane-multi-'));
    });
    afterEach(async () => {
      for (const p of [api?.child, ...workers.map((w) => w.child)]) {
        if (p && p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
      }
      await Promise.all([api?.exited, ...workers.map((w) => w.exited)]);
      workers.splice(0);
      api = null;
      await probe?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it(`holds max_concurrency ${CAP} across processes and dials each of ${CONTACTS} contacts exactly once`, async () => {
      const env = {
        CALLPLANE_DATA_DIR: dir, CALLPLANE_SIGNUP: 'open', CALLPLANE_SECRET_KEY: 'multi-process-secret-key-0123456789abcdef', LOG_LEVEL: 'warn',
        CALLPLANE_CAMPAIGN_LEASE_MS: '2000', CALLPLANE_CAMPAIGN_RECONCILE_MS: '2000', CALLPLANE_CAMPAIGN_SWEEP_MS: '300',
        CALLPLANE_JOBS_PROCESS_EVERY_MS: '50', CALLPLANE_JOBS_LOCK_LIFETIME_MS: '1000', ...storeEnv(dir),
      };
      api = await spawnService({ ...env, CALLPLANE_ROLE: 'api' });
      workers.push(await spawnWorker(env), await spawnWorker(env));
      probe = await probeFor(dir, env);
      // workers serve no HTTP
      for (const w of workers) await expect(fetch(`http://127.0.0.1:${w.port}/api/v1/health`)).rejects.toThrow();

      const client = apiClient(api.url);
      const signup = await client.post('/auth/signup', { email: 'scale@example.com', password: 'correct horse battery' });
      const auth = { token: signup.body.token as string };
      const workflowId = await createWorkflow(client, auth);
      await createSimulatorConfig(client, auth, { ringMs: 10, talkMs: 40 });
      const key = await uploadCsv(client, auth, csvOf(CONTACTS));
      const c = await client.post('/campaign/create', {
        name: 'Scale', workflow_id: workflowId, source_type: 'csv', source_id: key, max_concurrency: CAP, retry_config: { enabled: false },
      }, auth);
      expect(c.status).toBe(200);
      const id = c.body.id as number;
      expect((await client.post(`/campaign/${id}/start`, undefined, auth)).body.state).toBe('running');

      // sample the stored in-flight count until the campaign completes
      const samples: number[] = [];
      let done = false;
      const sampling = (async () => {
        while (!done) {
          samples.push(await probe!.inFlight(id));
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      try {
        await waitFor(async () => (await client.get(`/campaign/${id}`, auth)).body.state === 'completed', 25_000, 50);
      } finally {
        done = true;
        await sampling;
      }
      const final = (await client.get(`/campaign/${id}`, auth)).body;
      expect(final).toMatchObject({ processed_rows: CONTACTS, total_rows: CONTACTS, executed_count: CONTACTS });

      expect(Math.max(...samples)).toBeLessThanOrEqual(CAP);
      expect(Math.max(...samples)).toBeGreaterThan(1); // calls did run concurrently
      const runs = await probe.runs(id);
      expect(runs.every((r) => r.ended !== null)).toBe(true);
      const overlap = maxOverlap(runs.map((r) => [r.created, r.ended!] as const));
      expect(overlap).toBeLessThanOrEqual(CAP);
      expect(overlap).toBeGreaterThan(1);

      const attempts = await probe.attempts(id);
      expect(attempts).toHaveLength(CONTACTS);
      expect(new Set(attempts.map((a) => a.contactId)).size).toBe(CONTACTS);
      expect(attempts.every((a) => a.attemptNumber === 1 && a.status === 'ended')).toBe(true);
      expect(runs).toHaveLength(CONTACTS);
      expect(new Set(runs.map((r) => r.attemptId)).size).toBe(CONTACTS);
      expect(new Set(runs.map((r) => r.providerCallId)).size).toBe(CONTACTS);
      expect(runs.every((r) => r.providerCallId !== null)).toBe(true);

      // the recurring reconciliation job exists once, whichever worker created it first
      expect(await probe.pendingJobs('campaign.reconcile')).toBe(1);
      // every process stops cleanly
      for (const p of [api.child, ...workers.map((w) => w.child)]) p.kill('SIGTERM');
      const codes = await Promise.all([api.exited, ...workers.map((w) => w.exited)]);
      expect(codes.map((c) => (typeof c === 'number' ? c : (c as { code: number | null }).code))).toEqual([0, 0, 0]);
    }, 60_000);
  });
}

scenario('one SQLite file (WAL)', () => ({}), async (dir) => sqliteProbe(join(dir, 'callplane.db')));

const mongoUri = realMongoUri();
if (mongoUri) {
  const dbName = `callplane_multi_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const base = mongoUri.replace(/^(mongodb(?:\+srv)?:\/\/[^/?]+)(\/[^?]*)?/, '$1');
  const query = mongoUri.includes('?') ? mongoUri.slice(mongoUri.indexOf('?')) : '';
  scenario('one MongoDB database (MONGODB_URI)', () => ({ CALLPLANE_STORAGE: 'mongodb', MONGODB_URI: `${base}/${dbName}${query}` }), async () => mongoProbe(mongoUri, dbName));
} else {
  describe.skip(`one api and two worker processes sharing one MongoDB database (${realMongoSkipReason})`, () => {
    it(`runs only when MONGODB_URI is set (${realMongoSkipReason})`, () => undefined);
  });
}
