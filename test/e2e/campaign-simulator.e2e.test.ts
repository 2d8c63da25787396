/**
 * A 1,000-contact campaign on the simulator at max_concurrency 20, through the HTTP API, to completion with exact
 * counters; the number of calls in flight (the storage slot counter) is sampled all along.
 */
import { describe, expect, it, afterAll, beforeAll } from '@jest/globals';
import { startTestService, type Credentials, type TestService } from '../support/test-service.js';
import { createSimulatorConfig, createWorkflow, csvOf, uploadCsv, waitFor } from './campaign-support.js';

describe('1,000-contact simulator campaign', () => {
  let svc: TestService;
  let auth: Credentials;
  beforeAll(async () => {
    svc = await startTestService({ env: { LOG_LEVEL: 'warn', CALLPLANE_DATA_DIR: `/tmp/callplane-campaign-1000-${process.pid}` } });
    auth = { token: (await svc.signup()).token };
  });
  afterAll(async () => {
    await svc.close();
  });

  it('runs to completion at max_concurrency 20 with exact counters, never above the cap', async () => {
    const workflowId = await createWorkflow(svc, auth);
    await createSimulatorConfig(svc, auth, { ringMs: 0, talkMs: 1 });
    // per 50 contacts: one each of 00 (dial fails), 01 busy, 02 no answer, 03 voicemail; the rest answer
    const suffix = (i: number) => (i % 50 < 4 ? `0${i % 50}` : String(10 + (i % 80)));
    const key = await uploadCsv(svc, auth, csvOf(1000, suffix));
    const created = await svc.post('/campaign/create', {
      name: 'Big', workflow_id: workflowId, source_type: 'csv', source_id: key, max_concurrency: 20, retry_config: { enabled: false },
    }, auth);
    expect(created.body.total_rows).toBe(1000);
    const id = created.body.id as number;
    const inFlight = svc.db.prepare<[number], { in_flight: number; pending: number }>(`SELECT in_flight,
      (SELECT COUNT(*) FROM campaign_contacts WHERE campaign_id = campaigns.id AND status = 'pending') AS pending FROM campaigns WHERE id = ?`);
    const samples: Array<{ in_flight: number; pending: number }> = [];
    const sampler = setInterval(() => samples.push(inFlight.get(id)!), 2);
    try {
      expect((await svc.post(`/campaign/${id}/start`, undefined, auth)).status).toBe(200);
      await waitFor(async () => (await svc.get(`/campaign/${id}`, auth)).body.state === 'completed', 60_000, 50);
    } finally {
      clearInterval(sampler);
    }
    const c = (await svc.get(`/campaign/${id}`, auth)).body;
    expect(c).toMatchObject({ state: 'completed', total_rows: 1000, processed_rows: 1000, failed_rows: 80, executed_count: 1000, total_queued_count: 1000 });
    const runs = await svc.get(`/campaign/${id}/runs?limit=1`, auth);
    expect(runs.body.total_count).toBe(1000);
    const perAttempt = svc.db.prepare<[number], { n: number }>(
      'SELECT COUNT(*) AS n FROM (SELECT attempt_id FROM runs WHERE campaign_id = ? GROUP BY attempt_id HAVING COUNT(*) > 1)').get(id)!;
    expect(perAttempt.n).toBe(0);
    expect(samples.length).toBeGreaterThan(10);
    expect(Math.max(...samples.map((s) => s.in_flight))).toBe(20);
    expect(samples.every((s) => s.in_flight <= 20)).toBe(true);
    // while contacts wait, the slots stay full
    const waiting = samples.filter((s) => s.pending > 0);
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting.filter((s) => s.in_flight === 20).length / waiting.length).toBeGreaterThan(0.9);
  }, 90_000);
});
