import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { openMigratedSqlite, type SqliteDatabase } from '../../adapters/storage/sqlite/database.js';
import { SqliteRunRepository } from '../../adapters/storage/sqlite/run.sqlite.js';
import { SqliteCampaignRepository } from '../../adapters/storage/sqlite/campaign.sqlite.js';
import { SqliteWebhookRepository } from '../../adapters/storage/sqlite/webhook.sqlite.js';
import { SqliteWorkflowRepository } from '../../adapters/storage/sqlite/workflow.sqlite.js';
import { insertOrganization } from '../../adapters/storage/sqlite/workflow.sqlite.test-support.js';
import { ApplyCallStatus } from '../calls/apply-call-status.use-case.js';
import { CallOutcomeListeners } from '../calls/call-outcome-listener.js';
import { campaignEventKey, type EventPublisher, type OutboundEvent } from '../ports/event-publisher.port.js';
import { silentLogger } from '../ports/logger.port.js';
import type { Run } from '../runs/run.js';
import { exampleWorkflowDefinition } from '../workflows/example-definition.js';
import { PENDING_EVENT_GRACE_MS, WebhookEventRecovery } from './webhook-event-recovery.js';
import { WebhookEventPublisher } from './webhook-events.js';

const T0 = new Date('2026-11-24T10:00:00.000Z');
const links = { view: async (run: Run) => ({ run, transcriptUrl: null, recordingUrl: null, initialContext: run.initialContext, gatheredContext: run.gatheredContext }) };

/**
 * A crash between a fact and its event's deliveries loses nothing (docs/webhooks.md "Guarantees"): the fact's
 * write stored a marker, and the sweep's recovery publishes it, once per endpoint however often it runs.
 */
