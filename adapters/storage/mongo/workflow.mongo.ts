import type { Db } from 'mongodb';
import type { WorkflowRepository } from '../../../core/ports/workflow.repository.port.js';
import type { WorkflowDefinition } from '../../../core/workflows/workflow-definition.js';
import type { VersionStatus, Workflow, WorkflowDefinitionVersion, WorkflowStatus } from '../../../core/workflows/workflow.js';
import { fromJsonText, nextId, toJsonText } from './mongo-database.js';
import { Collections } from './mongo-schema.js';

export interface WorkflowDocument {
  _id: number;
  organizationId: number;
  name: string;
  status: WorkflowStatus;
  workflowUuid: string;
  templateContextVariablesJson: string;
  workflowConfigurationsJson: string;
  currentDefinitionId: number;
  /** Version number of `currentDefinitionId`: a newer version only ever replaces an older one. */
  currentVersionNumber: number;
  /** Highest version number handed out (reserved with `$inc` before its definition is written). */
  lastVersionNumber: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface WorkflowDefinitionDocument {
  _id: number;
  organizationId: number;
  workflowId: number;
  versionNumber: number;
  status: VersionStatus;
  definitionJson: string;
  createdAt: Date;
}

export const workflowToDocument = (w: Workflow, versions: { current: number; last: number }): WorkflowDocument => ({
  _id: w.id,
  organizationId: w.organizationId,
  name: w.name,
  status: w.status,
  workflowUuid: w.workflowUuid,
  templateContextVariablesJson: toJsonText(w.templateContextVariables),
  workflowConfigurationsJson: toJsonText(w.workflowConfigurations),
  currentDefinitionId: w.currentDefinitionId,
  currentVersionNumber: versions.current,
  lastVersionNumber: versions.last,
  createdAt: new Date(w.createdAt),
  updatedAt: new Date(w.updatedAt),
});

export const workflowFromDocument = (d: WorkflowDocument): Workflow => ({
  id: d._id,
  organizationId: d.organizationId,
  name: d.name,
  status: d.status,
  workflowUuid: d.workflowUuid,
  templateContextVariables: fromJsonText<Record<string, unknown>>(d.templateContextVariablesJson, {}),
  workflowConfigurations: fromJsonText<Record<string, unknown>>(d.workflowConfigurationsJson, {}),
  currentDefinitionId: d.currentDefinitionId,
  createdAt: new Date(d.createdAt),
  updatedAt: new Date(d.updatedAt),
});

export const workflowDefinitionToDocument = (v: WorkflowDefinitionVersion): WorkflowDefinitionDocument => ({
  _id: v.id,
  organizationId: v.organizationId,
  workflowId: v.workflowId,
  versionNumber: v.versionNumber,
  status: v.status,
  definitionJson: toJsonText(v.definition),
  createdAt: new Date(v.createdAt),
});

export const workflowDefinitionFromDocument = (d: WorkflowDefinitionDocument): WorkflowDefinitionVersion => ({
  id: d._id,
  organizationId: d.organizationId,
  workflowId: d.workflowId,
  versionNumber: d.versionNumber,
  status: d.status,
  definition: fromJsonText<WorkflowDefinition>(d.definitionJson, { nodes: [], edges: [] } as unknown as WorkflowDefinition),
  createdAt: new Date(d.createdAt),
});

/**
 * WorkflowRepository on MongoDB, without multi-document transactions.
 *
 * - create: the definition (version 1) is inserted first, then the workflow pointing at it, so a workflow is never
 *   visible without its current definition; if the workflow insert fails the definition is deleted again.
 * - a definition change: (1) one `$inc` on the workflow reserves the next version number `n` (and applies the
 *   other sent fields); (2) the definition `n` is inserted `published`; (3) the workflow is pointed at it only if
 *   its current version is below `n` (a conditional single-document update); (4) if that succeeded, every older
 *   `published` version of the workflow is marked `superseded`; if it did not (a newer version won meanwhile),
 *   version `n` itself is marked `superseded`. So version numbers never repeat, the workflow always points at the
 *   highest version written, and once the concurrent writers finish exactly one version is `published` (for a
 *   moment between steps two may be).
 */
export class MongoWorkflowRepository implements WorkflowRepository {
  private readonly workflows;
  private readonly definitions;

  constructor(private readonly db: Db) {
    this.workflows = db.collection<WorkflowDocument>(Collections.workflows);
    this.definitions = db.collection<WorkflowDefinitionDocument>(Collections.workflowDefinitions);
  }

