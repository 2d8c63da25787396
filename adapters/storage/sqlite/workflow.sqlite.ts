import type { WorkflowRepository } from '../../../core/ports/workflow.repository.port.js';
import type { WorkflowDefinition } from '../../../core/workflows/workflow-definition.js';
import type { VersionStatus, Workflow, WorkflowDefinitionVersion, WorkflowStatus } from '../../../core/workflows/workflow.js';
import { fromMs, toMs, type SqliteDatabase } from './database.js';

export interface WorkflowRow {
  id: number;
  organization_id: number;
  name: string;
  status: string;
  workflow_uuid: string;
  template_context_variables: string;
  workflow_configurations: string;
  current_definition_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface WorkflowDefinitionRow {
  id: number;
  organization_id: number;
  workflow_id: number;
  version_number: number;
  status: string;
  definition: string;
  created_at: number;
}

export const workflowFromRow = (r: WorkflowRow): Workflow => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  status: r.status as WorkflowStatus,
  workflowUuid: r.workflow_uuid,
  templateContextVariables: JSON.parse(r.template_context_variables) as Record<string, unknown>,
  workflowConfigurations: JSON.parse(r.workflow_configurations) as Record<string, unknown>,
  // never null once `create` returns: the row and its first definition are written in one transaction
  currentDefinitionId: r.current_definition_id ?? 0,
  createdAt: fromMs(r.created_at),
  updatedAt: fromMs(r.updated_at),
});

export const workflowDefinitionFromRow = (r: WorkflowDefinitionRow): WorkflowDefinitionVersion => ({
  id: r.id,
  organizationId: r.organization_id,
  workflowId: r.workflow_id,
  versionNumber: r.version_number,
  status: r.status as VersionStatus,
  definition: JSON.parse(r.definition) as WorkflowDefinition,
  createdAt: fromMs(r.created_at),
});

/**
 * WorkflowRepository on SQLite. A workflow and its definition versions change together inside IMMEDIATE
 * transactions, so two processes updating one workflow at once each get their own version number and exactly
 * one version stays `published`.
 */
export class SqliteWorkflowRepository implements WorkflowRepository {
  private readonly q;

  constructor(private readonly db: SqliteDatabase) {
    this.q = {
      insertWorkflow: db.prepare<[number, string, string, string, string, number, number], WorkflowRow>(
        `INSERT INTO workflows (organization_id, name, status, workflow_uuid, template_context_variables, workflow_configurations, created_at, updated_at)
         VALUES (?, ?, 'active', ?, ?, ?, ?, ?) RETURNING *`),
      insertDefinition: db.prepare<[number, number, number, string, number], WorkflowDefinitionRow>(
        `INSERT INTO workflow_definitions (organization_id, workflow_id, version_number, status, definition, created_at)
         VALUES (?, ?, ?, 'published', ?, ?) RETURNING *`),
      supersedeOthers: db.prepare<[number, number, number]>(
        `UPDATE workflow_definitions SET status = 'superseded'
         WHERE organization_id = ? AND workflow_id = ? AND id <> ? AND status <> 'superseded'`),
      maxVersion: db.prepare<[number, number], { v: number | null }>(
        'SELECT MAX(version_number) AS v FROM workflow_definitions WHERE organization_id = ? AND workflow_id = ?'),
      get: db.prepare<[number, number], WorkflowRow>('SELECT * FROM workflows WHERE organization_id = ? AND id = ?'),
      list: db.prepare<[number], WorkflowRow>('SELECT * FROM workflows WHERE organization_id = ? ORDER BY created_at DESC, id DESC'),
      listByStatus: db.prepare<[number, string], WorkflowRow>(
        'SELECT * FROM workflows WHERE organization_id = ? AND status = ? ORDER BY created_at DESC, id DESC'),
      getDefinition: db.prepare<[number, number, number], WorkflowDefinitionRow>(
        'SELECT * FROM workflow_definitions WHERE organization_id = ? AND workflow_id = ? AND id = ?'),
      listDefinitions: db.prepare<[number, number], WorkflowDefinitionRow>(
        'SELECT * FROM workflow_definitions WHERE organization_id = ? AND workflow_id = ? ORDER BY version_number DESC'),
    };
  }

