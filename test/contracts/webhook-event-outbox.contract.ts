import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DEFAULT_CIRCUIT_BREAKER, DEFAULT_RETRY_CONFIG } from '../../core/campaigns/campaign.js';
import type { CampaignRepository } from '../../core/ports/campaign.repository.port.js';
import { campaignEventKey, runEventKey, type PendingEvent } from '../../core/ports/event-publisher.port.js';
import type { RunRepository } from '../../core/ports/run.repository.port.js';
import type { WebhookRepository } from '../../core/ports/webhook.repository.port.js';
import type { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';

export interface WebhookEventOutboxHarness {
  webhooks: WebhookRepository;
  runs: RunRepository;
  campaigns: CampaignRepository;
  workflows: WorkflowRepository;
  /** An organization that exists in the store. */
  organization: number;
  cleanup(): Promise<void>;
}

const t0 = new Date('2026-03-03T10:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

/**
 * The event outbox every store keeps (docs/webhooks.md "Guarantees"): a customer event's marker is written by the
 * same atomic step as its fact (a run's status, a campaign's transition or completion) and only when that step
 * applies; the sweep lists markers across runs and campaigns and clears them by key; deliveries are unique per
 * (endpoint, event key); deliveries can be stored already leased to their sender; many results record at once.
 */
export function runWebhookEventOutboxContract(label: string, make: () => Promise<WebhookEventOutboxHarness>): void {
  describe(`Webhook event outbox contract: ${label}`, () => {
    let h: WebhookEventOutboxHarness;
    let org: number;
    beforeEach(async () => {
      h = await make();
      org = h.organization;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    const newRun = async () => {
      const { workflow, current } = await h.workflows.create(org, {
        name: 'Agent', workflowUuid: '00000000-0000-4000-8000-000000000077', definition: structuredClone(exampleWorkflowDefinition),
        templateContextVariables: {}, workflowConfigurations: {}, now: t0,
      });
      return h.runs.create(org, { workflowId: workflow.id, definitionId: current.id, name: 'call', mode: 'outbound', initialContext: {}, now: t0 });
    };
    const newCampaign = () => h.campaigns.create(org, {
      name: 'Promo', workflowId: 7, telephonyConfigurationId: 9, sourceType: 'csv', sourceId: 'uploads/1/x/a.csv',
      retryConfig: { ...DEFAULT_RETRY_CONFIG }, maxConcurrency: 2, scheduleConfig: null, circuitBreaker: { ...DEFAULT_CIRCUIT_BREAKER },
      contacts: [], logs: [], now: t0,
    });
    /** A run that completed with its call.ended event marker stored, and that marker. */
    const endedRun = async () => {
      const run = await newRun();
      const ended: PendingEvent = { key: runEventKey(run.id, 'call.ended'), type: 'call.ended', at: at(2) };
      await h.runs.applyStatus(org, run.id, { status: 'completed', at: at(2), disposition: 'completed', event: ended });
      return { ended, marker: { kind: 'run' as const, id: run.id, key: ended.key } };
    };
    const endpoint = () => h.webhooks.createEndpoint(org, {
      url: 'https://hooks.example.com/', events: ['call.ended'], description: null, secretCiphertext: 'c', secretsKeyId: 'k', now: t0,
    });

    it('stores a run event marker with the status it belongs to, only when the status applies, and clears it by key', async () => {
      const run = await newRun();
      const started: PendingEvent = { key: runEventKey(run.id, 'call.started'), type: 'call.started', at: at(1) };
      const ended: PendingEvent = { key: runEventKey(run.id, 'call.ended'), type: 'call.ended', at: at(2) };
      expect((await h.runs.applyStatus(org, run.id, { status: 'in_progress', at: at(1), event: started })).applied).toBe(true);
      expect((await h.runs.applyStatus(org, run.id, { status: 'completed', at: at(2), disposition: 'completed', event: ended })).applied).toBe(true);
      // a replay is not applied and stores no marker
      expect((await h.runs.applyStatus(org, run.id, { status: 'completed', at: at(3), event: { ...ended, at: at(3) } })).applied).toBe(false);
      expect(await h.webhooks.pendingEvents(10)).toEqual([
        { kind: 'run', organizationId: org, id: run.id, event: started },
        { kind: 'run', organizationId: org, id: run.id, event: ended },
      ]);
      await h.webhooks.clearPendingEvent('run', org, run.id, started.key);
      await h.webhooks.clearPendingEvent('run', org + 1000, run.id, ended.key);
      expect((await h.webhooks.pendingEvents(10)).map((f) => f.event.key)).toEqual([ended.key]);
      await h.webhooks.clearPendingEvent('run', org, run.id, ended.key);
      await h.webhooks.clearPendingEvent('run', org, run.id, ended.key);
      expect(await h.webhooks.pendingEvents(10)).toEqual([]);
      expect((await h.runs.get(org, run.id))!.status).toBe('completed');
    });

    it('stores campaign event markers with their transition or completion, with previous state and reason', async () => {
      const c = await newCampaign();
      const startedAt = at(5);
      const started: PendingEvent = { key: campaignEventKey(c.id, 'campaign.started', startedAt), type: 'campaign.started', at: startedAt, previousState: 'draft' };
      expect((await h.campaigns.transition(org, c.id, { from: ['draft'], to: 'running', now: startedAt, event: started })).changed).toBe(true);
      // a transition that does not happen stores nothing
      const refused: PendingEvent = { key: 'campaign:x', type: 'campaign.started', at: at(6) };
      expect((await h.campaigns.transition(org, c.id, { from: ['paused'], to: 'running', now: at(6), event: refused })).changed).toBe(false);
      const done: PendingEvent = { key: campaignEventKey(c.id, 'campaign.completed', at(9)), type: 'campaign.completed', at: at(9), previousState: 'running' };
      const completed = await h.campaigns.completeIfDone(org, c.id, at(9), { ts: at(9), level: 'info', event: 'campaign_completed', message: 'done', details: {} }, done);
      expect(completed?.state).toBe('completed');
      expect(await h.webhooks.pendingEvents(10)).toEqual([
        { kind: 'campaign', organizationId: org, id: c.id, event: started },
        { kind: 'campaign', organizationId: org, id: c.id, event: done },
      ]);
      expect(await h.webhooks.pendingEvents(1)).toEqual([{ kind: 'campaign', organizationId: org, id: c.id, event: started }]);
      await h.webhooks.clearPendingEvent('campaign', org, c.id, started.key);
      await h.webhooks.clearPendingEvent('campaign', org, c.id, done.key);
      expect(await h.webhooks.pendingEvents(10)).toEqual([]);
      expect((await h.campaigns.get(org, c.id))!.state).toBe('completed');
    });

    it('stores one delivery per (endpoint, event key): enqueueing a keyed event again stores and returns nothing', async () => {
      const a = await endpoint();
      const b = await endpoint();
      const keyed = (endpointId: number, key: string) => ({ endpointId, event: 'call.ended' as const, now: t0, eventKey: key, body: (id: number) => `{"id":${id}}` });
      const first = await h.webhooks.enqueue(org, [keyed(a.id, 'run:1:call.ended'), keyed(b.id, 'run:1:call.ended')]);
      expect(first).toHaveLength(2);
      expect(first.map((d) => d.body)).toEqual(first.map((d) => `{"id":${d.id}}`));
      expect(await h.webhooks.enqueue(org, [keyed(a.id, 'run:1:call.ended')])).toEqual([]);
      const again = await h.webhooks.enqueue(org, [keyed(a.id, 'run:1:call.ended'), keyed(a.id, 'run:2:call.ended')]);
      expect(again.map((d) => [d.endpointId, JSON.parse(d.body).id === d.id])).toEqual([[a.id, true]]);
      // unkeyed deliveries are never deduplicated
      const plain = { endpointId: a.id, event: 'webhook.test' as const, now: t0, body: (id: number) => `{"id":${id}}` };
      expect(await h.webhooks.enqueue(org, [plain, plain])).toHaveLength(2);
      expect((await h.webhooks.listDeliveries(org, a.id, { page: 1, limit: 50 })).totalCount).toBe(4);
    });

    it('clears the event marker named with the deliveries once they are stored, also when they were stored before; a failed enqueue leaves it', async () => {
      const a = await endpoint();
      const { ended, marker } = await endedRun();
      const delivery = (body: (id: number) => string) => ({ endpointId: a.id, event: 'call.ended' as const, now: t0, eventKey: ended.key, body });
      await expect(h.webhooks.enqueue(org, [delivery(() => { throw new Error('no body'); })], undefined, marker)).rejects.toThrow('no body');
      expect((await h.webhooks.pendingEvents(10)).map((f) => f.event.key)).toEqual([ended.key]);
      const [d] = await h.webhooks.enqueue(org, [delivery((id) => `{"id":${id}}`)], { leaseMs: 60_000 }, marker);
      expect(d).toMatchObject({ endpointId: a.id, event: 'call.ended', status: 'pending' });
      expect(await h.webhooks.pendingEvents(10)).toEqual([]);
      // a marker whose deliveries were all stored before (a crash right after them): nothing new, the marker goes
      const c = await newCampaign();
      const done: PendingEvent = { key: campaignEventKey(c.id, 'campaign.started', at(9)), type: 'campaign.started', at: at(9), previousState: 'draft' };
      await h.campaigns.transition(org, c.id, { from: ['draft'], to: 'running', now: at(9), event: done });
      expect((await h.webhooks.pendingEvents(10)).map((f) => f.event.key)).toEqual([done.key]);
      expect(await h.webhooks.enqueue(org, [delivery((id) => `{"id":${id}}`)], undefined, { kind: 'campaign', id: c.id, key: done.key })).toEqual([]);
      expect(await h.webhooks.pendingEvents(10)).toEqual([]);
      expect((await h.webhooks.listDeliveries(org, a.id, { page: 1, limit: 10 })).totalCount).toBe(1);
    });

    it('enqueueEvent clears the event marker with its deliveries, also when no endpoint is subscribed; a failed one stores nothing and leaves it', async () => {
      const a = await endpoint();
      const { ended, marker } = await endedRun();
      await expect(h.webhooks.enqueueEvent(org, { event: 'call.ended', now: t0, eventKey: ended.key, marker, body: () => { throw new Error('no body'); } })).rejects.toThrow('no body');
      expect((await h.webhooks.pendingEvents(10)).map((f) => f.event.key)).toEqual([ended.key]);
      expect((await h.webhooks.listDeliveries(org, a.id, { page: 1, limit: 10 })).totalCount).toBe(0);
      const r = await h.webhooks.enqueueEvent(org, { event: 'call.ended', now: t0, eventKey: ended.key, marker, body: (id) => `{"id":${id}}` });
      expect(r.deliveries).toEqual([expect.objectContaining({ endpointId: a.id, body: `{"id":${r.deliveries[0]!.id}}` })]);
      expect(await h.webhooks.pendingEvents(10)).toEqual([]);
      // no subscriber for this event type: the marker goes all the same
      const c = await newCampaign();
      const done: PendingEvent = { key: campaignEventKey(c.id, 'campaign.started', at(9)), type: 'campaign.started', at: at(9), previousState: 'draft' };
      await h.campaigns.transition(org, c.id, { from: ['draft'], to: 'running', now: at(9), event: done });
      const none = await h.webhooks.enqueueEvent(org, { event: 'campaign.started', now: t0, eventKey: done.key, marker: { kind: 'campaign', id: c.id, key: done.key }, body: (id) => `{"id":${id}}` });
      expect(none).toEqual({ endpoints: [], deliveries: [], leased: false });
      expect(await h.webhooks.pendingEvents(10)).toEqual([]);
    });

    it('stores deliveries already leased to their sender when asked: not claimable until the lease ends, recorded under it', async () => {
      const a = await endpoint();
      const [d] = await h.webhooks.enqueue(org, [{ endpointId: a.id, event: 'call.ended', now: t0, body: (id) => `{"id":${id}}` }], { leaseMs: 60_000 });
      expect(d).toMatchObject({ status: 'pending', attempts: 0, leaseUntil: at(60_000), nextAttemptAt: at(60_000) });
      expect(d!.leaseToken).toEqual(expect.any(String));
      expect(await h.webhooks.claimDue(at(1000), 60_000, 10)).toEqual([]);
      const [r1, r2] = await h.webhooks.recordAttempts([
        { id: d!.id, leaseToken: d!.leaseToken!, result: { status: 'delivered', attempts: 1, lastStatusCode: 200, lastError: null, nextAttemptAt: null, now: at(10) } },
        { id: d!.id, leaseToken: 'not-the-claim', result: { status: 'failed', attempts: 9, lastStatusCode: 500, lastError: 'x', nextAttemptAt: null, now: at(11) } },
      ]);
      expect([r1, r2]).toEqual([true, false]);
      expect(await h.webhooks.getDelivery(org, a.id, d!.id)).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200, leaseToken: null });
      // a sender that died with the lease: the delivery is due again once it expires
      const [e] = await h.webhooks.enqueue(org, [{ endpointId: a.id, event: 'call.ended', now: t0, body: (id) => `{"id":${id}}` }], { leaseMs: 1000 });
      expect((await h.webhooks.claimDue(at(1000), 60_000, 10)).map((x) => x.id)).toEqual([e!.id]);
      expect(await h.webhooks.recordAttempts([])).toEqual([]);
    });
  });
}
