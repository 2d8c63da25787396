import { describe, expect, it } from '@jest/globals';
import { runRunRepositoryContract } from '../../../test/contracts/run.repository.contract.js';
import { openMigratedSqlite } from './database.js';
import { SqliteRunRepository, runFromRow, runMutableColumns, type RunRow } from './run.sqlite.js';
import { SqliteWorkflowRepository } from './workflow.sqlite.js';
import { insertOrganization } from './workflow.sqlite.test-support.js';

runRunRepositoryContract('sqlite', async () => {
  const db = openMigratedSqlite(':memory:');
  return {
    repo: new SqliteRunRepository(db),
    workflows: new SqliteWorkflowRepository(db),
    newOrganization: async (name) => insertOrganization(db, name),
    cleanup: async () => {
      db.close();
    },
  };
});

const row: RunRow = {
  id: 1, organization_id: 2, workflow_id: 3, definition_id: 4, name: 'n', mode: 'inbound', status: 'completed', status_rank: 3,
  disposition: 'done', campaign_id: null, attempt_id: null, telephony_configuration_id: 6, provider: 'simulator', provider_call_id: 'sim-1',
  caller_number: '+15550000001', called_number: '+15550000002', initial_context: '{"a":"b"}', gathered_context: '{"mapped_call_disposition":"done"}',
  logs: '[{"ts":"t","event":"e"}]', annotations: '{}', cost_info: '{"call_duration_seconds":12,"service_token_usage":5,"charge_usd":0.1}',
  duration_seconds: 12, service_token_usage: 5, charge_usd: 0.1, transcript_key: 'runs/2/1/t.json', recording_key: null,
  created_at: 100, started_at: 200, ended_at: 300, updated_at: 300,
};

describe('sqlite run mappers', () => {
  it('maps a row to a run and the run back to the same mutable columns', () => {
    const run = runFromRow(row);
    expect(run).toMatchObject({
      mode: 'inbound', status: 'completed', initialContext: { a: 'b' }, logs: [{ ts: 't', event: 'e' }],
      costInfo: { call_duration_seconds: 12, service_token_usage: 5, charge_usd: 0.1 }, startedAt: new Date(200), recordingKey: null,
    });
    const cols = runMutableColumns(run);
    for (const [k, v] of Object.entries(cols)) expect([k, v]).toEqual([k, row[k as keyof RunRow]]);
  });

  it('uses the query planner\'s indexes for the report and list access paths', () => {
    const db = openMigratedSqlite(':memory:');
    const plan = (sql: string) => db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => (r as { detail: string }).detail).join(' | ');
    expect(plan('SELECT * FROM runs WHERE organization_id = 1 AND workflow_id = 2 ORDER BY created_at DESC, id DESC LIMIT 50'))
      .toMatch(/USING INDEX runs_org_workflow/);
    expect(plan('SELECT * FROM runs WHERE organization_id = 1 AND created_at BETWEEN 0 AND 10 ORDER BY created_at DESC, id DESC LIMIT 50'))
      .toMatch(/USING INDEX runs_org_created/);
    expect(plan('SELECT * FROM runs WHERE organization_id = 1 AND campaign_id = 2 ORDER BY created_at DESC, id DESC LIMIT 50'))
      .toMatch(/USING INDEX runs_org_campaign/);
    expect(plan("SELECT * FROM runs WHERE provider = 'twilio' AND provider_call_id = 'CA1'")).toMatch(/USING INDEX runs_provider_call/);
    expect(plan('SELECT DISTINCT disposition FROM runs WHERE organization_id = 1 AND workflow_id = 2 AND disposition IS NOT NULL'))
      .toMatch(/runs_org_wf_disposition/);
    expect(plan('SELECT * FROM runs WHERE organization_id = 1 AND workflow_id = 2 ORDER BY created_at DESC, id DESC LIMIT 50')).not.toMatch(/TEMP B-TREE/);
    db.close();
  });
});

describe('sqlite applyStatus across connections', () => {
  it('holds the write lock from its read to its write, so another connection cannot slip in between', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { openSqlite } = await import('./database.js');
    const dir = mkdtempSync(join(tmpdir(), 'callplane-runs-'));
    const file = join(dir, 'db.sqlite');
    const db1 = openMigratedSqlite(file);
    const db2 = openSqlite(file);
    db2.pragma('busy_timeout = 50');
    try {
      const org = insertOrganization(db1, 'Org');
      const { workflow, current } = await new SqliteWorkflowRepository(db1).create(org, {
        name: 'w', workflowUuid: 'u', definition: { nodes: [], edges: [] }, templateContextVariables: {}, workflowConfigurations: {}, now: new Date(0),
      });
      const first = new SqliteRunRepository(db1);
      const second = new SqliteRunRepository(db2);
      const run = await first.create(org, { workflowId: workflow.id, definitionId: current.id, name: 'c', mode: 'outbound', initialContext: {}, now: new Date(0) });

      // While connection 1 has read the run inside applyStatus, connection 2 tries to finish the same run.
      const q = (first as unknown as { q: { get: { get: (...a: unknown[]) => unknown } } }).q;
      const realGet = q.get.get.bind(q.get);
      let competitor: unknown = null;
      q.get = {
        get: (...args: unknown[]) => {
          const row = realGet(...args);
          if (competitor === null) {
            competitor = 'pending';
            second.applyStatus(org, run.id, { status: 'failed', disposition: 'b', at: new Date(2) }).then(
              (r) => { competitor = r; },
              (e: { code?: string }) => { competitor = e.code ?? String(e); },
            );
          }
          return row;
        },
      };
      const result = await first.applyStatus(org, run.id, { status: 'completed', disposition: 'a', at: new Date(1) });
      await new Promise((r) => setImmediate(r));
      expect(result.applied).toBe(true);
      expect(competitor).toBe('SQLITE_BUSY');
      // once the lock is released, the competitor's late final status is refused as stale
      expect(await second.applyStatus(org, run.id, { status: 'failed', disposition: 'b', at: new Date(2) })).toMatchObject({
        applied: false, run: { status: 'completed', disposition: 'a' },
      });
    } finally {
      db2.close();
      db1.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
