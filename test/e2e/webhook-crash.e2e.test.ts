/**
 * Webhook deliveries survive a kill -9 (issue 13, docs/webhooks.md): the built service (`node dist/http/main.js`,
 * built by `npm test`) runs a 50-call simulator campaign whose events go to a slow local receiver, is SIGKILLed
 * mid-burst with deliveries in flight and others still stored, restarted on the same files, and the receiver, which
 * counts delivery ids, sees every stored delivery at least once: none lost. Some arrive twice (sent, then the kill
 * came before the result was recorded): that is what at-least-once means, and receivers dedupe on the id.
 * Every event is there too, exactly one delivery each: campaign.started and .completed, call.started of every
 * connected call and call.ended of every run, including one whose fact was written just before the kill and its
 * deliveries not (the marker stored with the fact is published after the restart).
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
  it('delivers every event at least once after a SIGKILL mid-burst, none lost', async () => {
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
        // settled: no event marker left on a run or campaign (the sweep publishes them) and every delivery delivered
        await waitFor(() => db.prepare<[], { n: number }>(`SELECT (SELECT COUNT(*) FROM webhook_deliveries WHERE status <> 'delivered')
          + (SELECT COUNT(*) FROM runs WHERE pending_events IS NOT NULL) + (SELECT COUNT(*) FROM campaigns WHERE pending_events IS NOT NULL) AS n`).get()!.n === 0, 30_000, 50);
        const ids = db.prepare<[], { id: number; event: string }>('SELECT id, event FROM webhook_deliveries ORDER BY id').all();
        const seen = new Set(receiver.received.map((r) => Number(r.headers['callplane-delivery-id'])));
        const missing = ids.filter((d) => !seen.has(d.id));
        expect(missing).toEqual([]);
        expect(ids.length).toBeGreaterThanOrEqual(stored.n);
        expect(ids.filter((d) => d.event === 'campaign.completed')).toHaveLength(1);
        // every received body is the stored one for its id (a resend carries the same bytes)
        const bodies = new Map(db.prepare<[], { id: number; body: string }>('SELECT id, body FROM webhook_deliveries').all().map((r) => [r.id, r.body]));
        for (const r of receiver.received) expect(r.body).toBe(bodies.get(Number(r.headers['callplane-delivery-id'])));
        // every fact's event is stored and received at least once, none lost: the kill may fall between a run's status
        // write (or the campaign's transition) and its deliveries, and the marker stored with the fact brings it back
        const runs = db.prepare<[number], { id: number; status: string; started_at: number | null }>(
          'SELECT id, status, started_at FROM runs WHERE campaign_id = ?').all(id);
        expect(runs).toHaveLength(total);
        const expected = [
          'campaign.started', 'campaign.completed',
          ...runs.filter((r) => r.started_at !== null).map((r) => `call.started:${r.id}`),
          ...runs.filter((r) => r.status === 'completed' || r.status === 'failed').map((r) => `call.ended:${r.id}`),
        ].sort();
        expect(runs.filter((r) => r.status === 'completed' || r.status === 'failed')).toHaveLength(total);
        const eventOf = (body: string) => {
          const b = JSON.parse(body) as { type: string; data: { run_id?: number } };
          return b.data.run_id === undefined ? b.type : `${b.type}:${b.data.run_id}`;
        };
        expect([...new Set(receiver.received.map((r) => eventOf(r.body)))].sort()).toEqual(expected);
        // stored once per event (unique per endpoint and event key): duplicates on the wire are resends of one delivery
        expect(ids.map((d) => eventOf(bodies.get(d.id)!)).sort()).toEqual(expected);
        process.stdout.write(`webhook crash: ${ids.length} deliveries stored (${stored.n} at the kill), ${receiver.received.length} received\n`);
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
