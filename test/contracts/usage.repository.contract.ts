import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { OrganizationSettingsRepository } from '../../core/ports/organization-settings.repository.port.js';
import type { RunRepository } from '../../core/ports/run.repository.port.js';
import type { UsageRepository } from '../../core/ports/usage.repository.port.js';
import type { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import type { Run, RunMode } from '../../core/runs/run.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import {
  compareUsageOrder, cursorOf, matchesUsageFilter, reportedDurationSeconds, type UsageFilter, type UsageRecord, type UsageTotals,
} from '../../core/usage/usage.js';
import { prng } from '../support/prng.js';

export interface UsageRepositoryHarness {
  usage: UsageRepository;
  /** The same store's runs and workflows: the report reads runs, which belong to a workflow. */
  runs: RunRepository;
  workflows: WorkflowRepository;
  newOrganization(name: string): Promise<number>;
  cleanup(): Promise<void>;
}

export interface OrganizationSettingsHarness {
  settings: OrganizationSettingsRepository;
  newOrganization(name: string): Promise<number>;
  cleanup(): Promise<void>;
}

/** What a seeded run should become: its creation fields plus the final status details. */
interface Seed {
  createdAt: Date;
  workflow: 0 | 1;
  campaignId: number | null;
  mode: RunMode;
  callerNumber: string | null;
  calledNumber: string | null;
  /** null: the run stays in progress (no disposition, no duration). */
  final: { disposition: string; durationSeconds: number | null; tokens: number } | null;
}

const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;

const DISPOSITIONS = ['completed', 'busy', 'voicemail', 'interested', 'no_answer'];

/** `n` seeds over 60 days, with many runs sharing one millisecond (ties broken by id) and every filterable variety. */
export function usageSeeds(n: number, seed = 7): Seed[] {
  const r = prng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const out: Seed[] = [];
  for (let i = 0; i < n; i++) {
    // one run in 5 shares its millisecond with the previous one
    const createdAt = i > 0 && r() < 0.2 ? out[i - 1]!.createdAt : new Date(T0 + Math.floor(r() * 60 * DAY));
    const mode: RunMode = r() < 0.7 ? 'outbound' : 'inbound';
    const ours = `+1555000${String(Math.floor(r() * 1000)).padStart(4, '0')}`;
    const theirs = r() < 0.05 ? null : `+4420${String(Math.floor(r() * 1e6)).padStart(7, '0')}`;
    const final = r() < 0.15 ? null : {
      disposition: pick(DISPOSITIONS),
      durationSeconds: r() < 0.1 ? null : pick([0, 1, 30, 59.5, 60, 61, 120, 300, 601]),
      tokens: Math.floor(r() * 2000),
    };
    out.push({
      createdAt, workflow: r() < 0.5 ? 0 : 1, campaignId: mode === 'inbound' ? null : pick([null, 1, 2, 3]), mode,
      callerNumber: mode === 'outbound' ? ours : theirs, calledNumber: mode === 'outbound' ? theirs : ours, final,
    });
  }
  return out;
}

/** Creates the seeded runs through the RunRepository port (create, then the final status), in a random id order. */
export async function seedUsageRuns(
  h: Pick<UsageRepositoryHarness, 'runs'>, org: number, workflows: { id: number; definitionId: number }[], seeds: Seed[],
): Promise<Run[]> {
  const runs: Run[] = [];
  for (const s of seeds) {
    const wf = workflows[s.workflow]!;
    let run = await h.runs.create(org, {
      workflowId: wf.id, definitionId: wf.definitionId, name: `Call ${s.calledNumber ?? 'unknown'}`, mode: s.mode, campaignId: s.campaignId,
      callerNumber: s.callerNumber, calledNumber: s.calledNumber, initialContext: { first_name: 'Ada' }, now: s.createdAt,
    });
    if (s.final) {
      const { applied, run: done } = await h.runs.applyStatus(org, run.id, {
        status: 'completed', disposition: s.final.disposition, durationSeconds: s.final.durationSeconds,
        costInfo: { service_token_usage: s.final.tokens, charge_usd: reportedDurationSeconds({ durationSeconds: s.final.durationSeconds }) / 60 },
        at: new Date(s.createdAt.getTime() + 1000),
      });
      if (!applied || !done) throw new Error('seeding: the final status was not applied');
      run = done;
    }
    runs.push(run);
  }
  return runs;
}

