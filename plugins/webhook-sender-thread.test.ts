/**
 * The webhook sender thread (docs/webhooks.md "How it runs"), on the built thread entry (dist/, built by `npm test`
 * as for the process-level tests): deliveries stored on this thread are signed and sent by the sender thread, their
 * results recorded through the owner's store, retried with the same id, claimed once across two processes, and the
 * in-process dispatcher sends when the thread cannot run.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AesGcmSecretCipher } from '../adapters/crypto/node-crypto.js';
import { openMigratedSqlite, type SqliteDatabase } from '../adapters/storage/sqlite/database.js';
import { SqliteIdentityRepository } from '../adapters/storage/sqlite/identity.sqlite.js';
import { SqliteWebhookRepository } from '../adapters/storage/sqlite/webhook.sqlite.js';
import { systemClock } from '../core/ports/clock.port.js';
import { silentLogger } from '../core/ports/logger.port.js';
import type { WebhookTransport } from '../core/ports/webhook-transport.port.js';
import type { Run } from '../core/runs/run.js';
import { webhookSecretContext } from '../core/webhooks/webhook.js';
import { WEBHOOK_SWEEP_JOB, WebhookDispatcher } from '../core/webhooks/webhook-dispatcher.js';
import { WebhookEventPublisher } from '../core/webhooks/webhook-events.js';
import { verifyCallplaneSignature } from '../docs/examples/webhooks/verify-signature.js';
import { waitFor } from '../test/e2e/campaign-support.js';
import { distFile } from '../test/support/process.js';
import { startWebhookReceiver } from '../test/support/webhook-receiver.js';
import { ThreadedWebhookSender } from './webhook-sender-thread.js';
import { PolicyWebhookTransport } from './webhook-transport.js';

const KEY = 'a test secret key that is long enough to derive from';
const SECRET = 'whsec_test-secret';
const OPTIONS = { leaseMs: 60_000, sweepIntervalMs: 15_000, maxInFlight: 8, maxInFlightPerEndpoint: 4, sends: true };
const BUILT_ENTRY = pathToFileURL(distFile('plugins/webhook-sender-thread.worker.js'));

const run = (organizationId: number, id: number): Run => {
  const t = new Date();
  return {
    id, organizationId, workflowId: 1, definitionId: 1, name: `run ${id}`, mode: 'outbound', status: 'completed', disposition: 'completed',
    campaignId: null, attemptId: null, telephonyConfigurationId: null, provider: 'simulator', providerCallId: `c-${id}`,
    callerNumber: '+15550000001', calledNumber: '+15550000002', initialContext: {}, gatheredContext: {}, logs: [], annotations: {},
    costInfo: null, durationSeconds: 3, transcriptKey: null, recordingKey: null, createdAt: t, startedAt: t, endedAt: t, updatedAt: t,
  } as unknown as Run;
};

describe('ThreadedWebhookSender', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  /** A sending "process" (its own connection, fallback and sender thread); `shared` joins another's file and receiver. */
  async function setup(answer: (n: number) => number, entry: URL = BUILT_ENTRY, shared?: { file: string; org: number; receiver: Awaited<ReturnType<typeof startWebhookReceiver>> }) {
    let file = shared?.file;
    if (!file) {
      const dir = mkdtempSync(join(tmpdir(), 'callplane-sender-thread-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      file = join(dir, 'callplane.db');
    }
    const db: SqliteDatabase = openMigratedSqlite(file);
    cleanups.push(() => { if (db.open) db.close(); });
    const cipher = new AesGcmSecretCipher(KEY);
    const repo = new SqliteWebhookRepository(db);
    let org = shared?.org;
    let receiver = shared?.receiver;
    if (!org || !receiver) {
      org = (await new SqliteIdentityRepository(db).createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now: new Date() })).organization.id;
      const r = await startWebhookReceiver((_r, n) => answer(n));
      receiver = r;
      cleanups.push(() => r.close());
      await repo.createEndpoint(org, {
        url: receiver.url, events: ['call.ended'], description: null, secretsKeyId: 'k1',
        secretCiphertext: cipher.encrypt(SECRET, webhookSecretContext(org, 'k1')), now: new Date(),
      });
    }
    // the fallback's own transport: counts what this thread sends itself
    const policy = new PolicyWebhookTransport({ allowPrivateNetwork: true });
    let sentHere = 0;
    const here: WebhookTransport = {
      checkUrl: (u) => policy.checkUrl(u), hmacSha256Hex: (k, m) => policy.hmacSha256Hex(k, m),
      post: (...a) => { sentHere++; return policy.post(...a); },
    };
    cleanups.push(() => policy.close());
    const fallback = new WebhookDispatcher(repo, here, cipher, null, systemClock, silentLogger, OPTIONS);
    const defined: string[] = [];
    const scheduler = { define: (name: string) => void defined.push(name), every: async () => undefined };
    const sender = new ThreadedWebhookSender(fallback, repo, scheduler, silentLogger, { secretKey: KEY, allowPrivateNetwork: true, options: OPTIONS }, entry);
    sender.defineJobs();
    await sender.start();
    cleanups.push(() => sender.stop());
    const links = { view: async (r: Run) => ({ run: r, transcriptUrl: null, recordingUrl: null, initialContext: {}, gatheredContext: {} }) };
    const publisher = new WebhookEventPublisher(repo, links as never, systemClock, silentLogger, sender);
    const rows = () => db.prepare<[], { id: number; status: string; attempts: number; last_status_code: number | null }>(
      'SELECT id, status, attempts, last_status_code FROM webhook_deliveries ORDER BY id').all();
    return { file, db, repo, org, receiver, sender, publisher, rows, defined, sentHere: () => sentHere };
  }

  it('sends what this thread stores from the sender thread, signed, and records the results', async () => {
    const t = await setup(() => 200);
    expect(t.sender.threaded).toBe(true);
    expect(t.defined).toEqual([WEBHOOK_SWEEP_JOB]);
    for (let i = 1; i <= 20; i++) await t.publisher.publish({ type: 'call.ended', organizationId: t.org, run: run(t.org, i) });
    await waitFor(() => t.receiver.received.length >= 20, 10_000);
    await t.sender.idle();
    for (const r of t.receiver.received) {
      expect(verifyCallplaneSignature(SECRET, String(r.headers['callplane-signature']), r.body)).toBe(true);
      expect(JSON.parse(r.body).id).toBe(Number(r.headers['callplane-delivery-id']));
    }
    expect(new Set(t.receiver.received.map((r) => r.headers['callplane-delivery-id'])).size).toBe(20);
    expect(t.rows().map((r) => [r.status, r.attempts, r.last_status_code])).toEqual(Array.from({ length: 20 }, () => ['delivered', 1, 200]));
    // nothing went through this thread's transport, and the thread worked (CPU time is read from it)
    expect(t.sentHere()).toBe(0);
    expect(typeof (await t.sender.threadCpuMs())).toBe(process.platform === 'linux' ? 'number' : 'object');
  });

  it('retries a failed delivery from the thread with the same id and body when it falls due', async () => {
    const t = await setup((n) => (n === 1 ? 500 : 200));
    await t.publisher.publish({ type: 'call.ended', organizationId: t.org, run: run(t.org, 7) });
    await waitFor(() => t.receiver.received.length === 1, 10_000);
    await t.sender.idle();
    expect(t.rows().map((r) => [r.status, r.attempts, r.last_status_code])).toEqual([['pending', 1, 500]]);
    // due now (the schedule's 30 s, shortened): the thread claims it under a lease and sends it again
    t.db.prepare('UPDATE webhook_deliveries SET next_attempt_at = 0').run();
    t.sender.kick();
    await waitFor(() => t.receiver.received.length === 2, 10_000);
    await t.sender.idle();
    const [first, second] = t.receiver.received;
    expect(second!.headers['callplane-delivery-id']).toBe(first!.headers['callplane-delivery-id']);
    expect(second!.body).toBe(first!.body);
    expect(t.rows().map((r) => [r.status, r.attempts, r.last_status_code])).toEqual([['delivered', 2, 200]]);
    expect(t.sentHere()).toBe(0);
  });

  it('two processes\' sender threads on one file claim what neither took under leases: each delivery is sent once', async () => {
    const a = await setup(() => 200);
    const b = await setup(() => 200, BUILT_ENTRY, { file: a.file, org: a.org, receiver: a.receiver });
    expect([a.sender.threaded, b.sender.threaded]).toEqual([true, true]);
    const [endpoint] = await a.repo.subscribedEndpoints(a.org, 'call.ended');
    // stored unclaimed (as by an api process), then both drain at once
    await a.repo.enqueue(a.org, Array.from({ length: 40 }, (_, i) => ({
      endpointId: endpoint!.id, event: 'call.ended' as const, now: new Date(), eventKey: null, body: () => `{"n":${i}}`,
    })));
    await Promise.all([a.sender.drain(), b.sender.drain()]);
    await waitFor(() => a.rows().every((r) => r.status === 'delivered'), 10_000);
    await Promise.all([a.sender.idle(), b.sender.idle()]);
    const ids = a.receiver.received.map((r) => r.headers['callplane-delivery-id']);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
    expect(a.rows().map((r) => r.attempts)).toEqual(Array.from({ length: 40 }, () => 1));
    expect(a.sentHere() + b.sentHere()).toBe(0);
  });

  it('a thread that dies while running: the event loop sends from then on, and what the thread held once its lease expires', async () => {
    // a stand-in thread that starts and dies on the first deliveries it is handed
    const dir = mkdtempSync(join(tmpdir(), 'callplane-dying-thread-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const entry = join(dir, 'dying.mjs');
    writeFileSync(entry, `import { parentPort } from 'node:worker_threads';
parentPort.on('message', (m) => { if (m.type === 'take') process.exit(3); });
parentPort.postMessage({ type: 'ready' });`);
    const t = await setup(() => 200, pathToFileURL(entry));
    expect(t.sender.threaded).toBe(true);
    await t.publisher.publish({ type: 'call.ended', organizationId: t.org, run: run(t.org, 1) });
    await waitFor(() => !t.sender.threaded, 5_000);
    // handed over and lost with the thread: still leased, so nobody sends it before the lease expires
    await t.sender.drain();
    await t.sender.idle();
    expect(t.receiver.received).toHaveLength(0);
    expect(t.rows().map((r) => [r.status, r.attempts])).toEqual([['pending', 0]]);
    // the next event is sent from here at once
    await t.publisher.publish({ type: 'call.ended', organizationId: t.org, run: run(t.org, 2) });
    await waitFor(() => t.receiver.received.length === 1, 5_000);
    // the lease expires (60 s, shortened): the sweep's drain claims it here and sends it, same id
    const [lost] = t.rows();
    t.db.prepare('UPDATE webhook_deliveries SET lease_until = 0, next_attempt_at = 0 WHERE id = ?').run(lost!.id);
    await t.sender.drain();
    await waitFor(() => t.receiver.received.length === 2, 5_000);
    await t.sender.idle();
    expect(t.receiver.received.map((r) => Number(r.headers['callplane-delivery-id'])).sort()).toEqual(t.rows().map((r) => r.id).sort());
    expect(t.rows().map((r) => r.status)).toEqual(['delivered', 'delivered']);
    expect(t.sentHere()).toBe(2);
  });

  it('sends in process when the thread cannot run (its entry not built)', async () => {
    const t = await setup(() => 200, pathToFileURL('/nonexistent/webhook-sender-thread.worker.js'));
    expect(t.sender.threaded).toBe(false);
    await t.publisher.publish({ type: 'call.ended', organizationId: t.org, run: run(t.org, 1) });
    await waitFor(() => t.receiver.received.length === 1, 10_000);
    await t.sender.idle();
    expect(t.sentHere()).toBe(1);
    expect(t.rows().map((r) => r.status)).toEqual(['delivered']);
    expect(await t.sender.threadCpuMs()).toBeNull();
  });
});
