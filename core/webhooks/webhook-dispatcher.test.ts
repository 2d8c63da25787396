import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { AesGcmSecretCipher } from '../../adapters/crypto/node-crypto.js';
import { openMigratedSqlite, type SqliteDatabase } from '../../adapters/storage/sqlite/database.js';
import { SqliteIdentityRepository } from '../../adapters/storage/sqlite/identity.sqlite.js';
import { SqliteWebhookRepository } from '../../adapters/storage/sqlite/webhook.sqlite.js';
import { verifyCallplaneSignature } from '../../docs/examples/webhooks/verify-signature.js';
import { PolicyWebhookTransport } from '../../plugins/webhook-transport.js';
import { startWebhookReceiver } from '../../test/support/webhook-receiver.js';
import type { JobScheduler } from '../ports/job-scheduler.port.js';
import { silentLogger } from '../ports/logger.port.js';
import type { WebhookPostResult, WebhookTransport } from '../ports/webhook-transport.port.js';
import { WebhookDispatcher, WEBHOOK_SWEEP_JOB } from './webhook-dispatcher.js';
import { deliveryBody, WebhookEventPublisher } from './webhook-events.js';
import type { Run } from '../runs/run.js';
import { retryDelayMs, WEBHOOK_MAX_ATTEMPTS, webhookSecretContext } from './webhook.js';

const T0 = new Date('2026-05-01T12:00:00.000Z');
const SECRET = 'whsec_test-secret';

/** A scheduler that records what it was asked (the sweep is driven by hand here). */
const recordingScheduler = () => {
  const defined: string[] = [];
  const every: Array<[string, number]> = [];
  const s: JobScheduler = {
    define: (name) => { defined.push(name); },
    scheduleUnique: async () => undefined,
    every: async (name, ms) => { every.push([name, ms]); },
    cancel: async () => 0,
    start: async () => undefined,
    stop: async () => undefined,
  };
  return { s, defined, every };
};

describe('webhook retry schedule', () => {
  it('waits 30 s doubling, each wait capped at 6 h, and gives up after 12 attempts', () => {
    const waits = Array.from({ length: WEBHOOK_MAX_ATTEMPTS }, (_, i) => retryDelayMs(i + 1));
    expect(waits).toEqual([30, 60, 120, 240, 480, 960, 1920, 3840, 7680, 15360, 21600, null].map((s) => (s === null ? null : s * 1000)));
  });
});