/** The expected result of a filter, computed from the reference semantics (`matchesUsageFilter`). */
export function referenceUsage(runs: Run[], filter: UsageFilter): { ordered: Run[]; totals: UsageTotals } {
  const ordered = runs.filter((r) => matchesUsageFilter(r, filter)).sort(compareUsageOrder);
  return {
    ordered,
    totals: {
      count: ordered.length,
      serviceTokens: ordered.reduce((s, r) => s + r.costInfo.service_token_usage, 0),
      durationSeconds: ordered.reduce((s, r) => s + reportedDurationSeconds(r), 0),
    },
  };
}

const ids = (records: UsageRecord[]) => records.map((r) => r.run.id);

/**
 * The UsageRepository contract every storage adapter runs (SQLite always; MongoDB where reachable): each filter of
 * spec 4.9 (+ callDirection) against the reference semantics `matchesUsageFilter`, inclusive bounds, the order
 * (createdAt desc, id desc, ties included), totals over every match, pagination edges, deep pages equal to the
 * plain offset reference on a few thousand runs, the keyset walk `after`, and tenant isolation.
 */
export function runUsageRepositoryContract(label: string, make: () => Promise<UsageRepositoryHarness>, options: { bigRuns?: number } = {}): void {
  describe(`UsageRepository contract: ${label}`, () => {
    let h: UsageRepositoryHarness;
    let orgA: number;
    let orgB: number;
    let wfs: { id: number; definitionId: number; name: string }[];
    let n = 0;

    const workflow = async (org: number, name: string) => {
      const { workflow: w, current } = await h.workflows.create(org, {
        name, workflowUuid: `00000000-0000-4000-9000-${String(++n).padStart(12, '0')}`,
        definition: structuredClone(exampleWorkflowDefinition), templateContextVariables: {}, workflowConfigurations: {}, now: new Date(T0),
      });
      return { id: w.id, definitionId: current.id, name };
    };

    beforeEach(async () => {
      h = await make();
      orgA = await h.newOrganization('Org A');
      orgB = await h.newOrganization('Org B');
      wfs = [await workflow(orgA, 'Sales agent'), await workflow(orgA, 'Support agent')];
    });
    afterEach(async () => {
      await h.cleanup();
    });

    const expectPage = async (runs: Run[], filter: UsageFilter, page: number, limit: number) => {
      const ref = referenceUsage(runs, filter);
      const got = await h.usage.page(orgA, filter, { page, limit });
      expect(got.totals.count).toBe(ref.totals.count);
      expect(got.totals.serviceTokens).toBeCloseTo(ref.totals.serviceTokens, 6);
      expect(got.totals.durationSeconds).toBeCloseTo(ref.totals.durationSeconds, 6);
      expect(ids(got.records)).toEqual(ref.ordered.slice((page - 1) * limit, page * limit).map((r) => r.id));
      return got;
    };

    it('gives zero totals and no records for an organization without runs, and for a page past the end', async () => {
      expect(await h.usage.page(orgA, {}, { page: 1, limit: 50 })).toEqual({ records: [], totals: { count: 0, serviceTokens: 0, durationSeconds: 0 } });
      expect(await h.usage.after(orgA, {}, null, 10)).toEqual([]);
      const runs = await seedUsageRuns(h, orgA, wfs, usageSeeds(5));
      const past = await h.usage.page(orgA, {}, { page: 3, limit: 5 });
      expect(past.records).toEqual([]);
      expect(past.totals.count).toBe(5);
      expect(past.totals).toEqual(referenceUsage(runs, {}).totals);
    });

    it('returns full runs with their workflow name, newest first with ties broken by the higher id', async () => {
      const t = new Date(T0 + DAY);
      const seeds = usageSeeds(4).map((s) => ({ ...s, createdAt: t }));
      seeds.push({ ...seeds[0]!, createdAt: new Date(T0 + 2 * DAY) });
      const runs = await seedUsageRuns(h, orgA, wfs, seeds);
      const got = await h.usage.page(orgA, {}, { page: 1, limit: 10 });
      expect(ids(got.records)).toEqual([runs[4]!.id, runs[3]!.id, runs[2]!.id, runs[1]!.id, runs[0]!.id]);
      for (const rec of got.records) {
        const stored = runs.find((r) => r.id === rec.run.id)!;
        expect(rec.run).toEqual(stored);
        expect(rec.workflowName).toBe(wfs.find((w) => w.id === stored.workflowId)!.name);
      }
    });

    it('sums tokens and durations over every matching run, not just the page, counting a missing duration as 0', async () => {
      const runs = await seedUsageRuns(h, orgA, wfs, usageSeeds(60));
      expect(runs.some((r) => r.durationSeconds === null)).toBe(true);
      const got = await expectPage(runs, {}, 2, 7);
      expect(got.records).toHaveLength(7);
      expect(got.totals.count).toBe(60);
      expect(got.totals.serviceTokens).toBeGreaterThan(0);
    });

    it('applies each filter of spec 4.9 and callDirection exactly as the reference semantics', async () => {
      const runs = await seedUsageRuns(h, orgA, wfs, usageSeeds(300, 11));
      const some = runs[17]!;
      const filters: UsageFilter[] = [
        { runId: some.id },
        { runId: some.id, mode: some.mode === 'inbound' ? 'outbound' : 'inbound' },
        { workflowId: wfs[1]!.id },
        { campaignId: 2 },
        { callerNumberContains: ['+1555000'] },
        { callerNumberContains: ['00012'] },
        { calledNumberContains: ['+4420'] },
        { calledNumberContains: ['12', '3'] },
        { dispositions: ['busy'] },
        { dispositions: ['voicemail', 'interested'] },
        { durationMin: 60 },
        { durationMax: 0 },
        { durationMin: 59.5, durationMax: 61 },
        { mode: 'inbound' },
        { mode: 'outbound', campaignId: 1, dispositions: ['completed', 'busy'], durationMin: 1 },
        { workflowId: wfs[0]!.id, calledNumberContains: ['5'], durationMax: 300 },
        { campaignId: 3, durationMin: 30, durationMax: 120 },
        { dispositions: ['no_answer'], durationMin: 1 },
        { workflowId: wfs[1]!.id, durationMin: 10 },
        { campaignId: 999 },
        { dispositions: ['nobody-uses-this'] },
      ];
      for (const f of filters) {
        const ref = referenceUsage(runs, f);
        // every filter here selects something but the three built to select nothing
        const empty = f.campaignId === 999 || f.dispositions?.includes('nobody-uses-this') || (f.runId !== undefined && f.mode !== undefined);
        expect([f, ref.totals.count > 0]).toEqual([f, !empty]);
        await expectPage(runs, f, 1, 100);
      }
    });

    it('treats both date bounds as inclusive, to the millisecond', async () => {
      const runs = await seedUsageRuns(h, orgA, wfs, usageSeeds(200, 5));
      const sorted = [...runs].sort(compareUsageOrder).reverse();
      const from = sorted[40]!.createdAt;
      const to = sorted[120]!.createdAt;
      const got = await expectPage(runs, { createdFrom: from, createdTo: to }, 1, 100);
      expect(got.records.some((r) => r.run.createdAt.getTime() === from.getTime())).toBe(true);
      expect(got.records.some((r) => r.run.createdAt.getTime() === to.getTime())).toBe(true);
      const justInside = await h.usage.page(orgA, { createdFrom: to, createdTo: to }, { page: 1, limit: 100 });
      expect(justInside.totals.count).toBe(runs.filter((r) => r.createdAt.getTime() === to.getTime()).length);
      const after = await h.usage.page(orgA, { createdFrom: new Date(to.getTime() + 1), createdTo: new Date(to.getTime() + 1) }, { page: 1, limit: 100 });
      expect(after.totals.count).toBe(runs.filter((r) => r.createdAt.getTime() === to.getTime() + 1).length);
      await expectPage(runs, { createdFrom: from }, 1, 100);
      await expectPage(runs, { createdTo: to, durationMin: 30 }, 1, 100);
      expect((await h.usage.page(orgA, { createdFrom: to, createdTo: from }, { page: 1, limit: 10 })).totals.count).toBe(0);
    });

    it('never shows another organization\'s runs, whatever the filter', async () => {
      const wfB = await workflow(orgB, 'Their agent');
      const runsA = await seedUsageRuns(h, orgA, wfs, usageSeeds(30, 1));
      const runsB = await seedUsageRuns(h, orgB, [wfB, wfB], usageSeeds(30, 1));
      const pageA = await h.usage.page(orgA, {}, { page: 1, limit: 100 });
      expect(ids(pageA.records).sort((a, b) => a - b)).toEqual(runsA.map((r) => r.id).sort((a, b) => a - b));
      expect((await h.usage.page(orgA, { runId: runsB[0]!.id }, { page: 1, limit: 10 })).totals.count).toBe(0);
      expect((await h.usage.page(orgA, { workflowId: wfB.id }, { page: 1, limit: 10 })).records).toEqual([]);
      expect((await h.usage.after(orgA, { workflowId: wfB.id }, null, 10))).toEqual([]);
      const other = await h.usage.page(orgB + orgA + 1000, {}, { page: 1, limit: 10 });
      expect(other).toEqual({ records: [], totals: { count: 0, serviceTokens: 0, durationSeconds: 0 } });
    });

    it('pages a few thousand runs exactly like an offset over the reference order, deep pages and last page included', async () => {
      const runs = await seedUsageRuns(h, orgA, wfs, usageSeeds(options.bigRuns ?? 2500, 3));
      const filters: UsageFilter[] = [
        {},
        { workflowId: wfs[0]!.id },
        { campaignId: 1 },
        { dispositions: ['busy', 'completed'] },
        { dispositions: ['interested'] },
        { calledNumberContains: ['1'] },
        { durationMin: 30, durationMax: 300, createdFrom: new Date(T0 + 5 * DAY), createdTo: new Date(T0 + 50 * DAY) },
        { mode: 'outbound' },
      ];
      for (const f of filters) {
        const total = referenceUsage(runs, f).totals.count;
        for (const limit of [1, 7, 100]) {
          const last = Math.max(1, Math.ceil(total / limit));
          const pages = [...new Set([1, 2, 3, Math.ceil(last / 3), Math.ceil(last / 2), last - 1, last, last + 1].filter((p) => p >= 1))];
          for (const p of pages) await expectPage(runs, f, p, limit);
        }
      }
    });

    it('walks every matching run with keyset cursors (after), in order, without repeats', async () => {
      const runs = await seedUsageRuns(h, orgA, wfs, usageSeeds(500, 9));
      for (const f of [{}, { campaignId: 2 }, { dispositions: ['busy', 'voicemail'] }, { calledNumberContains: ['7'] }] as UsageFilter[]) {
        const seen: number[] = [];
        let cursor = null;
        for (;;) {
          const batch: UsageRecord[] = await h.usage.after(orgA, f, cursor, 37);
          if (batch.length === 0) break;
          seen.push(...ids(batch));
          cursor = cursorOf(batch[batch.length - 1]!.run);
        }
        expect(seen).toEqual(referenceUsage(runs, f).ordered.map((r) => r.id));
      }
    });
  });
}

