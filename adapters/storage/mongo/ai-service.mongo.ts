import type { Db } from 'mongodb';
import type { AiService } from '../../../core/ai-services/ai-service.js';
import { ConflictError } from '../../../core/errors.js';
import type { AiServicePatch, AiServiceRepository, NewAiService } from '../../../core/ports/ai-service.repository.port.js';
import { fromJsonText, isDuplicateKey, nextId, toJsonText } from './mongo-database.js';
import { Collections, Indexes } from './mongo-schema.js';

export interface AiServiceDocument {
  _id: number;
  organizationId: number;
  name: string;
  /** `name` lower-cased (Unicode-aware, as SQLite's name_key): unique per organization. */
  nameKey: string;
  provider: string;
  secretsKeyId: string;
  /** JSON text, so credential field names never meet MongoDB's rules on keys (`$`, `.`). */
  settingsJson: string;
  secretsJson: string;
  createdAt: Date;
  updatedAt: Date;
}

/** The case-insensitive uniqueness key of a service name (the same as the SQLite adapter's). */
export const aiServiceNameKey = (name: string): string => name.toLowerCase();

export const aiServiceToDocument = (s: AiService): AiServiceDocument => ({
  _id: s.id,
  organizationId: s.organizationId,
  name: s.name,
  nameKey: aiServiceNameKey(s.name),
  provider: s.provider,
  secretsKeyId: s.secretsKeyId,
  settingsJson: toJsonText(s.settings),
  secretsJson: toJsonText(s.secrets),
  createdAt: new Date(s.createdAt),
  updatedAt: new Date(s.updatedAt),
});

export const aiServiceFromDocument = (d: AiServiceDocument): AiService => ({
  id: d._id,
  organizationId: d.organizationId,
  name: d.name,
  provider: d.provider,
  secretsKeyId: d.secretsKeyId,
  settings: fromJsonText<Record<string, unknown>>(d.settingsJson, {}),
  secrets: fromJsonText<Record<string, string>>(d.secretsJson, {}),
  createdAt: new Date(d.createdAt),
  updatedAt: new Date(d.updatedAt),
});

const nameTaken = () => new ConflictError('ai_service_name_taken', 'An AI service with this name already exists');

/** AiServiceRepository on MongoDB: single-document writes; the unique (organizationId, nameKey) index decides name races. */
export class MongoAiServiceRepository implements AiServiceRepository {
  private readonly services;

  constructor(private readonly db: Db) {
    this.services = db.collection<AiServiceDocument>(Collections.aiServices);
  }

  async create(organizationId: number, input: NewAiService): Promise<AiService> {
    const doc = aiServiceToDocument({
      id: await nextId(this.db, Collections.aiServices), organizationId, name: input.name, provider: input.provider,
      secretsKeyId: input.secretsKeyId, settings: input.settings, secrets: input.secrets, createdAt: input.now, updatedAt: input.now,
    });
    try {
      await this.services.insertOne(doc);
    } catch (e) {
      if (isDuplicateKey(e, Indexes.aiServicesName)) throw nameTaken();
      throw e;
    }
    return aiServiceFromDocument(doc);
  }

  async get(organizationId: number, id: number): Promise<AiService | null> {
    const d = await this.services.findOne({ _id: id, organizationId });
    return d ? aiServiceFromDocument(d) : null;
  }

  async list(organizationId: number): Promise<AiService[]> {
    return (await this.services.find({ organizationId }).sort({ createdAt: 1, _id: 1 }).toArray()).map(aiServiceFromDocument);
  }

  async update(organizationId: number, id: number, patch: AiServicePatch): Promise<AiService | null> {
    const set: Partial<AiServiceDocument> = { updatedAt: patch.now };
    if (patch.name !== undefined) {
      set.name = patch.name;
      set.nameKey = aiServiceNameKey(patch.name);
    }
    if (patch.settings !== undefined) set.settingsJson = toJsonText(patch.settings);
    if (patch.secrets !== undefined) set.secretsJson = toJsonText(patch.secrets);
    try {
      const d = await this.services.findOneAndUpdate({ _id: id, organizationId }, { $set: set }, { returnDocument: 'after' });
      return d ? aiServiceFromDocument(d) : null;
    } catch (e) {
      if (isDuplicateKey(e, Indexes.aiServicesName)) throw nameTaken();
      throw e;
    }
  }

  async delete(organizationId: number, id: number): Promise<boolean> {
    return (await this.services.deleteOne({ _id: id, organizationId })).deletedCount > 0;
  }
}
