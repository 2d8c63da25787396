/**
 * Customer webhooks fed by core (docs/webhooks.md "Events"): a simulator campaign through the HTTP API publishes
 * campaign.started, call.started and call.ended for each connected call (call.ended for every call, with the run's
 * disposition, duration, contexts and links), campaign.completed; a pause publishes campaign.paused. Each arrives
 * once, signed, at an endpoint subscribed to it, and nothing arrives at another organization's endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WebhookDispatcher } from '../../core/webhooks/webhook-dispatcher.js';
import { verifyCallplaneSignature } from '../../docs/examples/webhooks/verify-signature.js';
import { startTestService, type Credentials, type TestService } from '../support/test-service.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';
import { createSimulatorConfig, createWorkflow, csvOf, uploadCsv, waitFor } from './campaign-support.js';

describe('webhook events from calls and campaigns', () => {
  let svc: TestService;
  let a: Credentials;
  let b: Credentials;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let other: Awaited<ReturnType<typeof startWebhookReceiver>>;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    other = await startWebhookReceiver();
    svc = await startTestService({ env: { CALLPLANE_CAMPAIGN_SWEEP_MS: '200', CALLPLANE_JOBS_PROCESS_EVERY_MS: '50' } });
    a = { token: (await svc.signup()).token };
    b = { token: (await svc.signup()).token };
  });
  afterAll(async () => {
    await svc.close();
    await receiver.close();
    await other.close();
  });

  const events = (r: typeof receiver) => r.received.map((x) => JSON.parse(x.body) as { id: number; type: string; data: Record<string, any> });

  it('publishes each fact once from where it is decided', async () => {
    const all = ['call.started', 'call.ended', 'call.analyzed', 'campaign.started', 'campaign.paused', 'campaign.completed', 'campaign.failed', 'phone_number.sync_failed'];
    const hook = await svc.post('/organizations/webhooks', { url: receiver.url, events: all }, a);
    const onlyEnded = await svc.post('/organizations/webhooks', { url: other.url, events: ['campaign.completed'] }, b);
    expect([hook.status, onlyEnded.status]).toEqual([200, 200]);
    const workflowId = await createWorkflow(svc, a);
    await createSimulatorConfig(svc, a, { ringMs: 5, talkMs: 20 });
    // 4 answered, 1 busy (suffix 01): retries off
    const key = await uploadCsv(svc, a, csvOf(5, (i) => (i === 2 ? '01' : String(20 + i))));
    const c = await svc.post('/campaign/create', { name: 'Hooks', workflow_id: workflowId, source_type: 'csv', source_id: key, retry_config: { enabled: false } }, a);
    expect((await svc.post(`/campaign/${c.body.id}/start`, undefined, a)).body.state).toBe('running');
    await waitFor(async () => (await svc.get(`/campaign/${c.body.id}`, a)).body.state === 'completed');
    await waitFor(() => events(receiver).some((e) => e.type === 'campaign.completed'));
    await svc.container.get(WebhookDispatcher).idle();

    const got = events(receiver);
    const count = (t: string) => got.filter((e) => e.type === t).length;
    expect([count('campaign.started'), count('call.started'), count('call.ended'), count('campaign.completed')]).toEqual([1, 4, 5, 1]);
    expect(new Set(got.map((e) => e.id)).size).toBe(got.length);
    for (const r of receiver.received) expect(verifyCallplaneSignature(hook.body.secret, String(r.headers['callplane-signature']), r.body)).toBe(true);
    expect(got.find((e) => e.type === 'campaign.started')!.data).toMatchObject({ campaign_id: c.body.id, state: 'running', previous_state: 'draft' });
    expect(got.find((e) => e.type === 'campaign.completed')!.data).toMatchObject({ campaign_id: c.body.id, state: 'completed', processed_rows: 5, total_rows: 5 });
    const ended = got.filter((e) => e.type === 'call.ended').map((e) => e.data);
    expect(ended.map((d) => d.disposition).sort()).toEqual(['busy', 'completed', 'completed', 'completed', 'completed']);
    // a connected call carries how long it talked; the busy one (usually the first to end) never talked: null
    const talked = ended.find((d) => d.disposition === 'completed')!;
    const busy = ended.find((d) => d.disposition === 'busy')!;
    expect(talked).toEqual(expect.objectContaining({
      run_id: expect.any(Number), workflow_id: workflowId, campaign_id: c.body.id, mode: 'outbound', status: 'completed',
      duration_seconds: expect.any(Number), gathered_context: expect.objectContaining({ mapped_call_disposition: 'completed' }),
      initial_context: expect.objectContaining({ phone_number: expect.any(String) }), transcript_url: null, recording_url: null,
    }));
    expect(busy).toEqual(expect.objectContaining({
      run_id: expect.any(Number), campaign_id: c.body.id, status: 'completed', duration_seconds: null,
      gathered_context: expect.objectContaining({ mapped_call_disposition: 'busy' }),
      initial_context: expect.objectContaining({ phone_number: expect.stringMatching(/01$/) }),
    }));
    // the run each call.ended names is the API's run, final
    for (const d of [talked, busy]) {
      const run = await svc.get(`/workflow/${workflowId}/runs/${d.run_id}`, a);
      expect([run.body.status, run.body.disposition]).toEqual(['completed', d.disposition]);
    }
    // organization b's endpoint hears nothing of a's campaign
    expect(other.received).toEqual([]);

    // a pause by the user
    const key2 = await uploadCsv(svc, a, csvOf(30, () => '30'));
    const c2 = await svc.post('/campaign/create', { name: 'Paused', workflow_id: workflowId, source_type: 'csv', source_id: key2, max_concurrency: 1 }, a);
    await svc.post(`/campaign/${c2.body.id}/start`, undefined, a);
    expect((await svc.post(`/campaign/${c2.body.id}/pause`, undefined, a)).body.state).toBe('paused');
    await waitFor(() => events(receiver).some((e) => e.type === 'campaign.paused'));
    expect(events(receiver).find((e) => e.type === 'campaign.paused')!.data).toMatchObject({ campaign_id: c2.body.id, previous_state: 'running', reason: 'paused_by_user' });
    await svc.post(`/campaign/${c2.body.id}/cancel`, undefined, a);
  }, 30_000);
});
