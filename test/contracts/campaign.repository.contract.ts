import { describe, expect, it, beforeEach, afterEach } from '@jest/globals';
import { DEFAULT_CIRCUIT_BREAKER, DEFAULT_RETRY_CONFIG, type CampaignLogEntry } from '../../core/campaigns/campaign.js';
import type { CampaignRepository, NewCampaign } from '../../core/ports/campaign.repository.port.js';

export interface CampaignRepositoryHarness {
  repo: CampaignRepository;
  /** Two organizations that exist in the store. */
  organizations: [number, number];
  cleanup(): Promise<void>;
}

const t0 = new Date('2026-03-02T10:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const log = (event: string, ts = t0): CampaignLogEntry => ({ ts, level: 'info', event, message: event, details: { n: 1 } });

/**
 * The CampaignRepository contract every storage adapter runs (SQLite always; MongoDB where reachable): campaigns,
 * state compare-and-set, contacts, the atomic claim under the concurrency cap, leases and their release,
 * outcomes and counters, the breaker window, completion. `make` returns a fresh, empty store for each test.
 */
export function runCampaignRepositoryContract(label: string, make: () => Promise<CampaignRepositoryHarness>): void {
  describe(`CampaignRepository contract: ${label}`, () => {
    let h: CampaignRepositoryHarness;
    let org: number;
    let other: number;
    beforeEach(async () => {
      h = await make();
      [org, other] = h.organizations;
    });
    afterEach(async () => {
      await h.cleanup();
    });

    const input = (over: Partial<NewCampaign> = {}, contacts = 3): NewCampaign => ({
      name: 'Spring promo', workflowId: 7, telephonyConfigurationId: 9, sourceType: 'csv', sourceId: 'uploads/1/x/a.csv',
      retryConfig: { ...DEFAULT_RETRY_CONFIG }, maxConcurrency: 2, scheduleConfig: null, circuitBreaker: { ...DEFAULT_CIRCUIT_BREAKER },
      contacts: Array.from({ length: contacts }, (_, i) => ({ row: i + 2, phoneNumber: `+1555000${1000 + i}`, context: { name: `n${i}` } })),
      logs: [log('campaign_created')], now: t0, ...over,
    });
    const running = async (over: Partial<NewCampaign> = {}, contacts = 3) => {
      const c = await h.repo.create(org, input(over, contacts));
      await h.repo.transition(org, c.id, { from: ['draft'], to: 'running', now: t0 });
      return c;
    };
    const claim = (id: number, now = t0, leaseMs = 60_000) => h.repo.claimNextContact(org, id, { now, leaseMs });
    const dial = async (attemptId: number, runId: number, now = t0, checkAt = at(10)) => {
      await h.repo.markDialing(org, attemptId, { now, checkAt });
      return h.repo.attachRun(org, attemptId, { runId, now });
    };

    it('creates a draft with its contacts and logs, and reads it back scoped by organization', async () => {
      const c = await h.repo.create(org, input());
      expect(c).toMatchObject({
        organizationId: org, name: 'Spring promo', workflowId: 7, telephonyConfigurationId: 9, state: 'draft', sourceType: 'csv',
        totalRows: 3, totalQueuedCount: 3, processedRows: 0, failedRows: 0, executedCount: 0, inFlight: 0, maxConcurrency: 2,
        retryConfig: DEFAULT_RETRY_CONFIG, circuitBreaker: DEFAULT_CIRCUIT_BREAKER, scheduleConfig: null, createdAt: t0, startedAt: null,
        completedAt: null, parentCampaignId: null, redialedCampaignId: null,
      });
      expect(await h.repo.get(org, c.id)).toEqual(c);
      expect(await h.repo.get(other, c.id)).toBeNull();
      const contacts = await h.repo.listContacts(org, c.id);
      expect(contacts.map((x) => [x.row, x.phoneNumber, x.status, x.attemptsMade])).toEqual([
        [2, '+15550001000', 'pending', 0], [3, '+15550001001', 'pending', 0], [4, '+15550001002', 'pending', 0],
      ]);
      expect(contacts[0]!.context).toEqual({ name: 'n0' });
      expect(await h.repo.listContacts(other, c.id)).toEqual([]);
      expect(await h.repo.listLogs(org, c.id, 100)).toEqual([log('campaign_created')]);
      expect(await h.repo.listLogs(other, c.id, 100)).toEqual([]);
    });

    it('keeps a schedule config and lists newest first with a state filter', async () => {
      const schedule = { enabled: true, timezone: 'Europe/Paris', slots: [{ day_of_week: 0, start_time: '09:00', end_time: '17:00' }] };
      const a = await h.repo.create(org, input({ scheduleConfig: schedule }));
      const b = await h.repo.create(org, input({ now: at(1000) }));
      await h.repo.create(other, input());
      expect((await h.repo.get(org, a.id))!.scheduleConfig).toEqual(schedule);
      expect((await h.repo.list(org)).map((x) => x.id)).toEqual([b.id, a.id]);
      await h.repo.transition(org, a.id, { from: ['draft'], to: 'running', now: t0 });
      expect((await h.repo.list(org, { state: 'running' })).map((x) => x.id)).toEqual([a.id]);
      expect((await h.repo.list(org, { state: 'draft' })).map((x) => x.id)).toEqual([b.id]);
    });

    it('updates only the sent fields and only in the allowed states', async () => {
      const c = await h.repo.create(org, input());
      const r = await h.repo.update(org, c.id, { name: 'Renamed', maxConcurrency: 9, scheduleConfig: null, now: at(5) }, ['draft', 'paused']);
      expect(r.updated).toBe(true);
      expect(r.campaign).toMatchObject({ name: 'Renamed', maxConcurrency: 9, retryConfig: DEFAULT_RETRY_CONFIG, updatedAt: at(5) });
      const retry = { ...DEFAULT_RETRY_CONFIG, max_retries: 5 };
      const breaker = { ...DEFAULT_CIRCUIT_BREAKER, enabled: true };
      expect((await h.repo.update(org, c.id, { retryConfig: retry, circuitBreaker: breaker, now: at(6) }, ['draft'])).campaign)
        .toMatchObject({ retryConfig: retry, circuitBreaker: breaker, name: 'Renamed' });
      await h.repo.transition(org, c.id, { from: ['draft'], to: 'running', now: at(7) });
      const refused = await h.repo.update(org, c.id, { name: 'No', now: at(8) }, ['draft', 'paused']);
      expect(refused.updated).toBe(false);
      expect(refused.campaign!.name).toBe('Renamed');
      expect(await h.repo.update(other, c.id, { name: 'x', now: at(8) }, ['draft', 'running'])).toEqual({ campaign: null, updated: false });
    });

    it('moves state only from the allowed states, stamping times and appending the log', async () => {
      const c = await h.repo.create(org, input());
      const started = await h.repo.transition(org, c.id, { from: ['draft', 'paused'], to: 'running', now: at(10), log: log('campaign_started', at(10)) });
      expect(started.changed).toBe(true);
      expect(started.campaign).toMatchObject({ state: 'running', startedAt: at(10), breakerResetAt: at(10), completedAt: null });
      const again = await h.repo.transition(org, c.id, { from: ['draft', 'paused'], to: 'running', now: at(11) });
      expect(again.changed).toBe(false);
      expect(again.campaign!.state).toBe('running');
      await h.repo.transition(org, c.id, { from: ['running'], to: 'paused', now: at(12) });
      const resumed = await h.repo.transition(org, c.id, { from: ['paused'], to: 'running', now: at(13) });
      expect(resumed.campaign).toMatchObject({ startedAt: at(10), breakerResetAt: at(13) });
      const failed = await h.repo.transition(org, c.id, { from: ['running'], to: 'failed', now: at(14) });
      expect(failed.campaign).toMatchObject({ state: 'failed', completedAt: at(14) });
      expect((await h.repo.listLogs(org, c.id, 100)).map((l) => l.event)).toEqual(['campaign_created', 'campaign_started']);
      expect(await h.repo.transition(other, c.id, { from: ['failed'], to: 'running', now: at(15) })).toEqual({ campaign: null, changed: false });
    });

    it('cancel drops pending contacts and keeps active ones', async () => {
      const c = await running();
      const first = await claim(c.id);
      expect(first.kind).toBe('claimed');
      const { campaign } = await h.repo.transition(org, c.id, { from: ['draft', 'running', 'paused'], to: 'cancelled', now: at(1) });
      expect(campaign).toMatchObject({ state: 'cancelled', completedAt: at(1), inFlight: 1 });
      expect((await h.repo.listContacts(org, c.id)).map((x) => x.status)).toEqual(['active', 'dropped', 'dropped']);
      expect(await claim(c.id)).toEqual({ kind: 'not_running' });
    });

    it('returns the latest logs, newest last', async () => {
      const c = await h.repo.create(org, input({ logs: [] }));
      for (let i = 0; i < 5; i++) await h.repo.appendLog(org, c.id, log(`e${i}`, at(i)));
      await h.repo.appendLog(other, c.id, log('foreign'));
      expect((await h.repo.listLogs(org, c.id, 3)).map((l) => l.event)).toEqual(['e2', 'e3', 'e4']);
      expect((await h.repo.listLogs(org, c.id, 3))[2]).toEqual(log('e4', at(4)));
    });

    it('counts draft, running and paused campaigns using a configuration', async () => {
      const a = await h.repo.create(org, input());
      const b = await h.repo.create(org, input());
      await h.repo.create(org, input({ telephonyConfigurationId: 10 }));
      await h.repo.create(other, input());
      expect(await h.repo.countActiveUsingTelephonyConfiguration(org, 9)).toBe(2);
      await h.repo.transition(org, a.id, { from: ['draft'], to: 'running', now: t0 });
      await h.repo.transition(org, a.id, { from: ['running'], to: 'paused', now: t0 });
      expect(await h.repo.countActiveUsingTelephonyConfiguration(org, 9)).toBe(2);
      await h.repo.transition(org, b.id, { from: ['draft'], to: 'cancelled', now: t0 });
      expect(await h.repo.countActiveUsingTelephonyConfiguration(org, 9)).toBe(1);
      expect(await h.repo.countActiveUsingTelephonyConfiguration(org, 11)).toBe(0);
    });

    it('lists running campaigns across organizations', async () => {
      const a = await running();
      await h.repo.create(org, input());
      const c = await h.repo.create(other, input());
      await h.repo.transition(other, c.id, { from: ['draft'], to: 'running', now: t0 });
      expect(await h.repo.listRunning()).toEqual(expect.arrayContaining([{ organizationId: org, campaignId: a.id }, { organizationId: other, campaignId: c.id }]));
      expect((await h.repo.listRunning()).length).toBe(2);
    });

    it('claims due contacts in order only while running and below the cap', async () => {
      const draft = await h.repo.create(org, input());
      expect(await claim(draft.id)).toEqual({ kind: 'not_running' });
      expect(await h.repo.claimNextContact(other, draft.id, { now: t0, leaseMs: 1 })).toEqual({ kind: 'not_running' });
      const c = await running();
      const a = await claim(c.id);
      const b = await claim(c.id);
      if (a.kind !== 'claimed' || b.kind !== 'claimed') throw new Error('expected claims');
      expect(a.contact).toMatchObject({ row: 2, status: 'active', attemptsMade: 1, currentAttemptId: a.attempt.id });
      expect(a.attempt).toMatchObject({ contactId: a.contact.id, attemptNumber: 1, status: 'claimed', runId: null, claimedAt: t0, checkAt: at(60_000) });
      expect(b.contact.row).toBe(3);
      expect(b.campaign.inFlight).toBe(2);
      expect(await claim(c.id)).toEqual({ kind: 'at_capacity' });
      expect((await h.repo.get(org, c.id))!.inFlight).toBe(2);
      await h.repo.update(org, c.id, { maxConcurrency: 5, now: t0 }, ['running']);
      const d = await claim(c.id);
      expect(d.kind).toBe('claimed');
      expect(await claim(c.id)).toEqual({ kind: 'none_due', nextDueAt: null });
      expect((await h.repo.get(org, c.id))!.inFlight).toBe(3);
    });

    it('never exceeds the cap nor claims a contact twice under concurrent claims', async () => {
      const c = await running({ maxConcurrency: 4 }, 20);
      const results = await Promise.all(Array.from({ length: 12 }, () => claim(c.id)));
      const claimed = results.filter((r) => r.kind === 'claimed');
      expect(claimed.length).toBe(4);
      expect(new Set(claimed.map((r) => (r.kind === 'claimed' ? r.contact.id : 0))).size).toBe(4);
      expect(results.filter((r) => r.kind === 'at_capacity').length).toBe(8);
      expect((await h.repo.get(org, c.id))!.inFlight).toBe(4);
    });

    it('marks dialing only while running, counts the call when the run is attached, then placed', async () => {
      const c = await running();
      const r = await claim(c.id);
      if (r.kind !== 'claimed') throw new Error('claim');
      const dialing = await h.repo.markDialing(org, r.attempt.id, { now: at(1), checkAt: at(100) });
      expect(dialing).toMatchObject({ status: 'dialing', runId: null, checkAt: at(100) });
      expect((await h.repo.get(org, c.id))!.executedCount).toBe(0);
      expect(await h.repo.markDialing(org, r.attempt.id, { now: at(1), checkAt: at(100) })).toBeNull();
      expect(await h.repo.attachRun(org, r.attempt.id, { runId: 77, now: at(1) })).toMatchObject({ status: 'dialing', runId: 77 });
      expect(await h.repo.attachRun(org, r.attempt.id, { runId: 78, now: at(1) })).toBeNull();
      expect(await h.repo.attachRun(other, r.attempt.id, { runId: 78, now: at(1) })).toBeNull();
      expect((await h.repo.get(org, c.id))!.executedCount).toBe(1);
      const placed = await h.repo.markPlaced(org, r.attempt.id, { providerCallId: 'call-1', now: at(2), checkAt: at(500) });
      expect(placed).toMatchObject({ status: 'placed', runId: 77, providerCallId: 'call-1', placedAt: at(2), checkAt: at(500) });
      expect(await h.repo.markPlaced(org, r.attempt.id, { providerCallId: 'call-2', now: at(2), checkAt: at(500) })).toBeNull();
      expect(await h.repo.getAttempt(org, r.attempt.id)).toEqual(placed);
      expect(await h.repo.getAttempt(other, r.attempt.id)).toBeNull();

      const second = await claim(c.id);
      if (second.kind !== 'claimed') throw new Error('claim');
      await h.repo.transition(org, c.id, { from: ['running'], to: 'paused', now: at(3) });
      expect(await h.repo.markDialing(org, second.attempt.id, { now: at(3), checkAt: at(100) })).toBeNull();
    });

    it('releases an attempt whose provider was never called and reuses it on the next claim', async () => {
      const c = await running({ maxConcurrency: 1 });
      const r = await claim(c.id);
      if (r.kind !== 'claimed') throw new Error('claim');
      expect(await h.repo.releaseAttempt(org, r.attempt.id, at(5))).toBe(true);
      expect(await h.repo.releaseAttempt(org, r.attempt.id, at(5))).toBe(false);
      expect((await h.repo.get(org, c.id))!.inFlight).toBe(0);
      const again = await claim(c.id, at(6));
      if (again.kind !== 'claimed') throw new Error('claim');
      expect(again.attempt).toMatchObject({ id: r.attempt.id, attemptNumber: 1, claimedAt: at(6) });
      expect(again.contact.id).toBe(r.contact.id);
      expect((await h.repo.listAttempts(org, c.id)).length).toBe(1);
      await h.repo.markDialing(org, again.attempt.id, { now: at(7), checkAt: at(8) });
      expect(await h.repo.releaseAttempt(org, again.attempt.id, at(9))).toBe(true);
      const third = await claim(c.id, at(10));
      if (third.kind !== 'claimed') throw new Error('claim');
      expect(third.attempt).toMatchObject({ id: r.attempt.id, status: 'claimed', attemptNumber: 1 });
      await dial(third.attempt.id, 5);
      expect(await h.repo.releaseAttempt(org, third.attempt.id, at(11))).toBe(false);
      expect((await h.repo.get(org, c.id))!.inFlight).toBe(1);
    });

    it('drops a released contact of a cancelled campaign', async () => {
      const c = await running();
      const r = await claim(c.id);
      if (r.kind !== 'claimed') throw new Error('claim');
      await h.repo.transition(org, c.id, { from: ['running'], to: 'cancelled', now: at(1) });
      expect(await h.repo.releaseAttempt(org, r.attempt.id, at(2))).toBe(true);
      expect((await h.repo.listContacts(org, c.id, { status: 'dropped' })).length).toBe(3);
      expect((await h.repo.get(org, c.id))!.inFlight).toBe(0);
    });

    it('records outcomes: final, failed, retry, idempotent, with counters', async () => {
      const c = await running({ maxConcurrency: 3 });
      const claims = [await claim(c.id), await claim(c.id), await claim(c.id)];
      const ids = claims.map((r) => (r.kind === 'claimed' ? r.attempt.id : 0));
      for (const id of ids) await dial(id, id);

      const done = await h.repo.recordOutcome(org, ids[0]!, { outcome: 'completed', now: at(1), retryAt: null });
      expect(done).toMatchObject({ recorded: true, attempt: { status: 'ended', outcome: 'completed', endedAt: at(1) },
        contact: { status: 'done', finalOutcome: 'completed', lastOutcome: 'completed', currentAttemptId: null } });
      expect(done!.campaign).toMatchObject({ processedRows: 1, failedRows: 0, inFlight: 2 });

      const replay = await h.repo.recordOutcome(org, ids[0]!, { outcome: 'failed', now: at(2), retryAt: null });
      expect(replay!.recorded).toBe(false);
      expect(replay!.campaign).toMatchObject({ processedRows: 1, failedRows: 0, inFlight: 2 });

      const failed = await h.repo.recordOutcome(org, ids[1]!, { outcome: 'failed', now: at(2), retryAt: null });
      expect(failed!.campaign).toMatchObject({ processedRows: 2, failedRows: 1, inFlight: 1 });

      const busy = await h.repo.recordOutcome(org, ids[2]!, { outcome: 'busy', now: at(3), retryAt: at(300_000) });
      expect(busy!.contact).toMatchObject({ status: 'pending', lastOutcome: 'busy', finalOutcome: null, nextAttemptAt: at(300_000), attemptsMade: 1 });
      expect(busy!.campaign).toMatchObject({ processedRows: 2, failedRows: 1, inFlight: 0, totalQueuedCount: 4 });
      expect(await claim(c.id, at(4))).toEqual({ kind: 'none_due', nextDueAt: at(300_000) });
      const retry = await claim(c.id, at(300_000));
      if (retry.kind !== 'claimed') throw new Error('retry claim');
      expect(retry.attempt).toMatchObject({ attemptNumber: 2, contactId: busy!.contact.id });
      expect(retry.attempt.id).not.toBe(ids[2]);
      expect(await h.repo.recordOutcome(other, retry.attempt.id, { outcome: 'completed', now: at(1), retryAt: null })).toBeNull();
    });

    it('drops instead of retrying once the campaign is cancelled', async () => {
      const c = await running();
      const r = await claim(c.id);
      if (r.kind !== 'claimed') throw new Error('claim');
      await dial(r.attempt.id, 1, t0, at(10));
      await h.repo.transition(org, c.id, { from: ['running'], to: 'cancelled', now: at(1) });
      const rec = await h.repo.recordOutcome(org, r.attempt.id, { outcome: 'no_answer', now: at(2), retryAt: at(1000) });
      expect(rec!.contact.status).toBe('dropped');
      expect(rec!.campaign).toMatchObject({ inFlight: 0, totalQueuedCount: 3, processedRows: 0 });
    });

    it('finds open attempts due for a check and postpones them', async () => {
      const c = await running({ maxConcurrency: 3 });
      const a = await claim(c.id, t0, 1000);
      const b = await claim(c.id, t0, 5000);
      if (a.kind !== 'claimed' || b.kind !== 'claimed') throw new Error('claim');
      expect(await h.repo.attemptsDueForCheck(at(999), 10)).toEqual([]);
      const due = await h.repo.attemptsDueForCheck(at(1000), 10);
      expect(due.map((d) => d.attempt.id)).toEqual([a.attempt.id]);
      expect(due[0]!.contact.id).toBe(a.contact.id);
      await h.repo.postponeCheck(org, a.attempt.id, at(9000));
      expect((await h.repo.attemptsDueForCheck(at(6000), 10)).map((d) => d.attempt.id)).toEqual([b.attempt.id]);
      expect((await h.repo.attemptsDueForCheck(at(9000), 1)).map((d) => d.attempt.id)).toEqual([b.attempt.id]);
      await dial(b.attempt.id, 1, t0, at(1));
      await h.repo.recordOutcome(org, b.attempt.id, { outcome: 'completed', now: at(2), retryAt: null });
      expect((await h.repo.attemptsDueForCheck(at(9000), 10)).map((d) => d.attempt.id)).toEqual([a.attempt.id]);
    });

    it('computes the breaker window from attempts ended since a time', async () => {
      const c = await running({ maxConcurrency: 3 });
      const outcomes = ['failed', 'busy', 'failed'] as const;
      for (let i = 0; i < 3; i++) {
        const r = await claim(c.id);
        if (r.kind !== 'claimed') throw new Error('claim');
        await dial(r.attempt.id, i + 1, t0, at(10));
        await h.repo.recordOutcome(org, r.attempt.id, { outcome: outcomes[i]!, now: at(i * 1000), retryAt: null });
      }
      expect(await h.repo.breakerWindow(org, c.id, t0)).toEqual({ calls: 3, failures: 2 });
      expect(await h.repo.breakerWindow(org, c.id, at(1000))).toEqual({ calls: 2, failures: 1 });
      expect(await h.repo.breakerWindow(org, c.id, at(5000))).toEqual({ calls: 0, failures: 0 });
      expect(await h.repo.breakerWindow(other, c.id, t0)).toEqual({ calls: 0, failures: 0 });
    });

    it('completes only when nothing is pending, active or in flight', async () => {
      const c = await running({ maxConcurrency: 1 }, 1);
      expect(await h.repo.completeIfDone(org, c.id, at(1), log('campaign_completed'))).toBeNull();
      const r = await claim(c.id);
      if (r.kind !== 'claimed') throw new Error('claim');
      expect(await h.repo.completeIfDone(org, c.id, at(1), log('campaign_completed'))).toBeNull();
      await dial(r.attempt.id, 1, t0, at(10));
      await h.repo.recordOutcome(org, r.attempt.id, { outcome: 'completed', now: at(2), retryAt: null });
      expect(await h.repo.completeIfDone(other, c.id, at(3), log('campaign_completed'))).toBeNull();
      const done = await h.repo.completeIfDone(org, c.id, at(3), log('campaign_completed', at(3)));
      expect(done).toMatchObject({ state: 'completed', completedAt: at(3), processedRows: 1 });
      expect(await h.repo.completeIfDone(org, c.id, at(4), log('campaign_completed'))).toBeNull();
      expect((await h.repo.listLogs(org, c.id, 100)).map((l) => l.event)).toEqual(['campaign_created', 'campaign_completed']);
    });
  });
}