/** The OrganizationSettingsRepository contract: defaults, upsert, partial writes, isolation. */
export function runOrganizationSettingsRepositoryContract(label: string, make: () => Promise<OrganizationSettingsHarness>): void {
  describe(`OrganizationSettingsRepository contract: ${label}`, () => {
    let h: OrganizationSettingsHarness;
    beforeEach(async () => {
      h = await make();
    });
    afterEach(async () => {
      await h.cleanup();
    });
    const now = new Date('2026-03-01T10:00:00.000Z');

    it('returns the defaults until written, then what was written', async () => {
      const org = await h.newOrganization('A');
      expect(await h.settings.get(org)).toEqual({ organizationId: org, pricePerMinuteUsd: 0, updatedAt: null });
      expect(await h.settings.update(org, { pricePerMinuteUsd: 0.125 }, now)).toEqual({ organizationId: org, pricePerMinuteUsd: 0.125, updatedAt: now });
      expect(await h.settings.get(org)).toEqual({ organizationId: org, pricePerMinuteUsd: 0.125, updatedAt: now });
      const later = new Date(now.getTime() + 1000);
      expect(await h.settings.update(org, { pricePerMinuteUsd: 0.125 }, later)).toEqual({ organizationId: org, pricePerMinuteUsd: 0.125, updatedAt: later });
      expect(await h.settings.update(org, {}, later)).toMatchObject({ pricePerMinuteUsd: 0.125 });
      expect(await h.settings.update(org, { pricePerMinuteUsd: 0 }, later)).toMatchObject({ pricePerMinuteUsd: 0 });
    });

    it('keeps organizations apart', async () => {
      const a = await h.newOrganization('A');
      const b = await h.newOrganization('B');
      await h.settings.update(a, { pricePerMinuteUsd: 2 }, now);
      expect((await h.settings.get(b)).pricePerMinuteUsd).toBe(0);
      await h.settings.update(b, { pricePerMinuteUsd: 3 }, now);
      expect((await h.settings.get(a)).pricePerMinuteUsd).toBe(2);
    });
  });
}
