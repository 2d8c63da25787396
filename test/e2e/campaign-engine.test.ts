/**
 * The campaign engine on real SQLite storage, a controllable clock, a scripted provider and an in-memory
 * JobScheduler: outcomes and counters, retries after their delay, the breaker, the schedule, the concurrency cap,
 * archived workflow / deleted configuration, cancel, and crash recovery by the reconciliation sweep.
 */
import { describe, expect, it, beforeEach, afterEach } from '@jest/globals';
import { SqliteCampaignRepository } from '../../adapters/storage/sqlite/campaign.sqlite.js';
import { openMigratedSqlite, type SqliteDatabase } from '../../adapters/storage/sqlite/database.js';
import { SqliteRunRepository } from '../../adapters/storage/sqlite/run.sqlite.js';
import { SqliteWorkflowRepository } from '../../adapters/storage/sqlite/workflow.sqlite.js';
import { HmacUrlSigner } from '../../adapters/crypto/node-crypto.js';
import { ApplyCallStatus } from '../../core/calls/apply-call-status.use-case.js';
import { CallUrls } from '../../core/calls/call-urls.js';
import { MediaTokens } from '../../core/calls/media-token.js';
import { PlaceOutboundCall } from '../../core/calls/place-outbound-call.use-case.js';
import { CallOutcomeListeners } from '../../core/calls/call-outcome-listener.js';
import { DEFAULT_CIRCUIT_BREAKER, DEFAULT_RETRY_CONFIG, type Campaign, type CircuitBreakerConfig, type RetryConfig } from '../../core/campaigns/campaign.js';
import { CampaignEngine, DISPATCH_JOB, type CampaignEngineOptions } from '../../core/campaigns/campaign-engine.js';
import { ChangeCampaignState } from '../../core/campaigns/campaigns.use-case.js';
import type { ScheduleConfig } from '../../core/campaigns/schedule.js';
import { ProviderApiError } from '../../core/errors.js';
import type { Clock } from '../../core/ports/clock.port.js';
import type { JobData, JobHandler, JobScheduler } from '../../core/ports/job-scheduler.port.js';
import { silentLogger } from '../../core/ports/logger.port.js';
import type { CallOutcome, NormalizedCallEvent, PlaceCallRequest, PlacedCall, TelephonyProvider } from '../../core/ports/telephony-provider.port.js';
import type { TelephonyConfiguration } from '../../core/telephony/telephony-configuration.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import { EnsureWorkflowCanReceiveCalls } from '../../core/workflows/ensure-workflow-can-receive-calls.use-case.js';

class TestClock implements Clock {
  constructor(public t: number) {}
  now() {
    return new Date(this.t);
  }
  advance(ms: number) {
    this.t += ms;
  }
}

/** Remembers jobs; the test runs the due ones by hand at the clock's time. */
class ManualScheduler implements JobScheduler {
  readonly handlers = new Map<string, JobHandler>();
  readonly pending = new Map<string, { name: string; at: Date; data: JobData }>();
  define(name: string, handler: JobHandler) {
    this.handlers.set(name, handler);
  }
  async scheduleUnique(name: string, key: string, at: Date, data: JobData) {
    const k = `${name}|${key}`;
    const cur = this.pending.get(k);
    if (!cur || cur.at > at) this.pending.set(k, { name, at, data });
  }
  async every() {}
  async cancel() {
    return 0;
  }
  async start() {}
  async stop() {}
  nextAt(name = DISPATCH_JOB): Date | null {
    const ats = [...this.pending.values()].filter((j) => j.name === name).map((j) => j.at.getTime());
    return ats.length ? new Date(Math.min(...ats)) : null;
  }
  async runDue(now: Date) {
    for (const [k, j] of [...this.pending]) {
      if (j.at <= now) {
        this.pending.delete(k);
        await this.handlers.get(j.name)!(j.data);
      }
    }
  }
}

const outcomeFor = (to: string): CallOutcome | 'dial_failed' =>
  to.endsWith('00') ? 'dial_failed' : to.endsWith('01') ? 'busy' : to.endsWith('02') ? 'no_answer' : to.endsWith('03') ? 'voicemail' : 'completed';