describe('WebhookDispatcher', () => {
  let db: SqliteDatabase;
  let repo: SqliteWebhookRepository;
  let org: number;
  let now: Date;
  const clock = { now: () => now };
  const cipher = new AesGcmSecretCipher('k'.repeat(40));
  beforeEach(async () => {
    db = openMigratedSqlite(':memory:');
    repo = new SqliteWebhookRepository(db);
    org = (await new SqliteIdentityRepository(db).createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now: T0 })).organization.id;
    now = T0;
  });
  afterEach(() => {
    db.close();
  });

  const endpoint = (url: string) => repo.createEndpoint(org, {
    url, events: ['call.ended'], description: null, secretsKeyId: 'k1', secretCiphertext: cipher.encrypt(SECRET, webhookSecretContext(org, 'k1')), now: T0,
  });
  const enqueue = (endpointId: number, n = 1) => repo.enqueue(org, Array.from({ length: n }, () => ({
    endpointId, event: 'call.ended' as const, now, body: (id: number) => deliveryBody(id, 'call.ended', now, { run_id: 7 }),
  })));
  const dispatcher = (transport: WebhookTransport, over: Partial<ConstructorParameters<typeof WebhookDispatcher>[6]> = {}) => {
    const sched = recordingScheduler();
    const d = new WebhookDispatcher(repo, transport, cipher, sched.s, clock, silentLogger, {
      leaseMs: 60_000, maxInFlight: 8, maxInFlightPerEndpoint: 2, sweepIntervalMs: 15_000, sends: true, ...over,
    });
    return { d, sched };
  };
  const sweep = async (d: WebhookDispatcher) => {
    await d.drain();
    await d.idle();
  };

  it('defines one sweep job, schedules it once at start: never a job per delivery', async () => {
    const { d, sched } = dispatcher(new PolicyWebhookTransport({ allowPrivateNetwork: true }));
    d.defineJobs();
    d.defineJobs();
    await d.start();
    expect(sched.defined).toEqual([WEBHOOK_SWEEP_JOB]);
    expect(sched.every).toEqual([[WEBHOOK_SWEEP_JOB, 15_000]]);
    const e = await endpoint('http://127.0.0.1:9/');
    await enqueue(e.id, 20);
    await d.stop();
    expect(sched.every).toHaveLength(1);
  });

  it('a receiver answering 500 twice then 200 gets exactly the scheduled retries with the same delivery id and body', async () => {
    const receiver = await startWebhookReceiver((_r, n) => (n <= 2 ? 500 : 200));
    try {
      const e = await endpoint(receiver.url);
      const { d } = dispatcher(new PolicyWebhookTransport({ allowPrivateNetwork: true }));
      const [delivery] = await enqueue(e.id);
      await sweep(d);
      expect(receiver.received).toHaveLength(1);
      expect(await repo.getDelivery(org, e.id, delivery!.id)).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500', nextAttemptAt: new Date(T0.getTime() + 30_000) });

      now = new Date(T0.getTime() + 29_999);
      await sweep(d);
      expect(receiver.received).toHaveLength(1);
      now = new Date(T0.getTime() + 30_000);
      await sweep(d);
      expect(receiver.received).toHaveLength(2);
      expect(await repo.getDelivery(org, e.id, delivery!.id)).toMatchObject({ status: 'pending', attempts: 2, nextAttemptAt: new Date(T0.getTime() + 90_000) });

      now = new Date(T0.getTime() + 89_999);
      await sweep(d);
      expect(receiver.received).toHaveLength(2);
      now = new Date(T0.getTime() + 90_000);
      await sweep(d);
      expect(receiver.received).toHaveLength(3);
      expect(await repo.getDelivery(org, e.id, delivery!.id)).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
      now = new Date(T0.getTime() + 86_400_000);
      await sweep(d);
      expect(receiver.received).toHaveLength(3);

      expect(new Set(receiver.received.map((r) => r.headers['callplane-delivery-id']))).toEqual(new Set([String(delivery!.id)]));
      expect(new Set(receiver.received.map((r) => r.body))).toEqual(new Set([delivery!.body]));
      // each attempt is signed at its own time: check with the docs' snippet at that moment
      const [, , last] = receiver.received;
      const t = Number(/t=(\d+)/.exec(String(last!.headers['callplane-signature']))![1]);
      expect(t).toBe(Math.floor((T0.getTime() + 90_000) / 1000));
      const realNow = Date.now;
      Date.now = () => (T0.getTime() + 90_000);
      try {
        expect(verifyCallplaneSignature(SECRET, String(last!.headers['callplane-signature']), last!.body)).toBe(true);
      } finally {
        Date.now = realNow;
      }
      await d.stop();
    } finally {
      await receiver.close();
    }
  });

  it('marks a delivery failed after 12 attempts, on the schedule', async () => {
    const e = await endpoint('https://hooks.example.com/');
    const attempts: number[] = [];
    const { d } = dispatcher({
      checkUrl: () => null, hmacSha256Hex: () => 'x',
      post: async (): Promise<WebhookPostResult> => { attempts.push(now.getTime() - T0.getTime()); return { ok: false, statusCode: 503, error: 'HTTP 503' }; },
    });
    const [delivery] = await enqueue(e.id);
    for (let i = 0; i < 20; i++) {
      await sweep(d);
      const cur = await repo.getDelivery(org, e.id, delivery!.id);
      if (!cur!.nextAttemptAt) break;
      now = cur!.nextAttemptAt;
    }
    let at = 0;
    const expected = [0];
    for (let n = 1; n < 12; n++) expected.push((at += retryDelayMs(n)!));
    expect(attempts).toEqual(expected);
    expect(await repo.getDelivery(org, e.id, delivery!.id)).toMatchObject({ status: 'failed', attempts: 12, lastStatusCode: 503, nextAttemptAt: null });
  });

  it('a slow receiver holds only its own slots: another receiver is served meanwhile', async () => {
    const slow = await endpoint('https://slow.example.com/');
    const fast = await endpoint('https://fast.example.com/');
    const release: Array<() => void> = [];
    const sent: string[] = [];
    const { d } = dispatcher({
      checkUrl: () => null, hmacSha256Hex: () => 'x',
      post: (url) => {
        sent.push(url);
        if (url.includes('slow')) return new Promise((r) => release.push(() => r({ ok: true, statusCode: 200 })));
        return Promise.resolve({ ok: true, statusCode: 200 });
      },
    }, { maxInFlight: 4, maxInFlightPerEndpoint: 2 });
    await enqueue(slow.id, 10);
    await enqueue(fast.id, 5);
    await d.drain();
    await new Promise((r) => setTimeout(r, 20));
    await d.drain();
    await new Promise((r) => setTimeout(r, 20));
    expect(sent.filter((u) => u.includes('slow'))).toHaveLength(2);
    expect(sent.filter((u) => u.includes('fast'))).toHaveLength(5);
    while (release.length) {
      release.shift()!();
      await new Promise((r) => setTimeout(r, 5));
    }
    await d.idle();
    expect(sent.filter((u) => u.includes('slow'))).toHaveLength(10);
    expect((await repo.listDeliveries(org, slow.id, { page: 1, limit: 100 })).deliveries.every((x) => x.status === 'delivered')).toBe(true);
  });

  it('never follows a redirect: the attempt fails with the redirect named, and the delivery is retried later', async () => {
    const receiver = await startWebhookReceiver(() => 302);
    try {
      const e = await endpoint(receiver.url);
      const { d } = dispatcher(new PolicyWebhookTransport({ allowPrivateNetwork: true }));
      const [delivery] = await enqueue(e.id);
      await sweep(d);
      expect(receiver.received).toHaveLength(1);
      const cur = await repo.getDelivery(org, e.id, delivery!.id);
      expect(cur).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 302 });
      expect(cur!.lastError).toMatch(/redirect.*not followed/);
    } finally {
      await receiver.close();
    }
  });

  it('bounds each attempt by 10 s, and decrypts an endpoint\'s secret once, again only after a rotation', async () => {
    const decrypts: string[] = [];
    const counting = { encrypt: cipher.encrypt.bind(cipher), decrypt: (c: string, ctx: string) => { decrypts.push(c); return cipher.decrypt(c, ctx); } };
    const e = await endpoint('https://hooks.example.com/');
    const seen: Array<{ timeoutMs: number; key: string }> = [];
    const transport: WebhookTransport = {
      checkUrl: () => null, hmacSha256Hex: (key) => key,
      post: async (_u, _b, headers, timeoutMs) => { seen.push({ timeoutMs, key: headers['callplane-signature']!.split('v1=')[1]! }); return { ok: true, statusCode: 200 }; },
    };
    const d = new WebhookDispatcher(repo, transport, counting, recordingScheduler().s, clock, silentLogger, {
      leaseMs: 60_000, maxInFlight: 8, maxInFlightPerEndpoint: 8, sweepIntervalMs: 15_000, sends: true,
    });
    await enqueue(e.id, 3);
    await sweep(d);
    await enqueue(e.id, 2);
    await sweep(d);
    expect(seen).toHaveLength(5);
    expect(seen.every((s) => s.timeoutMs === 10_000 && s.key === SECRET)).toBe(true);
    expect(decrypts).toHaveLength(1);
    const rotated = cipher.encrypt('whsec_rotated', webhookSecretContext(org, 'k1'));
    await repo.updateEndpoint(org, e.id, { secretCiphertext: rotated, now });
    await enqueue(e.id, 2);
    await sweep(d);
    expect(seen.slice(5).map((s) => s.key)).toEqual(['whsec_rotated', 'whsec_rotated']);
    expect(decrypts).toEqual([e.secretCiphertext, rotated]);
  });

  it('an endpoint deleted meanwhile ends its claimed delivery as failed, without a send', async () => {
    const sent: string[] = [];
    const e = await endpoint('https://gone.example.com/');
    const { d } = dispatcher({ checkUrl: () => null, hmacSha256Hex: () => 'x', post: async (u) => { sent.push(u); return { ok: true, statusCode: 200 }; } });
    await enqueue(e.id);
    db.prepare('DELETE FROM webhook_endpoints WHERE id = ?').run(e.id);
    await sweep(d);
    expect(sent).toEqual([]);
    expect(db.prepare('SELECT status, last_error FROM webhook_deliveries').get()).toEqual({ status: 'failed', last_error: 'endpoint deleted' });
  });
});

