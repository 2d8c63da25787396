/**
 * Webhook deliveries survive a kill -9 (issue 13, docs/webhooks.md): the built service (`node dist/http/main.js`,
 * built by `npm test`) runs a 50-call simulator campaign whose events go to a slow local receiver, is SIGKILLed
 * mid-burst with deliveries in flight and others still stored, restarted on the same files, and the receiver, which
 * counts delivery ids, sees every stored delivery at least once: none lost. Some arrive twice (sent, then the kill
 * came before the result was recorded): that is what at-least-once means, and receivers dedupe on the id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { spawnService, type SpawnedService } from '../support/process.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { apiClient, createSimulatorConfig, createWorkflow, csvOf, uploadCsv, waitFor } from './campaign-support.js';

describe('webhook crash safety', () => {
  it('delivers every stored event at least once after a SIGKILL mid-burst', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callplane-webhook-crash-'));
    const receiver = await startWebhookReceiver(() => new Promise((r) => setTimeout(() => r(200), 40)));
    const env = {
      CALLPLANE_DATA_DIR: dir, CALLPLANE_SIGNUP: 'open', LOG_LEVEL: 'warn', CALLPLANE_CAMPAIGN_LEASE_MS: '1000', CALLPLANE_CAMPAIGN_RECONCILE_MS: '800',
      CALLPLANE_CAMPAIGN_SWEEP_MS: '300', CALLPLANE_JOBS_PROCESS_EVERY_MS: '100', CALLPLANE_JOBS_LOCK_LIFETIME_MS: '1000',
      CALLPLANE_WEBHOOK_LEASE_MS: '1000', CALLPLANE_WEBHOOK_SWEEP_MS: '300', CALLPLANE_WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '4',
    };
    let svc: SpawnedService | null = null;
    try {
      svc = await spawnService(env);
      let api = apiClient(svc.url);
      const signup = await api.post('/auth/signup', { email: 'hooks@example.com', password: 'correct horse battery' });
      const auth = { token: signup.body.token as string };
      const hook = await api.post('/organizations/webhooks', {
        url: receiver.url, events: ['call.started', 'call.ended', 'campaign.started', 'campaign.completed'],
      }, auth);
      expect(hook.status).toBe(200);
      const workflowId = await createWorkflow(api, auth);
      await createSimulatorConfig(api, auth, { ringMs: 10, talkMs: 60 });
      const total = 50;
      const key = await uploadCsv(api, auth, csvOf(total, (i) => String(10 + (i % 80))));
      const c = await api.post('/campaign/create', {
        name: 'Burst', workflow_id: workflowId, source_type: 'csv', source_id: key, max_concurrency: 25, retry_config: { enabled: false },
      }, auth);
      const id = c.body.id as number;
      expect((await api.post(`/campaign/${id}/start`, undefined, auth)).body.state).toBe('running');
      await waitFor(() => receiver.received.length >= 15, 20_000, 5);

      svc.child.kill('SIGKILL');
      expect((await svc.exited).signal).toBe('SIGKILL');
      const atKill = new Database(join(dir, 'callplane.db'), { readonly: true });
      const stored = atKill.prepare<[], { n: number; open: number }>("SELECT COUNT(*) AS n, SUM(status <> 'delivered') AS open FROM webhook_deliveries").get()!;
      atKill.close();
      // the kill left work behind: deliveries not yet recorded as delivered
      expect(stored.open).toBeGreaterThan(0);

      svc = await spawnService(env);
      api = apiClient(svc.url);
      await waitFor(async () => (await api.get(`/campaign/${id}`, auth)).body.state === 'completed', 30_000, 50);
      const db = new Database(join(dir, 'callplane.db'), { readonly: true });
      try {
        await waitFor(() => db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status <> 'delivered'").get()!.n === 0, 30_000, 50);
        const ids = db.prepare<[], { id: number; event: string }>('SELECT id, event FROM webhook_deliveries ORDER BY id').all();
        const seen = new Set(receiver.received.map((r) => Number(r.headers['callplane-delivery-id'])));
        const missing = ids.filter((d) => !seen.has(d.id));
        expect(missing).toEqual([]);
        expect(ids.length).toBeGreaterThanOrEqual(stored.n);
        expect(ids.filter((d) => d.event === 'campaign.completed')).toHaveLength(1);
        // every received body is the stored one for its id (a resend carries the same bytes)
        const bodies = new Map(db.prepare<[], { id: number; body: string }>('SELECT id, body FROM webhook_deliveries').all().map((r) => [r.id, r.body]));
        for (const r of receiver.received) expect(r.body).toBe(bodies.get(Number(r.headers['callplane-delivery-id'])));
        const ended = db.prepare<[number], { n: number }>("SELECT COUNT(*) AS n FROM runs WHERE campaign_id = ? AND status IN ('completed', 'failed')").get(id)!.n;
        // reported, not asserted: a kill between a run's final status write and its call.ended insert loses that one event
        // (docs/webhooks.md "Guarantees")
        process.stdout.write(`webhook crash: ${ids.length} deliveries stored, ${receiver.received.length} received, ` +
          `${ids.filter((d) => d.event === 'call.ended').length} call.ended for ${ended} finished runs\n`);
      } finally {
        db.close();
      }
    } finally {
      if (svc && svc.child.exitCode === null && svc.child.signalCode === null) {
        svc.child.kill('SIGTERM');
        await svc.exited;
      }
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
