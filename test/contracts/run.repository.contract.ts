import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ConflictError } from '../../core/errors.js';
import type { NewRun, RunRepository } from '../../core/ports/run.repository.port.js';
import type { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { createExampleWorkflow } from './example-workflow.js';

export interface RunRepositoryHarness {
  repo: RunRepository;
  /** The same store's workflows: runs belong to a workflow and its definition. */
  workflows: WorkflowRepository;
  newOrganization(name: string): Promise<number>;
  cleanup(): Promise<void>;
}

/**
 * The RunRepository contract every storage adapter runs (SQLite always; MongoDB where reachable): every method,
 * tenant isolation, pagination order, and `applyStatus` ordering, idempotency, duplicates and stale events.
 */
export function runRunRepositoryContract(label: string, make: () => Promise<RunRepositoryHarness>): void {
  describe(`RunRepository contract: ${label}`, () => {
    let h: RunRepositoryHarness;
    let orgA: number;
    let orgB: number;
    let wfA: { id: number; definitionId: number };
    let wfA2: { id: number; definitionId: number };
    let wfB: { id: number; definitionId: number };
    const t0 = new Date('2026-03-01T10:00:00.000Z');
    const at = (s: number) => new Date(t0.getTime() + s * 1000);
    const workflow = (org: number) => createExampleWorkflow(h.workflows, org, t0);

    beforeEach(async () => {
      h = await make();
      orgA = await h.newOrganization('Org A');
      orgB = await h.newOrganization('Org B');
      wfA = await workflow(orgA);
      wfA2 = await workflow(orgA);
      wfB = await workflow(orgB);
    });
    afterEach(async () => {
      await h.cleanup();
    });

    const newRun = (wf: { id: number; definitionId: number }, extra: Partial<NewRun> = {}): NewRun => ({
      workflowId: wf.id, definitionId: wf.definitionId, name: 'call', mode: 'outbound', initialContext: { first_name: 'Ada' }, now: t0, ...extra,
    });

    it('creates a queued run with every field and reads it back', async () => {
      const run = await h.repo.create(orgA, newRun(wfA, {
        name: 'Call to +15550001111', campaignId: 7, attemptId: 9, telephonyConfigurationId: 3, provider: 'twilio',
        providerCallId: 'CA1', callerNumber: '+15550000000', calledNumber: '+15550001111',
      }));
      expect(run).toEqual({
        id: expect.any(Number), organizationId: orgA, workflowId: wfA.id, definitionId: wfA.definitionId, name: 'Call to +15550001111',
        mode: 'outbound', status: 'queued', disposition: null, campaignId: 7, attemptId: 9, telephonyConfigurationId: 3,
        provider: 'twilio', providerCallId: 'CA1', callerNumber: '+15550000000', calledNumber: '+15550001111',
        initialContext: { first_name: 'Ada' }, gatheredContext: {}, logs: [], annotations: {},
        costInfo: { call_duration_seconds: 0, service_token_usage: 0, charge_usd: 0 }, durationSeconds: null,
        transcriptKey: null, recordingKey: null, createdAt: t0, startedAt: null, endedAt: null, updatedAt: t0,
      });
      expect(await h.repo.get(orgA, run.id)).toEqual(run);
      expect(await h.repo.findForProviderEvent(run.id)).toEqual(run);
      expect(await h.repo.findByProviderCallId('twilio', 'CA1')).toEqual(run);
    });

    it('defaults optional fields to null and returns null for absent runs', async () => {
      const run = await h.repo.create(orgA, newRun(wfA, { mode: 'inbound' }));
      expect(run).toMatchObject({ mode: 'inbound', campaignId: null, attemptId: null, provider: null, providerCallId: null, callerNumber: null });
      expect(await h.repo.get(orgA, run.id + 1000)).toBeNull();
      expect(await h.repo.findForProviderEvent(run.id + 1000)).toBeNull();
      expect(await h.repo.findByProviderCallId('twilio', 'nope')).toBeNull();
      expect(await h.repo.applyStatus(orgA, run.id + 1000, { status: 'ringing', at: t0 })).toEqual({ applied: false, run: null });
      expect(await h.repo.attachArtifacts(orgA, run.id + 1000, { transcriptKey: 'k', now: t0 })).toBeNull();
    });

    it('keeps provider call ids unique per provider, and lets several runs have none', async () => {
      await h.repo.create(orgA, newRun(wfA, { provider: 'twilio', providerCallId: 'CA1' }));
      await expect(h.repo.create(orgB, newRun(wfB, { provider: 'twilio', providerCallId: 'CA1' }))).rejects.toBeInstanceOf(ConflictError);
      const other = await h.repo.create(orgA, newRun(wfA, { provider: 'ari', providerCallId: 'CA1' }));
      expect((await h.repo.findByProviderCallId('ari', 'CA1'))!.id).toBe(other.id);
      await h.repo.create(orgA, newRun(wfA, { provider: 'twilio' }));
      await h.repo.create(orgA, newRun(wfA, { provider: 'twilio' }));
      const late = await h.repo.create(orgA, newRun(wfA, { provider: 'twilio' }));
      await expect(h.repo.applyStatus(orgA, late.id, { status: 'ringing', providerCallId: 'CA1', at: at(1) }))
        .rejects.toMatchObject({ code: 'provider_call_id_taken' });
      expect((await h.repo.get(orgA, late.id))!.status).toBe('queued');
    });

    it('pages a workflow\'s runs newest first (created_at desc, id desc) with the total', async () => {
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await h.repo.create(orgA, newRun(wfA, { now: at(i < 3 ? i : 3) }))).id);
      await h.repo.create(orgA, newRun(wfA2));
      await h.repo.create(orgB, newRun(wfB));
      const expected = [ids[4], ids[3], ids[2], ids[1], ids[0]];
      const p1 = await h.repo.listByWorkflow(orgA, wfA.id, { page: 1, limit: 2 });
      const p3 = await h.repo.listByWorkflow(orgA, wfA.id, { page: 3, limit: 2 });
      expect(p1.totalCount).toBe(5);
      expect(p1.runs.map((r) => r.id)).toEqual(expected.slice(0, 2));
      expect(p3.runs.map((r) => r.id)).toEqual(expected.slice(4));
      expect((await h.repo.listByWorkflow(orgA, wfA.id, { page: 9, limit: 2 })).runs).toEqual([]);
      expect(await h.repo.countByWorkflow(orgA, wfA.id)).toBe(5);
      expect(await h.repo.countByWorkflow(orgA, wfA2.id)).toBe(1);
    });

    it('pages a campaign\'s runs newest first with the total', async () => {
      const a = await h.repo.create(orgA, newRun(wfA, { campaignId: 11, now: at(1) }));
      const b = await h.repo.create(orgA, newRun(wfA2, { campaignId: 11, now: at(2) }));
      await h.repo.create(orgA, newRun(wfA, { campaignId: 12, now: at(3) }));
      await h.repo.create(orgA, newRun(wfA, { now: at(4) }));
      const page = await h.repo.listByCampaign(orgA, 11, { page: 1, limit: 50 });
      expect(page).toEqual({ runs: [b, a], totalCount: 2 });
      expect(await h.repo.listByCampaign(orgB, 11, { page: 1, limit: 50 })).toEqual({ runs: [], totalCount: 0 });
    });

    it('isolates organizations on every scoped method', async () => {
      const run = await h.repo.create(orgA, newRun(wfA, { campaignId: 5 }));
      expect(await h.repo.get(orgB, run.id)).toBeNull();
      expect(await h.repo.listByWorkflow(orgB, wfA.id, { page: 1, limit: 50 })).toEqual({ runs: [], totalCount: 0 });
      expect(await h.repo.countByWorkflow(orgB, wfA.id)).toBe(0);
      expect(await h.repo.applyStatus(orgB, run.id, { status: 'completed', disposition: 'x', at: at(1) })).toEqual({ applied: false, run: null });
      expect(await h.repo.dispositionsByWorkflow(orgB, wfA.id)).toEqual([]);
      expect(await h.repo.attachArtifacts(orgB, run.id, { transcriptKey: 'k', now: at(1) })).toBeNull();
      expect(await h.repo.get(orgA, run.id)).toEqual(run);
    });

    it('moves a run forward through its statuses and records times, context, cost and logs', async () => {
      const run = await h.repo.create(orgA, newRun(wfA, { provider: 'twilio' }));
      const ringing = await h.repo.applyStatus(orgA, run.id, {
        status: 'ringing', providerCallId: 'CA9', log: { ts: at(1).toISOString(), event: 'ringing' }, at: at(1),
      });
      expect(ringing.applied).toBe(true);
      expect(ringing.run).toMatchObject({ status: 'ringing', providerCallId: 'CA9', startedAt: null, endedAt: null, updatedAt: at(1) });
      const talking = await h.repo.applyStatus(orgA, run.id, { status: 'in_progress', gatheredContext: { will_attend: true }, at: at(5) });
      expect(talking.run).toMatchObject({ status: 'in_progress', startedAt: at(5), gatheredContext: { will_attend: true } });
      const done = await h.repo.applyStatus(orgA, run.id, {
        status: 'completed', disposition: 'appointment_confirmed', durationSeconds: 42, gatheredContext: { new_time: 'Tue 9am' },
        costInfo: { service_token_usage: 1234, charge_usd: 0.07 }, log: { ts: at(47).toISOString(), event: 'completed' }, at: at(47),
      });
      expect(done.applied).toBe(true);
      expect(done.run).toMatchObject({
        status: 'completed', disposition: 'appointment_confirmed', durationSeconds: 42, startedAt: at(5), endedAt: at(47),
        gatheredContext: { will_attend: true, new_time: 'Tue 9am', mapped_call_disposition: 'appointment_confirmed' },
        costInfo: { call_duration_seconds: 42, service_token_usage: 1234, charge_usd: 0.07 },
      });
      expect(done.run!.logs.map((l) => l.event)).toEqual(['ringing', 'completed']);
      expect(await h.repo.get(orgA, run.id)).toEqual(done.run);
      expect(await h.repo.findByProviderCallId('twilio', 'CA9')).toEqual(done.run);
    });

    it('never moves a run backwards and ignores anything after a final status', async () => {
      const run = await h.repo.create(orgA, newRun(wfA));
      await h.repo.applyStatus(orgA, run.id, { status: 'in_progress', at: at(2) });
      const stale = await h.repo.applyStatus(orgA, run.id, { status: 'ringing', log: { ts: 'x', event: 'late ringing' }, at: at(3) });
      expect(stale.applied).toBe(false);
      expect(stale.run).toMatchObject({ status: 'in_progress', updatedAt: at(2), logs: [] });
      const queued = await h.repo.applyStatus(orgA, run.id, { status: 'queued', at: at(3) });
      expect(queued.applied).toBe(false);
      const failed = await h.repo.applyStatus(orgA, run.id, { status: 'failed', disposition: 'failed', at: at(4) });
      expect(failed.applied).toBe(true);
      for (const u of [
        { status: 'completed' as const, disposition: 'completed', durationSeconds: 10, at: at(5) },
        { status: 'failed' as const, disposition: 'busy', at: at(6) },
        { status: 'in_progress' as const, at: at(7) },
      ]) {
        const r = await h.repo.applyStatus(orgA, run.id, u);
        expect(r.applied).toBe(false);
        expect(r.run).toEqual(failed.run);
      }
    });

    it('is idempotent: replaying an update changes nothing', async () => {
      const run = await h.repo.create(orgA, newRun(wfA));
      const u = { status: 'ringing' as const, providerCallId: 'SIM1', log: { ts: at(1).toISOString(), event: 'ringing' }, at: at(1) };
      const first = await h.repo.applyStatus(orgA, run.id, u);
      const again = await h.repo.applyStatus(orgA, run.id, u);
      expect(first.applied).toBe(true);
      expect(again).toEqual({ applied: false, run: first.run });
      const final = { status: 'completed' as const, disposition: 'done', durationSeconds: 3, at: at(9) };
      const f1 = await h.repo.applyStatus(orgA, run.id, final);
      const f2 = await h.repo.applyStatus(orgA, run.id, { ...final, at: at(10) });
      expect(f1.applied).toBe(true);
      expect(f2).toEqual({ applied: false, run: f1.run });
      expect(f1.run!.logs).toHaveLength(1);
    });

    it('applies the same non-final status when it brings new details, first provider call id wins', async () => {
      const run = await h.repo.create(orgA, newRun(wfA, { provider: 'ari' }));
      await h.repo.applyStatus(orgA, run.id, { status: 'ringing', at: at(1) });
      const withId = await h.repo.applyStatus(orgA, run.id, { status: 'ringing', providerCallId: 'chan-1', at: at(2) });
      expect(withId).toMatchObject({ applied: true, run: { providerCallId: 'chan-1', updatedAt: at(2) } });
      const otherId = await h.repo.applyStatus(orgA, run.id, { status: 'ringing', providerCallId: 'chan-2', at: at(3) });
      expect(otherId.applied).toBe(false);
      expect(otherId.run!.providerCallId).toBe('chan-1');
      // another call's status is never applied, even one that would move the run forward
      const otherCall = await h.repo.applyStatus(orgA, run.id, { status: 'completed', disposition: 'completed', durationSeconds: 5, providerCallId: 'chan-2', at: at(3) });
      expect(otherCall).toMatchObject({ applied: false, run: { status: 'ringing', providerCallId: 'chan-1' } });
      const ctx = await h.repo.applyStatus(orgA, run.id, { status: 'ringing', gatheredContext: { amd: 'human' }, at: at(4) });
      expect(ctx).toMatchObject({ applied: true, run: { gatheredContext: { amd: 'human' } } });
      const logOnly = await h.repo.applyStatus(orgA, run.id, { status: 'ringing', log: { ts: 'x', event: 'again' }, at: at(5) });
      expect(logOnly.applied).toBe(false);
    });

    it('derives started_at from the duration when the final status comes without in_progress', async () => {
      const run = await h.repo.create(orgA, newRun(wfA));
      const r = await h.repo.applyStatus(orgA, run.id, { status: 'completed', disposition: 'completed', durationSeconds: 30, at: at(100) });
      expect(r.run).toMatchObject({ startedAt: at(70), endedAt: at(100), costInfo: { call_duration_seconds: 30 } });
      const noAnswer = await h.repo.create(orgA, newRun(wfA));
      const f = await h.repo.applyStatus(orgA, noAnswer.id, { status: 'failed', disposition: 'no_answer', at: at(5) });
      expect(f.run).toMatchObject({ startedAt: null, endedAt: at(5), durationSeconds: null, gatheredContext: { mapped_call_disposition: 'no_answer' } });
    });

    describe('the conversation record lands whatever order it and the carrier\'s final status arrive in', () => {
      const record = (s: number) => ({
        status: 'in_progress' as const, conversation: true, disposition: 'appointment_booked',
        gatheredContext: { preferred_day: 'Tuesday', mapped_call_disposition: 'appointment_booked' },
        costInfo: { service_token_usage: 321 }, at: at(s),
      });
      const carrierFinal = (s: number, disposition: string) => ({
        status: 'completed' as const, disposition, durationSeconds: 40, costInfo: { call_duration_seconds: 40, charge_usd: 0.2 },
        log: { ts: at(s).toISOString(), event: 'call_completed' }, at: at(s),
      });
      const expected = {
        status: 'completed', disposition: 'appointment_booked', durationSeconds: 40, endedAt: at(50),
        gatheredContext: { preferred_day: 'Tuesday', mapped_call_disposition: 'appointment_booked' },
        costInfo: { call_duration_seconds: 40, charge_usd: 0.2, service_token_usage: 321 },
      };

      it('record first, then the final status (which keeps the agent\'s disposition)', async () => {
        const run = await h.repo.create(orgA, newRun(wfA));
        await h.repo.applyStatus(orgA, run.id, { status: 'in_progress', at: at(10) });
        expect((await h.repo.applyStatus(orgA, run.id, record(49))).applied).toBe(true);
        const done = await h.repo.applyStatus(orgA, run.id, carrierFinal(50, 'appointment_booked'));
        expect(done).toMatchObject({ applied: true, run: expected });
        expect(done.run!.logs.map((l) => l.event)).toEqual(['conversation_recorded', 'call_completed']);
      });

      it('final status first (the caller hung up), then the record: still applied, once', async () => {
        const run = await h.repo.create(orgA, newRun(wfA));
        await h.repo.applyStatus(orgA, run.id, { status: 'in_progress', at: at(10) });
        await h.repo.applyStatus(orgA, run.id, carrierFinal(50, 'completed'));
        const late = await h.repo.applyStatus(orgA, run.id, record(51));
        expect(late).toMatchObject({ applied: true, run: { ...expected, updatedAt: at(51) } });
        expect(late.run!.logs.map((l) => l.event)).toEqual(['call_completed', 'conversation_recorded']);
        expect(await h.repo.get(orgA, run.id)).toEqual(late.run);
        // once: a second record (or a replay) changes nothing, nor does any other late in_progress update
        const again = await h.repo.applyStatus(orgA, run.id, { ...record(52), disposition: 'other', gatheredContext: { preferred_day: 'Friday' } });
        expect(again).toEqual({ applied: false, run: late.run });
        const plain = await h.repo.applyStatus(orgA, run.id, { status: 'in_progress', gatheredContext: { x: 1 }, at: at(53) });
        expect(plain).toEqual({ applied: false, run: late.run });
      });

      it('a late record never replaces a transfer outcome', async () => {
        const run = await h.repo.create(orgA, newRun(wfA));
        await h.repo.applyStatus(orgA, run.id, { status: 'in_progress', at: at(10) });
        await h.repo.applyStatus(orgA, run.id, carrierFinal(50, 'transfer_failed'));
        const late = await h.repo.applyStatus(orgA, run.id, { ...record(51), disposition: 'transferred' });
        expect(late).toMatchObject({ applied: true, run: { disposition: 'transfer_failed', gatheredContext: { preferred_day: 'Tuesday', mapped_call_disposition: 'transfer_failed' } } });
      });
    });

    it('lets exactly one of several concurrent final statuses win', async () => {
      const run = await h.repo.create(orgA, newRun(wfA));
      const results = await Promise.all([
        h.repo.applyStatus(orgA, run.id, { status: 'completed', disposition: 'a', at: at(1) }),
        h.repo.applyStatus(orgA, run.id, { status: 'failed', disposition: 'b', at: at(1) }),
        h.repo.applyStatus(orgA, run.id, { status: 'completed', disposition: 'c', at: at(1) }),
      ]);
      expect(results.filter((r) => r.applied)).toHaveLength(1);
      const winner = results.find((r) => r.applied)!.run!;
      expect(await h.repo.get(orgA, run.id)).toEqual(winner);
    });

    it('lists the distinct dispositions a workflow\'s runs produced', async () => {
      for (const d of ['busy', 'appointment_confirmed', 'busy', null]) {
        const r = await h.repo.create(orgA, newRun(wfA));
        if (d) await h.repo.applyStatus(orgA, r.id, { status: 'failed', disposition: d, at: at(1) });
      }
      const other = await h.repo.create(orgA, newRun(wfA2));
      await h.repo.applyStatus(orgA, other.id, { status: 'completed', disposition: 'wrong_number', at: at(1) });
      expect((await h.repo.dispositionsByWorkflow(orgA, wfA.id)).sort()).toEqual(['appointment_confirmed', 'busy']);
      expect(await h.repo.dispositionsByWorkflow(orgA, wfA2.id)).toEqual(['wrong_number']);
    });

    it('attaches artifacts, merges annotations and appends a log entry once', async () => {
      const run = await h.repo.create(orgA, newRun(wfA));
      const log = { ts: at(1).toISOString(), event: 'recording_stored', details: { bytes: 10 } };
      const a = await h.repo.attachArtifacts(orgA, run.id, {
        transcriptKey: `runs/${orgA}/${run.id}/transcript.json`, annotations: { sentiment: 'positive' }, logs: [log], now: at(1),
      });
      expect(a).toMatchObject({ transcriptKey: `runs/${orgA}/${run.id}/transcript.json`, recordingKey: null, annotations: { sentiment: 'positive' }, updatedAt: at(1) });
      const b = await h.repo.attachArtifacts(orgA, run.id, {
        recordingKey: `runs/${orgA}/${run.id}/recording.wav`, annotations: { reviewed: true }, logs: [{ ...log }], now: at(2),
      });
      expect(b).toMatchObject({
        transcriptKey: `runs/${orgA}/${run.id}/transcript.json`, recordingKey: `runs/${orgA}/${run.id}/recording.wav`,
        annotations: { sentiment: 'positive', reviewed: true }, status: 'queued',
      });
      expect(b!.logs).toEqual([log]);
      expect(await h.repo.get(orgA, run.id)).toEqual(b);
    });

    it('appends many log entries in one write, in order, skipping those already there or repeated in the list', async () => {
      const run = await h.repo.create(orgA, newRun(wfA));
      const entry = (n: number) => ({ ts: at(n).toISOString(), event: 'turn', details: { turn: n, text: `reply ${n}` } });
      await h.repo.attachArtifacts(orgA, run.id, { logs: [entry(1), entry(2)], now: at(1) });
      // key order does not make an entry new
      const reordered = { details: { text: 'reply 2', turn: 2 }, event: 'turn', ts: at(2).toISOString() };
      const after = await h.repo.attachArtifacts(orgA, run.id, { logs: [reordered, entry(3), entry(4), entry(3), entry(1)], now: at(2) });
      expect(after!.logs).toEqual([entry(1), entry(2), entry(3), entry(4)]);
      // nothing new: the log is unchanged, the other fields still apply
      const again = await h.repo.attachArtifacts(orgA, run.id, { logs: [entry(4)], annotations: { reviewed: true }, now: at(3) });
      expect(again!.logs).toEqual(after!.logs);
      expect(again!.annotations).toEqual({ reviewed: true });
      expect(await h.repo.get(orgA, run.id)).toEqual(again);
      expect(await h.repo.attachArtifacts(orgB, run.id, { logs: [entry(9)], now: at(4) })).toBeNull();
      expect((await h.repo.get(orgA, run.id))!.logs).toHaveLength(4);
    });
  });
}