  async create(organizationId: number, input: Parameters<WorkflowRepository['create']>[1]) {
    const workflowId = await nextId(this.db, Collections.workflows);
    const current: WorkflowDefinitionVersion = {
      id: await nextId(this.db, Collections.workflowDefinitions), organizationId, workflowId, versionNumber: 1, status: 'published',
      definition: input.definition, createdAt: input.now,
    };
    const workflow: Workflow = {
      id: workflowId, organizationId, name: input.name, status: 'active', workflowUuid: input.workflowUuid,
      templateContextVariables: input.templateContextVariables, workflowConfigurations: input.workflowConfigurations,
      currentDefinitionId: current.id, createdAt: input.now, updatedAt: input.now,
    };
    const definitionDoc = workflowDefinitionToDocument(current);
    const workflowDoc = workflowToDocument(workflow, { current: 1, last: 1 });
    await this.definitions.insertOne(definitionDoc);
    try {
      await this.workflows.insertOne(workflowDoc);
    } catch (e) {
      await this.definitions.deleteOne({ _id: current.id });
      throw e;
    }
    return { workflow: workflowFromDocument(workflowDoc), current: workflowDefinitionFromDocument(definitionDoc) };
  }

  async get(organizationId: number, workflowId: number) {
    const d = await this.workflows.findOne({ _id: workflowId, organizationId });
    return d ? workflowFromDocument(d) : null;
  }

  async getMany(organizationId: number, workflowIds: number[]) {
    const ids = [...new Set(workflowIds.filter((id) => Number.isSafeInteger(id)))];
    if (ids.length === 0) return [];
    return (await this.workflows.find({ organizationId, _id: { $in: ids } }).sort({ _id: 1 }).toArray()).map(workflowFromDocument);
  }

  async list(organizationId: number, filter: { status?: WorkflowStatus } = {}) {
    const query = filter.status ? { organizationId, status: filter.status } : { organizationId };
    return (await this.workflows.find(query).sort({ createdAt: -1, _id: -1 }).toArray()).map(workflowFromDocument);
  }

  async update(organizationId: number, workflowId: number, patch: Parameters<WorkflowRepository['update']>[2]) {
    const set: Partial<WorkflowDocument> = { updatedAt: patch.now };
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.status !== undefined) set.status = patch.status;
    if (patch.templateContextVariables !== undefined) set.templateContextVariablesJson = toJsonText(patch.templateContextVariables);
    if (patch.workflowConfigurations !== undefined) set.workflowConfigurationsJson = toJsonText(patch.workflowConfigurations);
    const scope = { _id: workflowId, organizationId };

    if (patch.definition === undefined) {
      const d = await this.workflows.findOneAndUpdate(scope, { $set: set }, { returnDocument: 'after' });
      return d ? workflowFromDocument(d) : null;
    }

    const reserved = await this.workflows.findOneAndUpdate(scope, { $set: set, $inc: { lastVersionNumber: 1 } }, { returnDocument: 'after' });
    if (!reserved) return null;
    const versionNumber = reserved.lastVersionNumber;
    const definitionId = await nextId(this.db, Collections.workflowDefinitions);
    await this.definitions.insertOne(workflowDefinitionToDocument({
      id: definitionId, organizationId, workflowId, versionNumber, status: 'published', definition: patch.definition, createdAt: patch.now,
    }));
    const pointed = await this.workflows.findOneAndUpdate(
      { ...scope, currentVersionNumber: { $lt: versionNumber } },
      { $set: { currentDefinitionId: definitionId, currentVersionNumber: versionNumber } },
      { returnDocument: 'after' },
    );
    if (pointed) {
      await this.definitions.updateMany(
        { organizationId, workflowId, versionNumber: { $lt: versionNumber }, status: 'published' },
        { $set: { status: 'superseded' } },
      );
      return workflowFromDocument(pointed);
    }
    await this.definitions.updateOne({ _id: definitionId }, { $set: { status: 'superseded' } });
    const latest = await this.workflows.findOne(scope);
    return latest ? workflowFromDocument(latest) : null;
  }

  async getDefinition(organizationId: number, workflowId: number, definitionId: number) {
    const d = await this.definitions.findOne({ _id: definitionId, organizationId, workflowId });
    return d ? workflowDefinitionFromDocument(d) : null;
  }

  async listDefinitions(organizationId: number, workflowId: number) {
    return (await this.definitions.find({ organizationId, workflowId }).sort({ versionNumber: -1 }).toArray()).map(workflowDefinitionFromDocument);
  }
}
