/**
 * Crash safety: the built service (`node dist/http/main.js`, built by `npm test`) runs a simulator campaign on a
 * temporary data directory, is SIGKILLed mid-campaign, restarted on the same files, and the campaign completes with
 * every contact dialed exactly once per attempt: one run (hence one provider call, keyed by the attempt id) per
 * attempt, attempts numbered 1..n per contact, nothing left pending or in flight.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { spawnService, type SpawnedService } from '../support/process.js';
import { apiClient, createSimulatorConfig, createWorkflow, csvOf, uploadCsv, waitFor } from './campaign-support.js';

describe('campaign crash safety', () => {
  it('completes after a SIGKILL mid-campaign, dialing each contact exactly once per attempt', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callplane-crash-'));
    const env = {
      CALLPLANE_DATA_DIR: dir, CALLPLANE_SIGNUP: 'open', LOG_LEVEL: 'warn', CALLPLANE_CAMPAIGN_LEASE_MS: '1000', CALLPLANE_CAMPAIGN_RECONCILE_MS: '800',
      CALLPLANE_CAMPAIGN_SWEEP_MS: '300', CALLPLANE_JOBS_PROCESS_EVERY_MS: '100', CALLPLANE_JOBS_LOCK_LIFETIME_MS: '1000',
    };
    let svc: SpawnedService | null = null;
    try {
      svc = await spawnService(env);
      let api = apiClient(svc.url);
      const signup = await api.post('/auth/signup', { email: 'crash@example.com', password: 'correct horse battery' });
      const auth = { token: signup.body.token as string };
      const workflowId = await createWorkflow(api, auth);
      await createSimulatorConfig(api, auth, { ringMs: 20, talkMs: 150 });
      const total = 150;
      // every 10th contact is busy (retried once after 30 s would be too slow: retries off), the rest answer
      const key = await uploadCsv(api, auth, csvOf(total, (i) => (i % 10 === 0 ? '01' : String(10 + (i % 80)))));
      const c = await api.post('/campaign/create', {
        name: 'Crash', workflow_id: workflowId, source_type: 'csv', source_id: key, max_concurrency: 10, retry_config: { enabled: false },
      }, auth);
      const id = c.body.id as number;
      expect((await api.post(`/campaign/${id}/start`, undefined, auth)).body.state).toBe('running');
      await waitFor(async () => (await api.get(`/campaign/${id}`, auth)).body.processed_rows >= 40, 20_000, 20);

      svc.child.kill('SIGKILL');
      expect((await svc.exited).signal).toBe('SIGKILL');
      const atKill = new Database(join(dir, 'callplane.db'), { readonly: true });
      const before = atKill.prepare<[number], { processed_rows: number; in_flight: number }>('SELECT processed_rows, in_flight FROM campaigns WHERE id = ?').get(id)!;
      atKill.close();
      expect(before.processed_rows).toBeLessThan(total);

      svc = await spawnService(env);
      api = apiClient(svc.url);
      await waitFor(async () => (await api.get(`/campaign/${id}`, auth)).body.state === 'completed', 30_000, 50);
      const done = (await api.get(`/campaign/${id}`, auth)).body;
      expect(done).toMatchObject({ processed_rows: total, total_rows: total, total_queued_count: total });

      const db = new Database(join(dir, 'callplane.db'), { readonly: true });
      try {
        const attempts = db.prepare<[number], { id: number; contact_id: number; attempt_number: number; status: string; run_id: number | null }>(
          'SELECT id, contact_id, attempt_number, status, run_id FROM campaign_attempts WHERE campaign_id = ? ORDER BY id').all(id);
        // retries are off: exactly one attempt per contact, each ended with one run
        expect(attempts.length).toBe(total);
        expect(new Set(attempts.map((a) => a.contact_id)).size).toBe(total);
        expect(attempts.every((a) => a.status === 'ended' && a.attempt_number === 1 && a.run_id !== null)).toBe(true);
        const runsPerAttempt = db.prepare<[number], { attempt_id: number; n: number; calls: number }>(
          `SELECT attempt_id, COUNT(*) AS n, COUNT(DISTINCT provider_call_id) AS calls FROM runs WHERE campaign_id = ? GROUP BY attempt_id`).all(id);
        expect(runsPerAttempt.length).toBe(total);
        expect(runsPerAttempt.every((r) => r.n === 1 && r.calls <= 1)).toBe(true);
        // the simulator keys its call ids on the attempt id: a second placeCall for an attempt would show as another id
        const foreign = db.prepare<[number], { n: number }>(
          `SELECT COUNT(*) AS n FROM runs WHERE campaign_id = ? AND provider_call_id IS NOT NULL AND provider_call_id <> 'sim-' || attempt_id`).get(id)!;
        expect(foreign.n).toBe(0);
        const open = db.prepare<[number], { n: number }>(`SELECT COUNT(*) AS n FROM campaign_contacts WHERE campaign_id = ? AND status <> 'done'`).get(id)!;
        expect(open.n).toBe(0);
        expect(db.prepare<[number], { in_flight: number; executed_count: number }>('SELECT in_flight, executed_count FROM campaigns WHERE id = ?').get(id))
          .toEqual({ in_flight: 0, executed_count: total });
      } finally {
        db.close();
      }
      expect(done.executed_count).toBe(total);
    } finally {
      if (svc && svc.child.exitCode === null && svc.child.signalCode === null) {
        svc.child.kill('SIGTERM');
        await svc.exited;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