describe('WebhookDispatcher writes per delivery', () => {
  let db: SqliteDatabase;
  let org: number;
  const now = T0;
  const cipher = new AesGcmSecretCipher('k'.repeat(40));
  beforeEach(async () => {
    db = openMigratedSqlite(':memory:');
    org = (await new SqliteIdentityRepository(db).createOrganizationWithUser({ organizationName: 'A', email: 'a@x.io', name: null, passwordHash: 'h', now: T0 })).organization.id;
  });
  afterEach(() => {
    db.close();
  });

  it('sends what this process publishes while it has room without a claim, and records the results that end together in one write', async () => {
    const inner = new SqliteWebhookRepository(db);
    const calls = { claimDue: 0, recordAttempts: [] as number[], recordAttempt: 0 };
    const repo = Object.assign(Object.create(inner) as SqliteWebhookRepository, {
      claimDue: (...a: Parameters<SqliteWebhookRepository['claimDue']>) => { calls.claimDue++; return inner.claimDue(...a); },
      recordAttempts: (r: Parameters<SqliteWebhookRepository['recordAttempts']>[0]) => { calls.recordAttempts.push(r.length); return inner.recordAttempts(r); },
      recordAttempt: (...a: Parameters<SqliteWebhookRepository['recordAttempt']>) => { calls.recordAttempt++; return inner.recordAttempt(...a); },
    });
    const e = await inner.createEndpoint(org, {
      url: 'https://hooks.example.com/', events: ['call.ended'], description: null, secretsKeyId: 'k1', secretCiphertext: cipher.encrypt(SECRET, webhookSecretContext(org, 'k1')), now: T0,
    });
    const sent: number[] = [];
    const d = new WebhookDispatcher(repo, {
      checkUrl: () => null, hmacSha256Hex: () => 'x', post: async (_u, body) => { sent.push(JSON.parse(body).id); return { ok: true, statusCode: 200 }; },
    }, cipher, recordingScheduler().s, { now: () => now }, silentLogger, { leaseMs: 60_000, maxInFlight: 8, maxInFlightPerEndpoint: 8, sweepIntervalMs: 15_000, sends: true });
    const publisher = new WebhookEventPublisher(repo, { view: async (run) => ({ run, transcriptUrl: null, recordingUrl: null, initialContext: {}, gatheredContext: {} }) }, { now: () => now }, silentLogger, d);
    // the start's drain finds nothing unclaimed: from then on, only a kick (unclaimed work) makes a claim
    await d.drain();
    calls.claimDue = 0;
    const run = { id: 5, organizationId: org, workflowId: 1, definitionId: 1, name: 'r', mode: 'outbound', status: 'completed', disposition: 'completed', campaignId: null, attemptId: null,
      telephonyConfigurationId: null, provider: 'simulator', providerCallId: null, callerNumber: null, calledNumber: null, initialContext: {}, gatheredContext: {}, logs: [], annotations: {},
      costInfo: { call_duration_seconds: 0, service_token_usage: 0, charge_usd: 0 }, durationSeconds: null, transcriptKey: null, recordingKey: null, createdAt: T0, startedAt: null, endedAt: T0, updatedAt: T0 } satisfies Run;
    await Promise.all(Array.from({ length: 6 }, (_, i) => publisher.publish({ type: 'call.ended', organizationId: org, run: { ...run, id: 10 + i } })));
    await d.idle();
    expect(sent.sort()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(calls.claimDue).toBe(0);
    expect(calls.recordAttempt).toBe(0);
    expect(calls.recordAttempts).toEqual([6]);
    expect(db.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'delivered' AND lease_token IS NULL").get()).toEqual({ n: 6 });
    // with no room (a full process) deliveries are stored unclaimed for a drain
    expect(d.lease(17)).toBeNull();
    expect(d.lease(16)).toEqual({ leaseMs: 60_000 });
    await d.stop();
    expect(d.lease(1)).toBeNull();
    // deliveries leased just before a stop are left to their lease (claimed again later), not sent by a stopped sender
    const late = await inner.enqueue(org, [{ endpointId: e.id, event: 'call.ended', now, body: (id) => deliveryBody(id, 'call.ended', now, {}) }], { leaseMs: 60_000 });
    d.take(late, [e]);
    await d.idle();
    expect(sent).toHaveLength(6);
  });

  it('frees a send\'s slot when its attempt ends and writes the results of the sends that end within recordDelayMs together', async () => {
    const inner = new SqliteWebhookRepository(db);
    const records: number[] = [];
    const repo = Object.assign(Object.create(inner) as SqliteWebhookRepository, {
      recordAttempts: (r: Parameters<SqliteWebhookRepository['recordAttempts']>[0]) => { records.push(r.length); return inner.recordAttempts(r); },
    });
    const e = await inner.createEndpoint(org, {
      url: 'https://hooks.example.com/', events: ['call.ended'], description: null, secretsKeyId: 'k1', secretCiphertext: cipher.encrypt(SECRET, webhookSecretContext(org, 'k1')), now: T0,
    });
    const stored = await inner.enqueue(org, Array.from({ length: 3 }, () => ({
      endpointId: e.id, event: 'call.ended' as const, now, body: (id: number) => deliveryBody(id, 'call.ended', now, {}),
    })), { leaseMs: 60_000 });
    // one slot for the endpoint: each send starts only once the one before it ended, a turn apart
    const sent: number[] = [];
    const d = new WebhookDispatcher(repo, {
      checkUrl: () => null, hmacSha256Hex: () => 'x',
      post: (_u, body) => new Promise((r) => setImmediate(() => { sent.push(JSON.parse(body).id); r({ ok: true, statusCode: 200 }); })),
    }, cipher, recordingScheduler().s, { now: () => now }, silentLogger, {
      leaseMs: 60_000, maxInFlight: 8, maxInFlightPerEndpoint: 1, sweepIntervalMs: 15_000, sends: true, recordDelayMs: 200,
    });
    d.take(stored, [e]);
    await new Promise((r) => setTimeout(r, 50));
    // all three sent one after the other, none of their results written yet, and every delivery still leased
    expect(sent).toEqual(stored.map((x) => x.id));
    expect(records).toEqual([]);
    expect(db.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending' AND lease_token IS NOT NULL").get()).toEqual({ n: 3 });
    await d.idle();
    expect(records).toEqual([3]);
    expect(db.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'delivered' AND lease_token IS NULL AND attempts = 1").get()).toEqual({ n: 3 });
    // a stop writes what waits at once
    const more = await inner.enqueue(org, [{ endpointId: e.id, event: 'call.ended', now, body: (id) => deliveryBody(id, 'call.ended', now, {}) }], { leaseMs: 60_000 });
    d.take(more, [e]);
    await new Promise((r) => setTimeout(r, 20));
    const t = Date.now();
    await d.stop();
    expect(Date.now() - t).toBeLessThan(150);
    expect(records).toEqual([3, 1]);
  });
});

describe('PolicyWebhookTransport', () => {
  it('accepts https only when private networks are not allowed, and refuses metadata in every case', () => {
    const strict = new PolicyWebhookTransport({ allowPrivateNetwork: false });
    expect(strict.checkUrl('https://hooks.example.com/x')).toBeNull();
    expect(strict.checkUrl('http://hooks.example.com/x')).toMatch(/https/);
    expect(strict.checkUrl('https://10.0.0.5/x')).not.toBeNull();
    const open = new PolicyWebhookTransport({ allowPrivateNetwork: true });
    expect(open.checkUrl('http://127.0.0.1:8080/x')).toBeNull();
    expect(open.checkUrl('http://169.254.169.254/latest/meta-data/')).not.toBeNull();
    expect(open.checkUrl('https://metadata.google.internal/')).not.toBeNull();
  });

  it('checks the resolved addresses at send time: a name resolving to cloud metadata or a private address is refused before connecting', async () => {
    const toMetadata = new PolicyWebhookTransport({ allowPrivateNetwork: true, resolve: async () => [{ address: '169.254.169.254', family: 4 }] });
    expect(await toMetadata.post('https://hooks.example.com/', '{}', {}, 1000)).toMatchObject({ ok: false, statusCode: null, error: expect.stringMatching(/169\.254\.169\.254|metadata/) });
    const toPrivate = new PolicyWebhookTransport({ allowPrivateNetwork: false, resolve: async () => [{ address: '10.1.2.3', family: 4 }] });
    expect(await toPrivate.post('https://hooks.example.com/', '{}', {}, 1000)).toMatchObject({ ok: false, statusCode: null });
  });

  it('bounds an attempt by the timeout', async () => {
    const receiver = await startWebhookReceiver(() => new Promise((r) => setTimeout(() => r(200), 600).unref()));
    try {
      const t = new PolicyWebhookTransport({ allowPrivateNetwork: true });
      const started = Date.now();
      expect(await t.post(receiver.url, '{}', { 'content-type': 'application/json' }, 200)).toEqual({ ok: false, statusCode: null, error: 'no answer within 0.2 s' });
      expect(Date.now() - started).toBeLessThan(550);
    } finally {
      await receiver.close();
    }
  });
});