/** A provider whose calls stay up until the test ends them; numbers ending 00 fail to dial. */
class ScriptedProvider {
  readonly manifest = { id: 'fake', displayName: 'Fake', docsUrl: '', fields: [], mediaTransport: 'none' as const };
  readonly placed: PlaceCallRequest[] = [];
  readonly active = new Map<string, PlaceCallRequest>();
  readonly known = new Map<string, NormalizedCallEvent>();
  maxActive = 0;
  forget = false;
  async placeCall(r: PlaceCallRequest): Promise<PlacedCall> {
    this.placed.push(r);
    if (outcomeFor(r.to) === 'dial_failed') throw new ProviderApiError('fake', 'number unreachable', false, 'provider_call_failed');
    const id = `fake-${r.attemptKey}`;
    this.active.set(id, r);
    this.maxActive = Math.max(this.maxActive, this.active.size);
    return { providerCallId: id, alreadyPlaced: false };
  }
  async getCallStatus(id: string): Promise<NormalizedCallEvent | null> {
    if (this.forget) return null;
    return this.known.get(id) ?? (this.active.has(id) ? { kind: 'status', providerCallId: id, status: 'in_progress' } : null);
  }
  async hangup() {}
}

const SIX = ['+15550000000', '+15550000001', '+15550000002', '+15550000003', '+15550000004', '+15550000005'];