  async create(organizationId: number, input: Parameters<WorkflowRepository['create']>[1]) {
    const now = toMs(input.now);
    const tx = this.db.transaction(() => {
      const w = this.q.insertWorkflow.get(
        organizationId, input.name, input.workflowUuid,
        JSON.stringify(input.templateContextVariables), JSON.stringify(input.workflowConfigurations), now, now,
      )!;
      const d = this.q.insertDefinition.get(organizationId, w.id, 1, JSON.stringify(input.definition), now)!;
      const row = this.db.prepare<[number, number], WorkflowRow>(
        'UPDATE workflows SET current_definition_id = ? WHERE id = ? RETURNING *').get(d.id, w.id)!;
      return { workflow: workflowFromRow(row), current: workflowDefinitionFromRow(d) };
    });
    return tx.immediate();
  }

  async get(organizationId: number, workflowId: number) {
    const r = this.q.get.get(organizationId, workflowId);
    return r ? workflowFromRow(r) : null;
  }

  async getMany(organizationId: number, workflowIds: number[]) {
    const ids = [...new Set(workflowIds.filter((id) => Number.isSafeInteger(id)))];
    if (ids.length === 0) return [];
    const out: Workflow[] = [];
    // bounded chunks keep under SQLite's host-parameter limit
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rows = this.db
        .prepare<number[], WorkflowRow>(
          `SELECT * FROM workflows WHERE organization_id = ? AND id IN (${chunk.map(() => '?').join(',')}) ORDER BY id`)
        .all(organizationId, ...chunk);
      out.push(...rows.map(workflowFromRow));
    }
    return out;
  }

  async list(organizationId: number, filter: { status?: WorkflowStatus } = {}) {
    const rows = filter.status ? this.q.listByStatus.all(organizationId, filter.status) : this.q.list.all(organizationId);
    return rows.map(workflowFromRow);
  }

  async update(organizationId: number, workflowId: number, patch: Parameters<WorkflowRepository['update']>[2]) {
    const now = toMs(patch.now);
    const tx = this.db.transaction((): Workflow | null => {
      const current = this.q.get.get(organizationId, workflowId);
      if (!current) return null;
      const sets: string[] = ['updated_at = @now'];
      const values: Record<string, unknown> = { now, org: organizationId, id: workflowId };
      if (patch.name !== undefined) {
        sets.push('name = @name');
        values.name = patch.name;
      }
      if (patch.status !== undefined) {
        sets.push('status = @status');
        values.status = patch.status;
      }
      if (patch.templateContextVariables !== undefined) {
        sets.push('template_context_variables = @tcv');
        values.tcv = JSON.stringify(patch.templateContextVariables);
      }
      if (patch.workflowConfigurations !== undefined) {
        sets.push('workflow_configurations = @wc');
        values.wc = JSON.stringify(patch.workflowConfigurations);
      }
      if (patch.definition !== undefined) {
        const next = (this.q.maxVersion.get(organizationId, workflowId)?.v ?? 0) + 1;
        const d = this.q.insertDefinition.get(organizationId, workflowId, next, JSON.stringify(patch.definition), now)!;
        this.q.supersedeOthers.run(organizationId, workflowId, d.id);
        sets.push('current_definition_id = @def');
        values.def = d.id;
      }
      const row = this.db
        .prepare<Record<string, unknown>, WorkflowRow>(
          `UPDATE workflows SET ${sets.join(', ')} WHERE organization_id = @org AND id = @id RETURNING *`)
        .get(values)!;
      return workflowFromRow(row);
    });
    return tx.immediate();
  }

  async getDefinition(organizationId: number, workflowId: number, definitionId: number) {
    const r = this.q.getDefinition.get(organizationId, workflowId, definitionId);
    return r ? workflowDefinitionFromRow(r) : null;
  }

  async listDefinitions(organizationId: number, workflowId: number) {
    return this.q.listDefinitions.all(organizationId, workflowId).map(workflowDefinitionFromRow);
  }
}