describe('WebhookEventRecovery', () => {
  let db: SqliteDatabase;
  let now: Date;
  const clock = { now: () => now };
  let org: number;
  let webhooks: SqliteWebhookRepository;
  let runs: SqliteRunRepository;
  let campaigns: SqliteCampaignRepository;
  let publisher: WebhookEventPublisher;
  let recovery: WebhookEventRecovery;
  let kicks: number;

  beforeEach(async () => {
    db = openMigratedSqlite(':memory:');
    now = T0;
    org = insertOrganization(db, 'A');
    webhooks = new SqliteWebhookRepository(db);
    runs = new SqliteRunRepository(db);
    campaigns = new SqliteCampaignRepository(db);
    kicks = 0;
    publisher = new WebhookEventPublisher(webhooks, links, clock, silentLogger, () => { kicks++; });
    recovery = new WebhookEventRecovery(webhooks, runs, campaigns, publisher, clock, silentLogger);
    await webhooks.createEndpoint(org, {
      url: 'https://hooks.example.com/', events: ['call.started', 'call.ended', 'campaign.completed'], description: null, secretCiphertext: 'c', secretsKeyId: 'k', now: T0,
    });
  });
  afterEach(() => { db.close(); });

  const newRun = async () => {
    const { workflow, current } = await new SqliteWorkflowRepository(db).create(org, {
      name: 'Agent', workflowUuid: '00000000-0000-4000-8000-000000000001', definition: structuredClone(exampleWorkflowDefinition),
      templateContextVariables: {}, workflowConfigurations: {}, now: T0,
    });
    return runs.create(org, { workflowId: workflow.id, definitionId: current.id, name: 'call', mode: 'outbound', provider: 'simulator', initialContext: {}, now: T0 });
  };
  const deliveries = async () => (await webhooks.listDeliveries(org, 1, { page: 1, limit: 100 })).deliveries.reverse()
    .map((d) => ({ event: d.event, body: JSON.parse(d.body) as { id: number; type: string; created_at: string; data: Record<string, unknown> } }));

  /** The process "dies" right after the fact's write: its publisher never stores anything. */
  const dying: EventPublisher = { publish: async () => undefined };

  it('publishes call.started and call.ended whose process died right after the status write, once however often it runs', async () => {
    const run = await newRun();
    const apply = new ApplyCallStatus(runs, new CallOutcomeListeners(), clock, silentLogger, undefined, dying);
    await apply.execute('simulator', { kind: 'status', status: 'in_progress', at: T0 }, run.id);
    await apply.execute('simulator', { kind: 'status', status: 'completed', durationSeconds: 12, at: new Date(T0.getTime() + 12_000) }, run.id);
    expect(await deliveries()).toEqual([]);

    // a marker younger than the grace period is left to the publish that follows its write
    now = new Date(T0.getTime() + 12_000);
    expect(await recovery.recover()).toBe(1);
    now = new Date(T0.getTime() + 12_000 + PENDING_EVENT_GRACE_MS);
    expect(await recovery.recover()).toBe(1);
    expect(await recovery.recover()).toBe(0);
    const got = await deliveries();
    expect(got.map((d) => d.event)).toEqual(['call.started', 'call.ended']);
    expect(got[1]!.body).toMatchObject({ type: 'call.ended', created_at: '2026-11-24T10:00:12.000Z', data: { run_id: run.id, status: 'completed', duration_seconds: 12 } });
    expect(await webhooks.pendingEvents(10)).toEqual([]);
    expect(kicks).toBe(2);
  });

  it('stores nothing twice when the publish did store the deliveries but died before clearing the marker', async () => {
    const run = await newRun();
    const apply = new ApplyCallStatus(runs, new CallOutcomeListeners(), clock, silentLogger, undefined, publisher);
    await apply.execute('simulator', { kind: 'status', status: 'completed', at: T0 }, run.id);
    expect((await deliveries()).map((d) => d.event)).toEqual(['call.ended']);
    expect(await webhooks.pendingEvents(10)).toEqual([]);
    // as if the clear never happened: the marker is written back and recovered
    const marker = { key: `run:${run.id}:call.ended`, type: 'call.ended' as const, at: T0 };
    db.prepare('UPDATE runs SET pending_events = ? WHERE id = ?').run(JSON.stringify([{ key: marker.key, type: marker.type, at: T0.getTime() }]), run.id);
    now = new Date(T0.getTime() + 60_000);
    expect(await recovery.recover()).toBe(1);
    expect((await deliveries()).map((d) => d.event)).toEqual(['call.ended']);
    expect(await webhooks.pendingEvents(10)).toEqual([]);
  });

  it('publishes a campaign event from its marker with the previous state and reason it was stored with', async () => {
    const c = await campaigns.create(org, {
      name: 'Promo', workflowId: 1, telephonyConfigurationId: null, sourceType: 'csv', sourceId: 's', retryConfig: { enabled: false, max_retries: 0, retry_delay_seconds: 0, retry_on_busy: false, retry_on_no_answer: false, retry_on_voicemail: false },
      maxConcurrency: 1, scheduleConfig: null, circuitBreaker: { enabled: false, failure_threshold: 0.5, window_seconds: 60, min_calls_in_window: 5 }, contacts: [], logs: [], now: T0,
    } as Parameters<SqliteCampaignRepository['create']>[1]);
    await campaigns.transition(org, c.id, { from: ['draft'], to: 'running', now: T0 });
    const event = { key: campaignEventKey(c.id, 'campaign.completed', T0), type: 'campaign.completed' as const, at: T0, previousState: 'running' };
    await campaigns.completeIfDone(org, c.id, T0, { ts: T0, level: 'info', event: 'campaign_completed', message: 'done', details: {} }, event);
    now = new Date(T0.getTime() + 60_000);
    expect(await recovery.recover()).toBe(1);
    const got = await deliveries();
    expect(got.map((d) => [d.event, d.body.data.campaign_id, d.body.data.state, d.body.data.previous_state])).toEqual([['campaign.completed', c.id, 'completed', 'running']]);
    expect(await webhooks.pendingEvents(10)).toEqual([]);
  });

  it('drops a marker whose run is gone', async () => {
    const run = await newRun();
    await runs.applyStatus(org, run.id, { status: 'completed', at: T0, event: { key: `run:${run.id}:call.ended`, type: 'call.ended', at: T0 } });
    db.prepare('DELETE FROM runs WHERE id = ?').run(run.id);
    now = new Date(T0.getTime() + 60_000);
    await recovery.recover();
    expect(await webhooks.pendingEvents(10)).toEqual([]);
    expect(await deliveries()).toEqual([]);
  });

  it('ApplyCallStatus hands the publisher the marker it stored with the status', async () => {
    const events: OutboundEvent[] = [];
    const spy: EventPublisher = { publish: async (e) => { events.push(e); } };
    const run = await newRun();
    await new ApplyCallStatus(runs, new CallOutcomeListeners(), clock, silentLogger, undefined, spy).execute('simulator', { kind: 'status', status: 'in_progress', at: T0 }, run.id);
    expect(events.map((e) => [e.type, e.pending?.key])).toEqual([['call.started', `run:${run.id}:call.started`]]);
  });
  it('a published call event with subscribers is one repository write: its deliveries and its marker together', async () => {
    const run = await newRun();
    const writes: string[] = [];
    const spied = {
      subscribedEndpoints: webhooks.subscribedEndpoints.bind(webhooks),
      enqueue: (...a: Parameters<SqliteWebhookRepository['enqueue']>) => { writes.push(a[3] ? 'enqueue+marker' : 'enqueue'); return webhooks.enqueue(...a); },
      enqueueEvent: (...a: Parameters<SqliteWebhookRepository['enqueueEvent']>) => { writes.push(a[1].marker ? 'enqueueEvent+marker' : 'enqueueEvent'); return webhooks.enqueueEvent(...a); },
      clearPendingEvent: (...a: Parameters<SqliteWebhookRepository['clearPendingEvent']>) => { writes.push('clear'); return webhooks.clearPendingEvent(...a); },
    };
    const apply = new ApplyCallStatus(runs, new CallOutcomeListeners(), clock, silentLogger, undefined, new WebhookEventPublisher(spied, links, clock, silentLogger, () => undefined));
    await apply.execute('simulator', { kind: 'status', status: 'completed', durationSeconds: 3, at: T0 }, run.id);
    expect(writes).toEqual(['enqueue+marker']);
    expect(await webhooks.pendingEvents(10)).toEqual([]);
    expect((await deliveries()).map((d) => d.event)).toEqual(['call.ended']);
  });

  it('after an event that had subscribers, the next reads the endpoints inside its one write; without subscribers, a read alone', async () => {
    const calls: string[] = [];
    const views: number[] = [];
    const spied = {
      subscribedEndpoints: (...a: Parameters<SqliteWebhookRepository['subscribedEndpoints']>) => { calls.push('read'); return webhooks.subscribedEndpoints(...a); },
      enqueue: (...a: Parameters<SqliteWebhookRepository['enqueue']>) => { calls.push('enqueue'); return webhooks.enqueue(...a); },
      enqueueEvent: (...a: Parameters<SqliteWebhookRepository['enqueueEvent']>) => { calls.push('enqueueEvent'); return webhooks.enqueueEvent(...a); },
      clearPendingEvent: (...a: Parameters<SqliteWebhookRepository['clearPendingEvent']>) => { calls.push('clear'); return webhooks.clearPendingEvent(...a); },
    };
    const counted = { view: async (run: Run) => { views.push(run.id); return links.view(run); } };
    const p = new WebhookEventPublisher(spied, counted, clock, silentLogger, () => undefined);
    const run = await newRun();
    const ended = (id: number): OutboundEvent => ({ type: 'call.ended', organizationId: org, run: { ...run, id } });
    await p.publish(ended(101));
    await p.publish(ended(102));
    expect(calls).toEqual(['read', 'enqueue', 'enqueueEvent']);
    // an endpoint added meanwhile is read by that same write
    const second = await webhooks.createEndpoint(org, { url: 'https://second.example.com/', events: ['call.ended'], description: null, secretCiphertext: 'c', secretsKeyId: 'k', now: T0 });
    await p.publish(ended(103));
    expect((await webhooks.listDeliveries(org, second.id, { page: 1, limit: 10 })).deliveries.map((d) => JSON.parse(d.body).data.run_id)).toEqual([103]);
    // every endpoint gone: that write stores nothing; from then on the events of that type cost a read and no run view
    await webhooks.deleteEndpoint(org, 1);
    await webhooks.deleteEndpoint(org, second.id);
    calls.length = 0;
    views.length = 0;
    await p.publish(ended(104));
    await p.publish(ended(105));
    await p.publish(ended(106));
    expect(calls).toEqual(['enqueueEvent', 'read', 'read']);
    expect(views).toEqual([104]);
    expect(db.prepare('SELECT COUNT(*) FROM webhook_deliveries').pluck().get()).toBe(0);
    // a marked event with no subscriber still has its marker cleared by that write
    const third = await webhooks.createEndpoint(org, { url: 'https://third.example.com/', events: ['call.ended'], description: null, secretCiphertext: 'c', secretsKeyId: 'k', now: T0 });
    await p.publish(ended(107));
    await webhooks.deleteEndpoint(org, third.id);
    await runs.applyStatus(org, run.id, { status: 'completed', at: T0, event: { key: `run:${run.id}:call.ended`, type: 'call.ended', at: T0 } });
    expect((await webhooks.pendingEvents(10)).length).toBe(1);
    calls.length = 0;
    await p.publish({ type: 'call.ended', organizationId: org, run: { ...run, id: run.id }, pending: { key: `run:${run.id}:call.ended`, type: 'call.ended', at: T0 } });
    expect(calls).toEqual(['enqueueEvent']);
    expect(await webhooks.pendingEvents(10)).toEqual([]);
  });
});
