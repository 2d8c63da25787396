import { describe, expect, it } from '@jest/globals';
import {
  runOrganizationSettingsRepositoryContract, runUsageRepositoryContract, seedUsageRuns, usageSeeds,
} from '../../../test/contracts/usage.repository.contract.js';
import { exampleWorkflowDefinition } from '../../../core/workflows/example-definition.js';
import type { UsageFilter } from '../../../core/usage/usage.js';
import { openMigratedSqlite } from './database.js';
import { SqliteOrganizationSettingsRepository } from './organization-settings.sqlite.js';
import { SqliteRunRepository } from './run.sqlite.js';
import { SqliteUsageRepository, usageConditions, usageIndexFor, type SqliteUsageOptions } from './usage.sqlite.js';
import { SqliteWorkflowRepository } from './workflow.sqlite.js';
import { insertOrganization } from './workflow.sqlite.test-support.js';

const harness = (options?: SqliteUsageOptions) => async () => {
  const db = openMigratedSqlite(':memory:');
  return {
    usage: new SqliteUsageRepository(db, options),
    runs: new SqliteRunRepository(db),
    workflows: new SqliteWorkflowRepository(db),
    newOrganization: async (name: string) => insertOrganization(db, name),
    cleanup: async () => {
      db.close();
    },
  };
};

runUsageRepositoryContract('sqlite', harness());
// tiny slices and threshold: every deep page goes through the slice search, several levels deep
runUsageRepositoryContract('sqlite, boundary search forced (3 slices, threshold 5)', harness({ slices: 3, offsetThreshold: 5 }));

runOrganizationSettingsRepositoryContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  return {
    settings: new SqliteOrganizationSettingsRepository(db),
    newOrganization: async (name: string) => insertOrganization(db, name),
    cleanup: async () => {
      db.close();
    },
  };
});

describe('sqlite usage: against plain SQL and the query planner', () => {
  it('gives the same pages as a plain SQL LIMIT/OFFSET over the same filter, on a few thousand runs', async () => {
    const db = openMigratedSqlite(':memory:');
    const org = insertOrganization(db, 'A');
    const workflows = new SqliteWorkflowRepository(db);
    const wfs = [];
    for (const name of ['One', 'Two']) {
      const { workflow, current } = await workflows.create(org, {
        name, workflowUuid: `00000000-0000-4000-a000-00000000000${wfs.length}`, definition: structuredClone(exampleWorkflowDefinition),
        templateContextVariables: {}, workflowConfigurations: {}, now: new Date(0),
      });
      wfs.push({ id: workflow.id, definitionId: current.id });
    }
    await seedUsageRuns({ runs: new SqliteRunRepository(db) }, org, wfs, usageSeeds(3000, 21));
    const usage = new SqliteUsageRepository(db, { slices: 4, offsetThreshold: 50 });
    const reference = (f: UsageFilter, page: number, limit: number) => {
      const c = usageConditions(org, f);
      const dates = `${f.createdFrom ? 'AND created_at >= @from' : ''} ${f.createdTo ? 'AND created_at <= @to' : ''}`;
      const params = { ...c.params, from: f.createdFrom?.getTime() ?? 0, to: f.createdTo?.getTime() ?? 0 };
      const ids = db.prepare(`SELECT id FROM runs NOT INDEXED WHERE ${c.sql} ${dates} ORDER BY created_at DESC, id DESC LIMIT @limit OFFSET @offset`)
        .all({ ...params, limit, offset: (page - 1) * limit }).map((r) => (r as { id: number }).id);
      const totals = db.prepare(`SELECT COUNT(*) AS n, TOTAL(service_token_usage) AS t, TOTAL(COALESCE(duration_seconds, 0)) AS d
        FROM runs NOT INDEXED WHERE ${c.sql} ${dates}`).get(params) as { n: number; t: number; d: number };
      return { ids, totals };
    };
    const filters: UsageFilter[] = [
      {}, { campaignId: 2 }, { workflowId: wfs[1]!.id }, { dispositions: ['busy'] }, { dispositions: ['busy', 'interested'] },
      { calledNumberContains: ['44'], mode: 'inbound' }, { durationMin: 60, createdFrom: new Date(Date.UTC(2026, 0, 10)), createdTo: new Date(Date.UTC(2026, 1, 10)) },
    ];
    for (const f of filters) {
      const count = reference(f, 1, 1).totals.n;
      expect(count).toBeGreaterThan(0);
      for (const limit of [10, 100]) {
        const last = Math.ceil(count / limit);
        for (let page = 1; page <= last + 1; page += Math.max(1, Math.floor(last / 9))) {
          const want = reference(f, page, limit);
          const got = await usage.page(org, f, { page, limit });
          expect(got.records.map((r) => r.run.id)).toEqual(want.ids);
          expect(got.totals.count).toBe(want.totals.n);
          expect(got.totals.serviceTokens).toBeCloseTo(want.totals.t, 6);
          expect(got.totals.durationSeconds).toBeCloseTo(want.totals.d, 6);
        }
        const lastPage = await usage.page(org, f, { page: last, limit });
        expect(lastPage.records.map((r) => r.run.id)).toEqual(reference(f, last, limit).ids);
      }
    }
    db.close();
  });

  it('answers totals from covering indexes and pages in index order (no table scan, no sort)', () => {
    const db = openMigratedSqlite(':memory:');
    const plan = (sql: string, params: Record<string, unknown>) =>
      db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params).map((r) => (r as { detail: string }).detail).join(' | ');
    const cases: [UsageFilter, string][] = [
      [{}, 'runs_usage_created'],
      [{ campaignId: 1 }, 'runs_usage_created'],
      [{ workflowId: 1, durationMin: 3 }, 'runs_usage_created'],
      [{ dispositions: ['a', 'b'] }, 'runs_usage_created'],
      [{ calledNumberContains: ['55'] }, 'runs_usage_created'],
      [{ campaignId: 1, callerNumberContains: ['1'], mode: 'outbound', dispositions: ['x'], durationMax: 5 }, 'runs_usage_created'],
    ];
    for (const [f, index] of cases) {
      expect(usageIndexFor(f, 'totals')).toBe(index);
      const c = usageConditions(1, f);
      const totals = plan(`SELECT COUNT(*), TOTAL(service_token_usage), TOTAL(duration_seconds) FROM runs INDEXED BY ${index}
        WHERE ${c.sql} AND created_at BETWEEN @lo AND @hi`, { ...c.params, lo: 0, hi: 1 });
      expect(totals).toContain(`USING COVERING INDEX ${index}`);
      const order = usageIndexFor(f, 'order');
      const page = plan(`SELECT created_at, id FROM runs INDEXED BY ${order} WHERE ${c.sql} AND created_at BETWEEN @lo AND @hi
        ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET 5`, { ...c.params, lo: 0, hi: 1 });
      expect(page).toContain(`USING COVERING INDEX ${order}`);
      expect(page).not.toMatch(/TEMP B-TREE/);
    }
    db.close();
  });
});
