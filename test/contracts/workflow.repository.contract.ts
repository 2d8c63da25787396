import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';
import type { WorkflowDefinition } from '../../core/workflows/workflow-definition.js';

export interface WorkflowRepositoryHarness {
  repo: WorkflowRepository;
  /** Creates an organization in the same store and returns its id (stores that check references need one). */
  newOrganization(name: string): Promise<number>;
  cleanup(): Promise<void>;
}

const tiny = (prompt: string): WorkflowDefinition => ({
  nodes: [{ id: 'start', type: 'startCall', data: { name: 'Start', prompt } }],
  edges: [],
});

/**
 * The WorkflowRepository contract every storage adapter runs (SQLite always; MongoDB where reachable).
 * `make` returns a fresh, empty store for each test.
 */
export function runWorkflowRepositoryContract(label: string, make: () => Promise<WorkflowRepositoryHarness>): void {
  describe(`WorkflowRepository contract: ${label}`, () => {
    let h: WorkflowRepositoryHarness;
    let orgA: number;
    let orgB: number;
    const t0 = new Date('2026-01-02T03:04:05.678Z');
    const at = (s: number) => new Date(t0.getTime() + s * 1000);
    let uuidN = 0;
    beforeEach(async () => {
      h = await make();
      orgA = await h.newOrganization('Org A');
      orgB = await h.newOrganization('Org B');
    });
    afterEach(async () => {
      await h.cleanup();
    });
    const create = (org: number, name = 'Agent', now = t0, definition: WorkflowDefinition = structuredClone(exampleWorkflowDefinition)) =>
      h.repo.create(org, {
        name, workflowUuid: `00000000-0000-4000-8000-${String(++uuidN).padStart(12, '0')}`, definition,
        templateContextVariables: { first_name: 'Ada' }, workflowConfigurations: { voice: 'alloy' }, now,
      });

    it('creates a workflow with its published version 1 and reads both back', async () => {
      const { workflow, current } = await create(orgA);
      expect(workflow).toEqual({
        id: expect.any(Number), organizationId: orgA, name: 'Agent', status: 'active', workflowUuid: expect.stringMatching(/^0{8}-/),
        templateContextVariables: { first_name: 'Ada' }, workflowConfigurations: { voice: 'alloy' },
        currentDefinitionId: current.id, createdAt: t0, updatedAt: t0,
      });
      expect(current).toEqual({
        id: expect.any(Number), organizationId: orgA, workflowId: workflow.id, versionNumber: 1, status: 'published',
        definition: exampleWorkflowDefinition, createdAt: t0,
      });
      expect(await h.repo.get(orgA, workflow.id)).toEqual(workflow);
      expect(await h.repo.getDefinition(orgA, workflow.id, current.id)).toEqual(current);
      expect(await h.repo.listDefinitions(orgA, workflow.id)).toEqual([current]);
    });

    it('returns null / empty for absent ids', async () => {
      const { workflow, current } = await create(orgA);
      expect(await h.repo.get(orgA, workflow.id + 1000)).toBeNull();
      expect(await h.repo.getDefinition(orgA, workflow.id, current.id + 1000)).toBeNull();
      expect(await h.repo.listDefinitions(orgA, workflow.id + 1000)).toEqual([]);
      expect(await h.repo.update(orgA, workflow.id + 1000, { name: 'x', now: t0 })).toBeNull();
      expect(await h.repo.getMany(orgA, [])).toEqual([]);
    });

    it('lists newest first, filters by status, and getMany leaves missing ids out', async () => {
      const w1 = (await create(orgA, 'one', at(1))).workflow;
      const w2 = (await create(orgA, 'two', at(2))).workflow;
      const w3 = (await create(orgA, 'three', at(2))).workflow; // same instant: higher id first
      await h.repo.update(orgA, w2.id, { status: 'archived', now: at(3) });
      expect((await h.repo.list(orgA)).map((w) => w.name)).toEqual(['three', 'two', 'one']);
      expect((await h.repo.list(orgA, { status: 'active' })).map((w) => w.id)).toEqual([w3.id, w1.id]);
      expect((await h.repo.list(orgA, { status: 'archived' })).map((w) => w.id)).toEqual([w2.id]);
      expect((await h.repo.list(orgA, {})).length).toBe(3);
      const many = await h.repo.getMany(orgA, [w3.id, w1.id, 999_999, w1.id]);
      expect(many.map((w) => w.id).sort((a, b) => a - b)).toEqual([w1.id, w3.id]);
    });

    it('changes only the fields sent', async () => {
      const { workflow, current } = await create(orgA);
      const renamed = await h.repo.update(orgA, workflow.id, { name: 'Renamed', now: at(10) });
      expect(renamed).toEqual({ ...workflow, name: 'Renamed', updatedAt: at(10) });
      const configured = await h.repo.update(orgA, workflow.id, { workflowConfigurations: { max_call_seconds: 300 }, now: at(11) });
      expect(configured).toEqual({ ...workflow, name: 'Renamed', workflowConfigurations: { max_call_seconds: 300 }, updatedAt: at(11) });
      const vars = await h.repo.update(orgA, workflow.id, { templateContextVariables: {}, now: at(12) });
      expect(vars!.templateContextVariables).toEqual({});
      expect(vars!.workflowConfigurations).toEqual({ max_call_seconds: 300 });
      expect(vars!.currentDefinitionId).toBe(current.id);
      expect(await h.repo.listDefinitions(orgA, workflow.id)).toHaveLength(1);
    });

    it('stores each definition change as the next version and supersedes the earlier ones', async () => {
      const { workflow, current: v1 } = await create(orgA);
      const afterV2 = await h.repo.update(orgA, workflow.id, { definition: tiny('second'), now: at(1) });
      const afterV3 = await h.repo.update(orgA, workflow.id, { definition: tiny('third'), name: 'Three', now: at(2) });
      expect(afterV3!.name).toBe('Three');
      expect(afterV3!.workflowUuid).toBe(workflow.workflowUuid);
      const versions = await h.repo.listDefinitions(orgA, workflow.id);
      expect(versions.map((v) => [v.versionNumber, v.status])).toEqual([[3, 'published'], [2, 'superseded'], [1, 'superseded']]);
      expect(versions[0]!.id).toBe(afterV3!.currentDefinitionId);
      expect(versions[1]!.id).toBe(afterV2!.currentDefinitionId);
      expect(versions[0]!.definition.nodes[0]!.data.prompt).toBe('third');
      expect(versions[0]!.createdAt).toEqual(at(2));
      const old = await h.repo.getDefinition(orgA, workflow.id, v1.id);
      expect(old).toEqual({ ...v1, status: 'superseded' });
      expect(new Set(versions.map((v) => v.id)).size).toBe(3);
    });

    it('archives and restores without touching the definition', async () => {
      const { workflow } = await create(orgA);
      const archived = await h.repo.update(orgA, workflow.id, { status: 'archived', now: at(1) });
      expect(archived).toEqual({ ...workflow, status: 'archived', updatedAt: at(1) });
      const restored = await h.repo.update(orgA, workflow.id, { status: 'active', now: at(2) });
      expect(restored!.status).toBe('active');
      expect(await h.repo.listDefinitions(orgA, workflow.id)).toHaveLength(1);
    });

    it('isolates organizations', async () => {
      const { workflow, current } = await create(orgA);
      const other = (await create(orgB, 'B agent')).workflow;
      expect(await h.repo.get(orgB, workflow.id)).toBeNull();
      expect(await h.repo.getMany(orgB, [workflow.id])).toEqual([]);
      expect((await h.repo.list(orgB)).map((w) => w.id)).toEqual([other.id]);
      expect(await h.repo.getDefinition(orgB, workflow.id, current.id)).toBeNull();
      expect(await h.repo.listDefinitions(orgB, workflow.id)).toEqual([]);
      expect(await h.repo.update(orgB, workflow.id, { name: 'hijack', definition: tiny('x'), status: 'archived', now: at(1) })).toBeNull();
      expect(await h.repo.get(orgA, workflow.id)).toEqual(workflow);
      expect(await h.repo.listDefinitions(orgA, workflow.id)).toHaveLength(1);
    });

    it('keeps version numbers distinct under concurrent definition changes', async () => {
      const { workflow } = await create(orgA);
      await Promise.all([1, 2, 3, 4].map((i) => h.repo.update(orgA, workflow.id, { definition: tiny(`v${i}`), now: at(i) })));
      const versions = await h.repo.listDefinitions(orgA, workflow.id);
      expect(versions.map((v) => v.versionNumber)).toEqual([5, 4, 3, 2, 1]);
      expect(versions.filter((v) => v.status === 'published')).toHaveLength(1);
      expect((await h.repo.get(orgA, workflow.id))!.currentDefinitionId).toBe(versions[0]!.id);
    });
  });
}