describe('campaign engine', () => {
  let db: SqliteDatabase;
  let clock: TestClock;
  let scheduler: ManualScheduler;
  let provider: ScriptedProvider;
  let campaigns: SqliteCampaignRepository;
  let runs: SqliteRunRepository;
  let workflows: SqliteWorkflowRepository;
  let statuses: ApplyCallStatus;
  let engine: CampaignEngine;
  let states: ChangeCampaignState;
  let org: number;
  let workflowId: number;
  let configuration: TelephonyConfiguration | null;
  let mediaTokens: MediaTokens;

  const options: CampaignEngineOptions = {
    leaseMs: 30_000, reconcileAfterMs: 60_000, maxCallMs: 3_600_000, sweepIntervalMs: 10_000,
    ringTimeoutSeconds: 30, runsDispatch: true,
  };

  beforeEach(async () => {
    db = openMigratedSqlite(':memory:');
    org = db.prepare<[], { id: number }>(`INSERT INTO organizations (name, created_at) VALUES ('A', 0) RETURNING id`).get()!.id;
    clock = new TestClock(Date.parse('2026-03-04T12:00:00Z')); // a Wednesday
    scheduler = new ManualScheduler();
    provider = new ScriptedProvider();
    campaigns = new SqliteCampaignRepository(db);
    runs = new SqliteRunRepository(db);
    workflows = new SqliteWorkflowRepository(db);
    const wf = await workflows.create(org, {
      name: 'Agent', workflowUuid: 'u-1', definition: exampleWorkflowDefinition, templateContextVariables: {}, workflowConfigurations: {}, now: clock.now(),
    });
    workflowId = wf.workflow.id;
    configuration = {
      id: 5, organizationId: org, name: 'Main', provider: 'fake', isDefaultOutbound: true, accountId: 'acc', secretsKeyId: 'k', settings: {}, secrets: {},
      credentialsCheck: null, createdAt: clock.now(), updatedAt: clock.now(),
    };
    const listeners = new CallOutcomeListeners();
    statuses = new ApplyCallStatus(runs, listeners, clock, silentLogger);
    const providers = { forConfiguration: () => provider as unknown as TelephonyProvider };
    const numbers = {
      getDefaultCaller: async () => ({ address: '+1 (555) 999-0000', addressNormalized: '+15559990000', isActive: true }) as never,
      list: async () => [],
    };
    mediaTokens = new MediaTokens(new HmacUrlSigner('campaign-engine-test-secret-0123456789abcdef'), clock, 900);
    const calls = new PlaceOutboundCall(runs, numbers, providers, new CallUrls('http://cp.test', mediaTokens), clock);
    const telephony = {
      configurations: { get: async (_o: number, id: number) => (configuration && configuration.id === id ? configuration : null) },
      calls,
      providers,
      statuses,
    };
    const ensure = new EnsureWorkflowCanReceiveCalls(workflows);
    engine = new CampaignEngine(campaigns, ensure, runs, telephony, scheduler, clock, silentLogger, options);
    listeners.add(engine);
    engine.defineJobs();
    states = new ChangeCampaignState(campaigns, ensure, telephony.configurations, engine, clock);
  });
  afterEach(async () => {
    await engine.stop();
    db.close();
  });

  const create = (numbers: string[], over: { retry?: Partial<RetryConfig>; breaker?: Partial<CircuitBreakerConfig>; maxConcurrency?: number; schedule?: ScheduleConfig } = {}) =>
    campaigns.create(org, {
      name: 'C', workflowId, telephonyConfigurationId: 5, sourceType: 'csv', sourceId: 'uploads/1/x/a.csv',
      retryConfig: { ...DEFAULT_RETRY_CONFIG, ...over.retry }, maxConcurrency: over.maxConcurrency ?? 10, scheduleConfig: over.schedule ?? null,
      circuitBreaker: { ...DEFAULT_CIRCUIT_BREAKER, ...over.breaker },
      contacts: numbers.map((n, i) => ({ row: i + 2, phoneNumber: n, context: { first_name: `P${i}` } })), logs: [], now: clock.now(),
    });
  const start = async (c: Campaign) => {
    await states.execute(org, c.id, 'start');
    await engine.idle();
  };
  /** Ends every call in flight the way its number says, then lets the engine react. */
  const finishAll = async (filter: (r: PlaceCallRequest) => boolean = () => true) => {
    for (const [id, r] of [...provider.active]) {
      if (!filter(r)) continue;
      provider.active.delete(id);
      const outcome = outcomeFor(r.to) as CallOutcome;
      await statuses.execute('fake', { kind: 'status', runId: r.runId, providerCallId: id, status: outcome === 'completed' ? 'completed' : 'failed', outcome, durationSeconds: 3 });
    }
    await engine.idle();
  };
  const get = async (id: number) => (await campaigns.get(org, id))!;
  const events = async (id: number) => (await campaigns.listLogs(org, id, 100)).map((l) => l.event);

  it('asks the carrier for answering-machine detection only for an agent that hangs up on voicemail (docs/voicemail.md)', async () => {
    await start(await create([SIX[0]!]));
    expect(provider.placed.map((p) => p.machineDetection)).toEqual([false]);
    const detecting = await workflows.create(org, {
      name: 'VM', workflowUuid: 'u-2', definition: exampleWorkflowDefinition, templateContextVariables: {},
      workflowConfigurations: { voicemail: { detect: true, action: 'hangup' } }, now: clock.now(),
    });
    workflowId = detecting.workflow.id;
    await start(await create([SIX[0]!]));
    expect(provider.placed.map((p) => p.machineDetection)).toEqual([false, true]);
    // leave_message: the carriers' AMD would hang up on the machine; the voice session's detector decides
    const leaving = await workflows.create(org, {
      name: 'VM2', workflowUuid: 'u-3', definition: exampleWorkflowDefinition, templateContextVariables: {},
      workflowConfigurations: { voicemail: { detect: true, action: 'leave_message', message: 'Call us back' } }, now: clock.now(),
    });
    workflowId = leaving.workflow.id;
    await start(await create([SIX[0]!]));
    expect(provider.placed.map((p) => p.machineDetection)).toEqual([false, true, false]);
    // a verdict without action (Twilio async AMD) for every agent that detects: the voice session acts on it
    expect(provider.placed.map((p) => p.asyncMachineDetection ?? false)).toEqual([false, true, true]);
  });

  it('dials every contact, retries busy and no-answer after their delay, and counts exactly', async () => {
    const c = await create(SIX);
    await start(c);
    expect(provider.placed.map((p) => p.to)).toEqual(SIX);
    expect(provider.placed[1]).toMatchObject({
      attemptKey: expect.stringMatching(/^\d+$/), from: '+15559990000', statusCallbackUrl: `http://cp.test/api/v1/telephony/fake/status/${provider.placed[1]!.runId}`,
      answerUrl: `http://cp.test/api/v1/telephony/fake/answer/${provider.placed[1]!.runId}`,
    });
    // the media URL the provider is given carries a token for exactly this run, valid now
    for (const p of provider.placed) {
      const media = new URL(p.mediaUrl);
      expect(`${media.origin}${media.pathname}`).toBe(`ws://cp.test/api/v1/telephony/fake/media/${p.runId}`);
      expect(mediaTokens.verify('fake', p.runId, media.searchParams.get('token'))).toBe('valid');
      expect(mediaTokens.verify('fake', p.runId + 1, media.searchParams.get('token'))).toBe('invalid');
    }
    const run = (await runs.get(org, provider.placed[1]!.runId))!;
    expect(run).toMatchObject({ mode: 'outbound', campaignId: c.id, calledNumber: '+15550000001', callerNumber: '+15559990000', status: 'queued' });
    expect(run.initialContext).toEqual({
      first_name: 'P1', phone_number: '+15550000001', called_number: '+15550000001', caller_number: '+15559990000', campaign_id: c.id, attempt: 1,
    });
    expect(await events(c.id)).toContain('call_dispatch_failed');

    await finishAll();
    let s = await get(c.id);
    expect(s).toMatchObject({ state: 'running', processedRows: 4, failedRows: 2, inFlight: 0, executedCount: 6, totalQueuedCount: 8 });
    const retryAt = clock.t + 300_000;
    expect(scheduler.nextAt()!.getTime()).toBe(retryAt);

    // nothing fires before the delay
    clock.advance(299_000);
    await scheduler.runDue(clock.now());
    await engine.trigger(org, c.id);
    await engine.idle();
    expect(provider.placed.length).toBe(6);

    clock.advance(1_000);
    await scheduler.runDue(clock.now());
    await engine.idle();
    expect(provider.placed.slice(6).map((p) => [p.to, p.attemptKey !== provider.placed[1]!.attemptKey])).toEqual([
      ['+15550000001', true], ['+15550000002', true],
    ]);
    expect((await runs.get(org, provider.placed[6]!.runId))!.initialContext.attempt).toBe(2);
    await finishAll();
    clock.advance(300_000);
    await scheduler.runDue(clock.now());
    await engine.idle();
    await finishAll();
    s = await get(c.id);
    // 00 failed to dial, 01 busy x3, 02 no answer x3, 03 voicemail (not retried), 04 and 05 answered
    expect(s).toMatchObject({
      state: 'completed', totalRows: 6, processedRows: 6, failedRows: 4, executedCount: 10, totalQueuedCount: 10, inFlight: 0,
    });
    expect(s.completedAt).toEqual(clock.now());
    expect(provider.placed.length).toBe(10);
    const contacts = await campaigns.listContacts(org, c.id);
    expect(contacts.map((x) => [x.finalOutcome, x.attemptsMade])).toEqual([
      ['failed', 1], ['busy', 3], ['no_answer', 3], ['voicemail', 1], ['completed', 1], ['completed', 1],
    ]);
    expect((await runs.listByCampaign(org, c.id, { page: 1, limit: 100 })).totalCount).toBe(10);
    expect(await events(c.id)).toEqual(expect.arrayContaining(['campaign_started', 'call_dispatch_failed', 'campaign_completed']));
  });

  it('keeps in-flight calls at max_concurrency while contacts wait, never above, and fills a freed slot at once', async () => {
    const numbers = Array.from({ length: 25 }, (_, i) => `+1555100${String(i + 10).padStart(4, '0')}`);
    const c = await create(numbers, { maxConcurrency: 4 });
    await start(c);
    const samples: number[] = [];
    while ((await get(c.id)).state === 'running') {
      const s = await get(c.id);
      const waiting = (await campaigns.listContacts(org, c.id, { status: 'pending' })).length;
      samples.push(s.inFlight);
      expect(s.inFlight).toBeLessThanOrEqual(4);
      expect(provider.active.size).toBe(s.inFlight);
      if (waiting > 0) expect(s.inFlight).toBe(4);
      // end one call: its slot is reused before anything else happens (no clock moves, no job runs)
      const first = provider.active.keys().next().value as string;
      await finishAll((r) => `fake-${r.attemptKey}` === first);
    }
    expect(provider.maxActive).toBe(4);
    expect(samples.length).toBe(25);
    expect(await get(c.id)).toMatchObject({ state: 'completed', processedRows: 25, failedRows: 0 });
  });

  it('trips the circuit breaker, pausing with the rate, counts and window logged; resume starts a fresh window', async () => {
    const numbers = ['+15552000000', '+15552000100', '+15552000200', '+15552000300', '+15552000400', '+15552000500', '+15552000604', '+15552000705'];
    const c = await create(numbers, { maxConcurrency: 1, breaker: { enabled: true, failure_threshold: 0.5, window_seconds: 60, min_calls_in_window: 4 } });
    await start(c);
    const s = await get(c.id);
    expect(s.state).toBe('paused');
    expect(s.processedRows).toBe(4);
    const logs = await campaigns.listLogs(org, c.id, 100);
    const tripped = logs.find((l) => l.event === 'circuit_breaker_tripped')!;
    expect(tripped.details).toEqual({ failure_rate: 1, failures: 4, calls: 4, window_seconds: 60, failure_threshold: 0.5, min_calls_in_window: 4 });
    expect(tripped.level).toBe('error');
    expect(provider.placed.length).toBe(4);

    clock.advance(1000);
    await states.execute(org, c.id, 'resume');
    await engine.idle();
    // a fresh window: two more failures do not trip it (fewer than 4 calls in the new window)
    expect(provider.placed.length).toBe(7);
    expect((await get(c.id)).state).toBe('running');
    await finishAll();
    await finishAll();
    // 2 failures in the 4 calls of the new window reach the 0.5 threshold again
    expect(await get(c.id)).toMatchObject({ state: 'paused', processedRows: 8, failedRows: 6 });
    const trips = (await campaigns.listLogs(org, c.id, 100)).filter((l) => l.event === 'circuit_breaker_tripped');
    expect(trips.map((l) => l.details)).toEqual([
      expect.objectContaining({ failures: 4, calls: 4 }), expect.objectContaining({ failure_rate: 0.5, failures: 2, calls: 4 }),
    ]);
  });

  it('holds calls back outside the schedule and dispatches at the next slot opening in the campaign time zone', async () => {
    // Wednesday 12:00 UTC is 07:00 in New York; the slot opens at 09:00 there (13:00 UTC)
    const schedule: ScheduleConfig = { enabled: true, timezone: 'America/New_York', slots: [{ day_of_week: 2, start_time: '09:00', end_time: '17:00' }] };
    const c = await create(SIX.slice(4), { schedule });
    await start(c);
    expect(provider.placed.length).toBe(0);
    expect((await get(c.id)).state).toBe('running');
    expect(scheduler.nextAt()!.toISOString()).toBe('2026-03-04T14:00:00.000Z');
    clock.t = Date.parse('2026-03-04T13:59:59Z');
    await scheduler.runDue(clock.now());
    await engine.trigger(org, c.id);
    expect(provider.placed.length).toBe(0);
    clock.t = Date.parse('2026-03-04T14:00:00Z');
    await scheduler.runDue(clock.now());
    await engine.idle();
    expect(provider.placed.length).toBe(2);
  });

  it('pauses with workflow_archived when the workflow is archived, fails when the configuration is gone', async () => {
    const c = await create(SIX.slice(4), { maxConcurrency: 1 });
    await start(c);
    await workflows.update(org, workflowId, { status: 'archived', now: clock.now() });
    await finishAll();
    expect((await get(c.id)).state).toBe('paused');
    expect(await events(c.id)).toContain('workflow_archived');
    expect(provider.placed.length).toBe(1);
    await expect(states.execute(org, c.id, 'resume')).rejects.toMatchObject({ code: 'workflow_archived' });

    await workflows.update(org, workflowId, { status: 'active', now: clock.now() });
    await states.execute(org, c.id, 'resume');
    await engine.idle();
    configuration = null;
    await finishAll();
    const s = await get(c.id);
    expect(s.state).toBe('failed');
    expect(s.completedAt).not.toBeNull();
    const failed = (await campaigns.listLogs(org, c.id, 100)).find((l) => l.event === 'campaign_failed')!;
    expect(failed.details).toMatchObject({ reason: 'telephony_configuration_not_found' });
  });

  it('cancel drops queued contacts while calls in flight finish, and never completes', async () => {
    const numbers = Array.from({ length: 6 }, (_, i) => `+1555300${String(i + 10).padStart(4, '0')}`);
    const c = await create(numbers, { maxConcurrency: 2 });
    await start(c);
    await states.execute(org, c.id, 'cancel');
    expect((await campaigns.listContacts(org, c.id, { status: 'dropped' })).length).toBe(4);
    await finishAll();
    const s = await get(c.id);
    expect(s).toMatchObject({ state: 'cancelled', processedRows: 2, inFlight: 0, executedCount: 2 });
    expect(provider.placed.length).toBe(2);
    await expect(states.execute(org, c.id, 'resume')).rejects.toMatchObject({ code: 'invalid_state_transition' });
  });

  it('pause stops new calls, in-flight calls finish, start continues', async () => {
    const numbers = Array.from({ length: 4 }, (_, i) => `+1555400${String(i + 10).padStart(4, '0')}`);
    const c = await create(numbers, { maxConcurrency: 2 });
    await start(c);
    await states.execute(org, c.id, 'pause');
    await finishAll();
    expect(provider.placed.length).toBe(2);
    expect(await get(c.id)).toMatchObject({ state: 'paused', processedRows: 2, inFlight: 0 });
    await states.execute(org, c.id, 'start');
    await engine.idle();
    await finishAll();
    expect(await get(c.id)).toMatchObject({ state: 'completed', processedRows: 4 });
  });

  describe('crash recovery by the sweep', () => {
    it('hands an expired claim back to the queue and dials it with the same attempt id', async () => {
      const c = await create(SIX.slice(4, 5), { maxConcurrency: 1 });
      await campaigns.transition(org, c.id, { from: ['draft'], to: 'running', now: clock.now() });
      // a worker claimed the contact and died before calling the provider
      const claim = await campaigns.claimNextContact(org, c.id, { now: clock.now(), leaseMs: options.leaseMs });
      if (claim.kind !== 'claimed') throw new Error('claim');
      await engine.sweep();
      await engine.idle();
      expect(provider.placed.length).toBe(0);
      clock.advance(options.leaseMs);
      await engine.sweep();
      await engine.idle();
      expect(provider.placed.map((p) => p.attemptKey)).toEqual([String(claim.attempt.id)]);
      await finishAll();
      expect(await get(c.id)).toMatchObject({ state: 'completed', executedCount: 1 });
    });

    it('reconciles a placed call whose final status was lost, without dialing again', async () => {
      const c = await create(SIX.slice(4, 5));
      await start(c);
      const [call] = [...provider.active.entries()][0]!;
      provider.active.delete(call);
      provider.known.set(call, { kind: 'status', providerCallId: call, status: 'completed', outcome: 'completed', durationSeconds: 7 });
      clock.advance(options.reconcileAfterMs);
      await engine.sweep();
      await engine.idle();
      expect(provider.placed.length).toBe(1);
      expect(await get(c.id)).toMatchObject({ state: 'completed', processedRows: 1, failedRows: 0 });
      expect((await runs.get(org, provider.placed[0]!.runId))!).toMatchObject({ status: 'completed', durationSeconds: 7 });
    });

    it('keeps a live call, and times out as failed a call the provider does not know', async () => {
      const c = await create(SIX.slice(4, 5));
      await start(c);
      clock.advance(options.reconcileAfterMs);
      await engine.sweep();
      expect((await get(c.id)).state).toBe('running');
      provider.forget = true;
      clock.advance(options.reconcileAfterMs);
      await engine.sweep();
      await engine.idle();
      expect(provider.placed.length).toBe(1);
      expect(await get(c.id)).toMatchObject({ state: 'completed', processedRows: 1, failedRows: 1 });
      expect((await runs.get(org, provider.placed[0]!.runId))!.status).toBe('failed');
    });

    it('records a run that ended while its outcome never reached the campaign', async () => {
      const c = await create(SIX.slice(4, 5));
      await start(c);
      const [id, r] = [...provider.active.entries()][0]!;
      provider.active.delete(id);
      await runs.applyStatus(org, r.runId, { status: 'completed', disposition: 'completed', at: clock.now() });
      clock.advance(options.reconcileAfterMs);
      await engine.sweep();
      await engine.idle();
      expect(await get(c.id)).toMatchObject({ state: 'completed', processedRows: 1, failedRows: 0 });
      expect(provider.placed.length).toBe(1);
    });

    it('ends as failed an attempt whose dial was interrupted (run attached, no provider answer), never redialing', async () => {
      const c = await create(SIX.slice(4, 5));
      await campaigns.transition(org, c.id, { from: ['draft'], to: 'running', now: clock.now() });
      const claim = await campaigns.claimNextContact(org, c.id, { now: clock.now(), leaseMs: options.leaseMs });
      if (claim.kind !== 'claimed') throw new Error('claim');
      await campaigns.markDialing(org, claim.attempt.id, { now: clock.now(), checkAt: new Date(clock.t + options.leaseMs) });
      const run = await runs.create(org, {
        workflowId, definitionId: (await workflows.get(org, workflowId))!.currentDefinitionId, name: 'x', mode: 'outbound', campaignId: c.id,
        attemptId: claim.attempt.id, provider: 'fake', telephonyConfigurationId: 5, initialContext: {}, now: clock.now(),
      });
      await campaigns.attachRun(org, claim.attempt.id, { runId: run.id, now: clock.now() });
      clock.advance(options.leaseMs);
      await engine.sweep();
      await engine.idle();
      expect(provider.placed.length).toBe(0);
      expect(await get(c.id)).toMatchObject({ state: 'completed', processedRows: 1, failedRows: 1, executedCount: 1 });
      expect((await runs.get(org, run.id))!.status).toBe('failed');
    });
  });
});
