import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError, InputError } from '../../core/errors.js';
import { ObjectStore } from '../../core/ports/object-store.port.js';
import { RunRepository, type NewRun } from '../../core/ports/run.repository.port.js';
import type { Run } from '../../core/runs/run.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import {
  EnsureWorkflowCanReceiveCalls,
  isWorkflowUnavailable,
} from '../../core/workflows/ensure-workflow-can-receive-calls.use-case.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';

type Def = { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[] };
const P = ['body', 'workflow_definition'];

const node = (id: string, type: string, data: Record<string, unknown> = {}) => ({ id, type, data: { name: id, prompt: `Prompt of ${id}`, ...data } });
const edge = (id: string, source: string, target: string, label = id) => ({ id, source, target, data: { label, condition: `take ${id}` } });
/** start → a → end */
const base = (): Def => ({
  nodes: [node('start', 'startCall'), node('a', 'agentNode'), node('end', 'endCall', { disposition: 'done' })],
  edges: [edge('e1', 'start', 'a'), edge('e2', 'a', 'end')],
});
const example = () => structuredClone(exampleWorkflowDefinition) as unknown as Def;

describe('workflows and runs API (API.md section 7)', () => {
  let svc: TestService;
  let dataDir: string;
  let nowMs = Date.parse('2026-05-04T12:00:00.000Z');
  let a: { token: string; organizationId: number };
  let b: { token: string; organizationId: number };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'callplane-wf-'));
    svc = await startTestService({ env: { CALLPLANE_DATA_DIR: dataDir }, clock: { now: () => new Date(nowMs) } });
    a = await svc.signup();
    b = await svc.signup();
  });
  afterAll(async () => {
    await svc.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const create = async (auth: { token: string }, body: Record<string, unknown> = {}) => {
    const r = await svc.post('/workflow/create/definition', { name: 'Dental reminder', workflow_definition: example(), ...body }, auth);
    expect(r.status).toBe(200);
    return r.body;
  };
  const runs = () => svc.container.get<RunRepository>(RunRepository);
  const seedRun = (orgId: number, wf: { id: number; current_definition_id: number }, extra: Partial<NewRun> = {}): Promise<Run> =>
    runs().create(orgId, {
      workflowId: wf.id, definitionId: wf.current_definition_id, name: 'Call', mode: 'outbound', initialContext: { first_name: 'Ada' },
      now: new Date(nowMs), ...extra,
    });

  describe('create', () => {
    it('creates a workflow and answers exactly the spec 2.7 fields', async () => {
      const r = await svc.post('/workflow/create/definition', { name: 'Dental reminder', workflow_definition: example(), unknown_field: 1 }, a);
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual([
        'call_disposition_codes', 'created_at', 'current_definition_id', 'id', 'name', 'status', 'template_context_variables', 'total_runs',
        'version_number', 'version_status', 'workflow_configurations', 'workflow_definition', 'workflow_uuid',
      ]);
      expect(r.body).toMatchObject({
        name: 'Dental reminder', status: 'active', created_at: new Date(nowMs).toISOString(), version_number: 1, version_status: 'published',
        template_context_variables: {}, workflow_configurations: {}, total_runs: 0,
        call_disposition_codes: { disposition_codes: ['appointment_confirmed', 'appointment_rescheduled', 'wrong_number'] },
        workflow_definition: exampleWorkflowDefinition,
      });
      expect(r.body.workflow_uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(r.body.current_definition_id).toEqual(expect.any(Number));
      expect((await svc.get(`/workflow/${r.body.id}`, a)).body).toEqual(r.body);
    });

    it('stores template_context_variables and workflow_configurations given at creation', async () => {
      const w = await create(a, { template_context_variables: { first_name: 'there' }, workflow_configurations: { voice: 'alloy' } });
      expect(w).toMatchObject({ template_context_variables: { first_name: 'there' }, workflow_configurations: { voice: 'alloy' } });
    });

    it('accepts the example docs/api.md tells users to paste', async () => {
      const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
      const m = /<<'JSON'\n([\s\S]*?)\nJSON\n/.exec(doc.slice(doc.indexOf('## Workflows (agents) and runs')));
      expect(m).not.toBeNull();
      const body = JSON.parse(m![1]!);
      expect(body.workflow_definition).toEqual(exampleWorkflowDefinition);
      const r = await svc.post('/workflow/create/definition', body, a);
      expect(r.status).toBe(200);
      expect(r.body.name).toBe(body.name);
    });

    it('gives every workflow its own uuid', async () => {
      const [x, y] = [await create(a), await create(a)];
      expect(x.workflow_uuid).not.toBe(y.workflow_uuid);
    });

    it('refuses a missing or blank name and a missing definition (422)', async () => {
      const r1 = await svc.post('/workflow/create/definition', { workflow_definition: base() }, a);
      expect(r1.status).toBe(422);
      expect(r1.body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'name'], type: 'missing' }));
      const r2 = await svc.post('/workflow/create/definition', { name: '   ', workflow_definition: base() }, a);
      expect(r2.status).toBe(422);
      expect(r2.body.detail.map((i: { loc: unknown }) => i.loc)).toContainEqual(['body', 'name']);
      const r3 = await svc.post('/workflow/create/definition', { name: 'x' }, a);
      expect(r3.status).toBe(422);
      expect(r3.body.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'workflow_definition'], type: 'missing' }));
      const r4 = await svc.post('/workflow/create/definition', { name: 'x', workflow_definition: base(), workflow_configurations: [] }, a);
      expect(r4.status).toBe(422);
      expect(r4.body.detail.map((i: { loc: unknown }) => i.loc)).toContainEqual(['body', 'workflow_configurations']);
    });

    it('requires credentials', async () => {
      expect((await svc.post('/workflow/create/definition', { name: 'x', workflow_definition: base() })).status).toBe(401);
      expect((await svc.get('/workflow')).status).toBe(401);
    });
  });

  describe('definition validation through HTTP', () => {
    const accepted: [string, () => Def][] = [
      ['the documented example (confirm ⇄ reschedule cycle)', example],
      ['the minimal start → agent → end', base],
      ['a start node alone', () => ({ nodes: [node('s', 'startCall')], edges: [] })],
      ['a cycle of agents with a self-loop', () => {
        const d = base();
        d.nodes.push(node('b', 'agentNode'));
        d.edges.push(edge('e3', 'a', 'b'), edge('e4', 'b', 'a'), edge('e5', 'b', 'b'), edge('e6', 'b', 'end'));
        return d;
      }],
      ['one globalNode without edges and optional fields', () => {
        const d = base();
        d.nodes.push(node('g', 'globalNode'));
        d.nodes[1]!.data = { ...(d.nodes[1]!.data as object), extraction_enabled: true, extraction_variables: [{ name: 'x', type: 'number', prompt: 'p' }], editor_color: 'red' };
        d.nodes[0]!.position = { x: 1.5, y: -2 };
        return d;
      }],
      ['equal labels on edges of different sources', () => {
        const d = base();
        d.edges = [edge('e1', 'start', 'a', 'Next'), edge('e2', 'a', 'end', 'next')];
        return d;
      }],
    ];
    it.each(accepted)('accepts %s', async (_what, make) => {
      const r = await svc.post('/workflow/create/definition', { name: 'ok', workflow_definition: make() }, a);
      expect(r.status).toBe(200);
      expect(r.body.workflow_definition).toEqual(make());
    });

    const refused: [string, () => Def, (string | number)[], string][] = [
      ['no startCall node', () => ({ nodes: [node('x', 'endCall')], edges: [] }), ['nodes'], 'workflow.start_node_count'],
      ['a second startCall node', () => { const d = base(); d.nodes.push(node('s2', 'startCall')); return d; }, ['nodes', 3, 'type'], 'workflow.start_node_count'],
      ['an edge into the startCall node', () => { const d = base(); d.edges.push(edge('back', 'a', 'start')); return d; }, ['edges', 2, 'target'], 'workflow.start_node_incoming_edge'],
      ['an edge out of an endCall node', () => { const d = base(); d.edges.push(edge('out', 'end', 'a')); return d; }, ['edges', 2, 'source'], 'workflow.end_node_outgoing_edge'],
      ['an endCall node nothing leads to', () => { const d = base(); d.nodes.push(node('end2', 'endCall')); return d; }, ['nodes', 3], 'workflow.end_node_no_incoming_edge'],
      ['an agentNode nothing leads to', () => { const d = base(); d.nodes.push(node('lost', 'agentNode')); d.edges.push(edge('e9', 'lost', 'end')); return d; }, ['nodes', 3], 'workflow.agent_node_no_incoming_edge'],
      ['a second globalNode', () => { const d = base(); d.nodes.push(node('g1', 'globalNode'), node('g2', 'globalNode')); return d; }, ['nodes', 4, 'type'], 'workflow.global_node_count'],
      ['an edge out of the globalNode', () => { const d = base(); d.nodes.push(node('g', 'globalNode')); d.edges.push(edge('eg', 'g', 'a')); return d; }, ['edges', 2, 'source'], 'workflow.global_node_edge'],
      ['an edge into the globalNode', () => { const d = base(); d.nodes.push(node('g', 'globalNode')); d.edges.push(edge('eg', 'a', 'g')); return d; }, ['edges', 2, 'target'], 'workflow.global_node_edge'],
      ['an edge from a node that does not exist', () => { const d = base(); d.edges.push(edge('ghost', 'nowhere', 'end')); return d; }, ['edges', 2, 'source'], 'workflow.edge_source_missing'],
      ['an edge to a node that does not exist', () => { const d = base(); d.edges.push(edge('ghost', 'a', 'nowhere')); return d; }, ['edges', 2, 'target'], 'workflow.edge_target_missing'],
      ['a duplicate node id', () => { const d = base(); d.nodes.push(node('a', 'agentNode')); return d; }, ['nodes', 3, 'id'], 'workflow.node_id_duplicate'],
      ['a duplicate edge id', () => { const d = base(); d.edges.push(edge('e1', 'a', 'end', 'other')); return d; }, ['edges', 2, 'id'], 'workflow.edge_id_duplicate'],
      ['labels of one node equal after normalizing', () => {
        const d = base();
        d.nodes.push(node('end2', 'endCall'));
        d.edges.push(edge('e3', 'a', 'end2'));
        d.edges[1]!.data = { label: 'Yes!', condition: 'c' };
        d.edges[2]!.data = { label: 'yes?', condition: 'c' };
        return d;
      }, ['edges', 2, 'data', 'label'], 'workflow.edge_label_duplicate'],
      ['an unknown node type', () => { const d = base(); d.nodes[1]!.type = 'llmNode'; return d; }, ['nodes', 1, 'type'], 'enum'],
      ['a blank prompt', () => { const d = base(); (d.nodes[1]!.data as Record<string, unknown>).prompt = '  \n'; return d; }, ['nodes', 1, 'data', 'prompt'], 'string_pattern_mismatch'],
      ['a node without data.name', () => { const d = base(); delete (d.nodes[2]!.data as Record<string, unknown>).name; return d; }, ['nodes', 2, 'data', 'name'], 'missing'],
      ['a blank edge label', () => { const d = base(); (d.edges[0]!.data as Record<string, unknown>).label = ''; return d; }, ['edges', 0, 'data', 'label'], 'string_too_short'],
      ['a blank edge condition', () => { const d = base(); (d.edges[1]!.data as Record<string, unknown>).condition = ' '; return d; }, ['edges', 1, 'data', 'condition'], 'string_pattern_mismatch'],
      ['an extraction variable of an unknown type', () => {
        const d = base();
        (d.nodes[1]!.data as Record<string, unknown>).extraction_variables = [{ name: 'x', type: 'date', prompt: 'p' }];
        return d;
      }, ['nodes', 1, 'data', 'extraction_variables', 0, 'type'], 'enum'],
      ['edges that are not a list', () => ({ nodes: base().nodes, edges: {} as unknown as [] }), ['edges'], 'list_type'],
    ];
    it.each(refused)('refuses %s with 422 at the offending node or edge', async (_what, make, loc, type) => {
      const before = (await svc.get('/workflow', a)).body.workflows.length;
      const r = await svc.post('/workflow/create/definition', { name: 'bad', workflow_definition: make() }, a);
      expect(r.status).toBe(422);
      expect(r.body.detail).toContainEqual({ loc: [...P, ...loc], msg: expect.any(String), type });
      for (const issue of r.body.detail) expect(issue.msg.length).toBeGreaterThan(5);
      expect((await svc.get('/workflow', a)).body.workflows.length).toBe(before);
    });

    it('names the nodes involved in a graph message', async () => {
      const d = base();
      d.edges.push(edge('ghost', 'a', 'nowhere'));
      const r = await svc.post('/workflow/create/definition', { name: 'bad', workflow_definition: d }, a);
      expect(r.body.detail[0].msg).toMatch(/ghost.*nowhere/);
    });
  });

  describe('update and versions', () => {
    it('changes only the sent fields and keeps the version when the definition is not sent', async () => {
      const w = await create(a, { template_context_variables: { first_name: 'there' } });
      const r1 = await svc.put(`/workflow/${w.id}`, { name: 'Renamed' }, a);
      expect(r1.status).toBe(200);
      expect(r1.body).toEqual({ ...w, name: 'Renamed' });
      const r2 = await svc.put(`/workflow/${w.id}`, { workflow_configurations: { max_call_seconds: 120 } }, a);
      expect(r2.body).toEqual({ ...w, name: 'Renamed', workflow_configurations: { max_call_seconds: 120 } });
      const r3 = await svc.put(`/workflow/${w.id}`, { template_context_variables: {} }, a);
      expect(r3.body).toEqual({ ...w, name: 'Renamed', workflow_configurations: { max_call_seconds: 120 }, template_context_variables: {} });
      const r4 = await svc.put(`/workflow/${w.id}`, {}, a);
      expect(r4.body).toEqual(r3.body);
    });

    it('makes a new version per definition change; earlier ones stay readable and superseded', async () => {
      const w = await create(a);
      nowMs += 1000;
      const v2 = await svc.put(`/workflow/${w.id}`, { workflow_definition: base() }, a);
      expect(v2.status).toBe(200);
      expect(v2.body).toMatchObject({
        id: w.id, workflow_uuid: w.workflow_uuid, version_number: 2, version_status: 'published', workflow_definition: base(),
        call_disposition_codes: { disposition_codes: ['done'] },
      });
      expect(v2.body.current_definition_id).not.toBe(w.current_definition_id);
      const moved = base();
      moved.nodes[0]!.position = { x: 10, y: 20 };
      const v3 = await svc.put(`/workflow/${w.id}`, { workflow_definition: moved, name: 'v3' }, a);
      expect(v3.body).toMatchObject({ version_number: 3, name: 'v3' });

      const versions = await svc.get(`/workflow/${w.id}/versions`, a);
      expect(versions.status).toBe(200);
      expect(versions.body.workflow_id).toBe(w.id);
      expect(versions.body.versions.map((v: { version_number: number; version_status: string }) => [v.version_number, v.version_status]))
        .toEqual([[3, 'published'], [2, 'superseded'], [1, 'superseded']]);
      expect(versions.body.versions[2]).toEqual({
        id: w.current_definition_id, workflow_id: w.id, version_number: 1, version_status: 'superseded',
        workflow_definition: exampleWorkflowDefinition, created_at: w.created_at,
      });
      expect(versions.body.versions[0].id).toBe(v3.body.current_definition_id);
    });

    it('makes no version when the definition sent equals the current one (key order ignored)', async () => {
      const w = await create(a);
      const reordered = JSON.parse(JSON.stringify(example(), (_k, v) =>
        v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v));
      const r = await svc.put(`/workflow/${w.id}`, { workflow_definition: reordered }, a);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ version_number: 1, current_definition_id: w.current_definition_id });
      expect((await svc.get(`/workflow/${w.id}/versions`, a)).body.versions).toHaveLength(1);
    });

    it('validates the definition on every update and changes nothing when it is invalid', async () => {
      const w = await create(a);
      const d = base();
      d.edges.push(edge('out', 'end', 'a'));
      const r = await svc.put(`/workflow/${w.id}`, { name: 'should not stick', workflow_definition: d }, a);
      expect(r.status).toBe(422);
      expect(r.body.detail).toContainEqual(expect.objectContaining({ loc: [...P, 'edges', 2, 'source'], type: 'workflow.end_node_outgoing_edge' }));
      expect((await svc.get(`/workflow/${w.id}`, a)).body).toEqual(w);
      const nullDef = await svc.put(`/workflow/${w.id}`, { workflow_definition: null }, a);
      expect(nullDef.status).toBe(422);
    });

    it('answers 404 workflow_not_found for an absent workflow and 422 for a non-integer id', async () => {
      for (const r of [
        await svc.put('/workflow/999999', { name: 'x' }, a),
        await svc.get('/workflow/999999', a),
        await svc.get('/workflow/999999/versions', a),
        await svc.get('/workflow/999999/runs', a),
        await svc.put('/workflow/999999/status', { status: 'archived' }, a),
      ]) {
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ detail: expect.any(String), code: 'workflow_not_found' });
      }
      expect((await svc.get('/workflow/abc', a)).status).toBe(422);
    });
  });

  describe('archive and restore', () => {
    it('archives and restores, keeps history, filters lists by status, and gates calls', async () => {
      const w = await create(a);
      await svc.put(`/workflow/${w.id}`, { workflow_definition: base() }, a);
      const ensure = svc.container.get(EnsureWorkflowCanReceiveCalls);
      const ok = await ensure.execute(a.organizationId, w.id);
      expect(ok.workflow.id).toBe(w.id);
      expect(ok.definition).toMatchObject({ versionNumber: 2, status: 'published', definition: base() });

      const archived = await svc.put(`/workflow/${w.id}/status`, { status: 'archived' }, a);
      expect(archived.status).toBe(200);
      expect(archived.body).toMatchObject({ status: 'archived', version_number: 2, workflow_definition: base() });
      expect((await svc.put(`/workflow/${w.id}/status`, { status: 'archived' }, a)).body.status).toBe('archived');
      const active = (await svc.get('/workflow?status=active', a)).body.workflows.map((x: { id: number }) => x.id);
      const arch = (await svc.get('/workflow?status=archived', a)).body.workflows.map((x: { id: number }) => x.id);
      expect(active).not.toContain(w.id);
      expect(arch).toContain(w.id);
      expect((await svc.get('/workflow', a)).body.workflows.map((x: { id: number }) => x.id)).toContain(w.id);
      expect((await svc.get(`/workflow/${w.id}/versions`, a)).body.versions).toHaveLength(2);

      const refusal = await ensure.execute(a.organizationId, w.id).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(InputError);
      expect(refusal).toMatchObject({ code: 'workflow_archived' });
      expect(isWorkflowUnavailable(refusal)).toBe(true);
      expect(isWorkflowUnavailable(new ConflictError('workflow_archived'))).toBe(false);
      await expect(ensure.execute(b.organizationId, w.id)).rejects.toMatchObject({ code: 'workflow_not_found', kind: 'input' });
      await expect(ensure.execute(a.organizationId, 999_999)).rejects.toMatchObject({ code: 'workflow_not_found' });

      const restored = await svc.put(`/workflow/${w.id}/status`, { status: 'active' }, a);
      expect(restored.body.status).toBe('active');
      expect((await ensure.execute(a.organizationId, w.id)).workflow.status).toBe('active');
    });

    it('refuses any other status value with 422', async () => {
      const w = await create(a);
      for (const status of ['deleted', 'ACTIVE', '', 1]) {
        const r = await svc.put(`/workflow/${w.id}/status`, { status }, a);
        expect(r.status).toBe(422);
        expect(r.body.detail[0].loc).toEqual(['body', 'status']);
      }
      expect((await svc.put(`/workflow/${w.id}/status`, {}, a)).status).toBe(422);
      expect((await svc.get('/workflow?status=gone', a)).status).toBe(422);
    });
  });

  describe('runs', () => {
    it('shows a run with the spec 2.8 fields, its contexts, cost and status history', async () => {
      const w = await create(a);
      const run = await seedRun(a.organizationId, w, {
        name: 'Call to +15550001111', campaignId: 4, provider: 'simulator', callerNumber: '+15550000000', calledNumber: '+15550001111',
      });
      const repo = runs();
      await repo.applyStatus(a.organizationId, run.id, { status: 'in_progress', at: new Date(nowMs + 2000), log: { ts: 't1', event: 'answered' } });
      await repo.applyStatus(a.organizationId, run.id, {
        status: 'completed', disposition: 'appointment_confirmed', durationSeconds: 42, gatheredContext: { will_attend: true },
        costInfo: { service_token_usage: 900, charge_usd: 0.05 }, at: new Date(nowMs + 44_000),
      });
      await repo.attachArtifacts(a.organizationId, run.id, { annotations: { reviewed: true }, now: new Date(nowMs + 45_000) });

      const r = await svc.get(`/workflow/${w.id}/runs/${run.id}`, a);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({
        id: run.id, workflow_id: w.id, name: 'Call to +15550001111', mode: 'outbound', created_at: new Date(nowMs).toISOString(),
        is_completed: true, transcript_url: null, recording_url: null,
        cost_info: { call_duration_seconds: 42, service_token_usage: 900, charge_usd: 0.05 },
        definition_id: w.current_definition_id,
        initial_context: { first_name: 'Ada', caller_number: '+15550000000', called_number: '+15550001111' },
        gathered_context: { will_attend: true, mapped_call_disposition: 'appointment_confirmed' },
        logs: { entries: [{ ts: 't1', event: 'answered' }] }, annotations: { reviewed: true }, campaign_id: 4, status: 'completed',
        disposition: 'appointment_confirmed', duration_seconds: 42,
        started_at: new Date(nowMs + 2000).toISOString(), ended_at: new Date(nowMs + 44_000).toISOString(),
      });
      const wf = (await svc.get(`/workflow/${w.id}`, a)).body;
      expect(wf.total_runs).toBe(1);
      expect(wf.call_disposition_codes.disposition_codes).toEqual(['appointment_confirmed', 'appointment_rescheduled', 'wrong_number']);
    });

    it('lists disposition codes the calls produced beyond those declared', async () => {
      const w = await create(a);
      const run = await seedRun(a.organizationId, w);
      await runs().applyStatus(a.organizationId, run.id, { status: 'failed', disposition: 'busy', at: new Date(nowMs) });
      expect((await svc.get(`/workflow/${w.id}`, a)).body.call_disposition_codes.disposition_codes)
        .toEqual(['appointment_confirmed', 'appointment_rescheduled', 'busy', 'wrong_number']);
    });

    it('keeps the definition_id a run used after the workflow changes', async () => {
      const w = await create(a);
      const run = await seedRun(a.organizationId, w);
      const v2 = (await svc.put(`/workflow/${w.id}`, { workflow_definition: base() }, a)).body;
      const r = await svc.get(`/workflow/${w.id}/runs/${run.id}`, a);
      expect(r.body.definition_id).toBe(w.current_definition_id);
      expect(r.body.definition_id).not.toBe(v2.current_definition_id);
      expect(r.body.is_completed).toBe(false);
      expect(r.body.started_at).toBeNull();
    });

    it('pages runs newest first with totals', async () => {
      const w = await create(a);
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await seedRun(a.organizationId, w, { now: new Date(nowMs + i * 1000) })).id);
      const other = await create(a);
      await seedRun(a.organizationId, other);
      const p1 = await svc.get(`/workflow/${w.id}/runs?page=1&limit=2`, a);
      expect(p1.status).toBe(200);
      expect(p1.body).toMatchObject({ total_count: 5, page: 1, limit: 2, total_pages: 3 });
      expect(p1.body.runs.map((r: { id: number }) => r.id)).toEqual([ids[4], ids[3]]);
      const p3 = await svc.get(`/workflow/${w.id}/runs?page=3&limit=2`, a);
      expect(p3.body.runs.map((r: { id: number }) => r.id)).toEqual([ids[0]]);
      const def = await svc.get(`/workflow/${w.id}/runs`, a);
      expect(def.body).toMatchObject({ page: 1, limit: 50, total_count: 5, total_pages: 1 });
      expect((await svc.get(`/workflow/${w.id}/runs?page=9`, a)).body).toMatchObject({ runs: [], total_count: 5 });
      for (const q of ['page=0', 'limit=0', 'limit=101', 'page=x']) {
        expect((await svc.get(`/workflow/${w.id}/runs?${q}`, a)).status).toBe(422);
      }
      const empty = await svc.get(`/workflow/${(await create(a)).id}/runs`, a);
      expect(empty.body).toEqual({ runs: [], total_count: 0, page: 1, limit: 50, total_pages: 0 });
    });

    it('answers 404 run_not_found for a run of another workflow or an absent run', async () => {
      const w1 = await create(a);
      const w2 = await create(a);
      const run = await seedRun(a.organizationId, w1);
      for (const path of [`/workflow/${w2.id}/runs/${run.id}`, `/workflow/${w1.id}/runs/${run.id + 10_000}`, `/workflow/999999/runs/${run.id}`]) {
        const r = await svc.get(path, a);
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ detail: expect.any(String), code: 'run_not_found' });
      }
    });
  });

  describe('signed artifact downloads', () => {
    it('serves transcript and recording through signed URLs and refuses tampered or expired ones', async () => {
      const w = await create(a);
      const run = await seedRun(a.organizationId, w);
      const store = svc.container.get<ObjectStore>(ObjectStore);
      const transcriptKey = `runs/${a.organizationId}/${run.id}/transcript.json`;
      const recordingKey = `runs/${a.organizationId}/${run.id}/recording.wav`;
      const transcript = JSON.stringify([{ role: 'agent', text: 'Hi, this is Ava' }]);
      const audio = Buffer.from([0x52, 0x49, 0x46, 0x46, 0, 1, 2, 3, 255]);
      await store.put(transcriptKey, transcript, { contentType: 'application/json' });
      await store.put(recordingKey, audio, { contentType: 'audio/wav' });
      await runs().attachArtifacts(a.organizationId, run.id, { transcriptKey, recordingKey, now: new Date(nowMs) });

      const r = await svc.get(`/workflow/${w.id}/runs/${run.id}`, a);
      const { transcript_url: tUrl, recording_url: rUrl } = r.body as { transcript_url: string; recording_url: string };
      const expires = Number(new URL(tUrl).searchParams.get('expires'));
      expect(expires - Math.floor(nowMs / 1000)).toBe(3600);
      const local = (u: string) => { const x = new URL(u); return x.pathname + x.search; };
      expect(local(tUrl)).toMatch(new RegExp(`^/api/v1/files/runs/${a.organizationId}/${run.id}/transcript\\.json\\?`));

      const got = await svc.request('GET', local(tUrl));
      expect(got.status).toBe(200);
      expect(got.headers.get('content-type')).toMatch(/^application\/json/);
      expect(got.text).toBe(transcript);
      const rec = await fetch(svc.url + local(rUrl));
      expect(rec.status).toBe(200);
      expect(rec.headers.get('content-type')).toBe('audio/wav');
      expect(Buffer.from(await rec.arrayBuffer())).toEqual(audio);

      const u = new URL(tUrl);
      const sig = u.searchParams.get('signature')!;
      const flipped = sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0');
      const tampered = [
        `${u.pathname}?expires=${expires}&signature=${flipped}`,
        `${u.pathname}?expires=${expires + 3600}&signature=${sig}`,
        `${u.pathname.replace('transcript.json', 'recording.wav')}?expires=${expires}&signature=${sig}`,
        `/api/v1/files/runs/${b.organizationId}/1/transcript.json?expires=${expires}&signature=${sig}`,
        `${u.pathname}?expires=${expires}`,
        `${u.pathname}`,
        `${u.pathname}?expires=soon&signature=${sig}`,
      ];
      for (const path of tampered) {
        const t = await svc.request('GET', path);
        expect([path, t.status, t.body?.code]).toEqual([path, 403, 'signature_invalid']);
      }

      // a valid link to an object that is gone: 404
      await store.delete(recordingKey);
      const gone = await svc.request('GET', local(rUrl));
      expect(gone.status).toBe(404);
      expect(gone.body.code).toBe('file_not_found');

      // an hour and a second later the link has expired
      nowMs += 3601_000;
      const expired = await svc.request('GET', local(tUrl));
      expect(expired.status).toBe(403);
      expect(expired.body.code).toBe('signature_invalid');
      // a fresh read signs a fresh link
      const fresh = (await svc.get(`/workflow/${w.id}/runs/${run.id}`, a)).body.transcript_url as string;
      expect((await svc.request('GET', local(fresh))).text).toBe(transcript);
    });
  });

  describe('tenant isolation', () => {
    it('answers 404 across organizations and never lists another organization\'s records', async () => {
      const w = await create(a);
      const run = await seedRun(a.organizationId, w);
      const bw = await create(b);
      for (const r of [
        await svc.get(`/workflow/${w.id}`, b),
        await svc.put(`/workflow/${w.id}`, { name: 'hijack' }, b),
        await svc.put(`/workflow/${w.id}/status`, { status: 'archived' }, b),
        await svc.get(`/workflow/${w.id}/versions`, b),
        await svc.get(`/workflow/${w.id}/runs`, b),
      ]) {
        expect(r.status).toBe(404);
        expect(r.body.code).toBe('workflow_not_found');
      }
      const foreignRun = await svc.get(`/workflow/${w.id}/runs/${run.id}`, b);
      expect(foreignRun.status).toBe(404);
      expect(foreignRun.body.code).toBe('run_not_found');
      expect((await svc.get(`/workflow/${bw.id}/runs/${run.id}`, b)).status).toBe(404);
      const listB = (await svc.get('/workflow', b)).body.workflows.map((x: { id: number }) => x.id);
      expect(listB).toContain(bw.id);
      expect(listB).not.toContain(w.id);
      expect((await svc.get('/workflow', a)).body.workflows.map((x: { id: number }) => x.id)).not.toContain(bw.id);
      const unchanged = (await svc.get(`/workflow/${w.id}`, a)).body;
      expect(unchanged).toMatchObject({ name: 'Dental reminder', status: 'active', total_runs: 1 });
    });
  });
});
