import type { AiService } from '../../../core/ai-services/ai-service.js';
import { ConflictError } from '../../../core/errors.js';
import type { AiServicePatch, AiServiceRepository, NewAiService } from '../../../core/ports/ai-service.repository.port.js';
import { fromMs, isUniqueViolation, toMs, type SqliteDatabase } from './database.js';

export interface AiServiceRow {
  id: number; organization_id: number; name: string; name_key: string; provider: string; secrets_key_id: string;
  settings: string; secrets: string; created_at: number; updated_at: number;
}

export const aiServiceFromRow = (r: AiServiceRow): AiService => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  provider: r.provider,
  secretsKeyId: r.secrets_key_id,
  settings: JSON.parse(r.settings) as Record<string, unknown>,
  secrets: JSON.parse(r.secrets) as Record<string, string>,
  createdAt: fromMs(r.created_at),
  updatedAt: fromMs(r.updated_at),
});

/** The case-insensitive uniqueness key of a service name. */
export const aiServiceNameKey = (name: string): string => name.toLowerCase();

const nameTaken = () => new ConflictError('ai_service_name_taken', 'An AI service with this name already exists');

/** AiServiceRepository on the embedded database: the unique (organization, name_key) index decides name races. */
export class SqliteAiServiceRepository implements AiServiceRepository {
  private readonly q;

  constructor(db: SqliteDatabase) {
    this.q = {
      insert: db.prepare<[number, string, string, string, string, string, string, number, number], AiServiceRow>(
        `INSERT INTO ai_services (organization_id, name, name_key, provider, secrets_key_id, settings, secrets, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`),
      get: db.prepare<[number, number], AiServiceRow>('SELECT * FROM ai_services WHERE organization_id = ? AND id = ?'),
      list: db.prepare<[number], AiServiceRow>('SELECT * FROM ai_services WHERE organization_id = ? ORDER BY created_at, id'),
      update: db.prepare<{ org: number; id: number; name: string | null; nameKey: string | null; settings: string | null; secrets: string | null; now: number }, AiServiceRow>(
        `UPDATE ai_services SET
           name = COALESCE(@name, name), name_key = COALESCE(@nameKey, name_key),
           settings = COALESCE(@settings, settings), secrets = COALESCE(@secrets, secrets), updated_at = @now
         WHERE organization_id = @org AND id = @id RETURNING *`),
      delete: db.prepare<[number, number]>('DELETE FROM ai_services WHERE organization_id = ? AND id = ?'),
    };
  }

  async create(organizationId: number, input: NewAiService): Promise<AiService> {
    const now = toMs(input.now);
    try {
      return aiServiceFromRow(this.q.insert.get(
        organizationId, input.name, aiServiceNameKey(input.name), input.provider, input.secretsKeyId,
        JSON.stringify(input.settings), JSON.stringify(input.secrets), now, now,
      )!);
    } catch (e) {
      if (isUniqueViolation(e, 'name_key')) throw nameTaken();
      throw e;
    }
  }

  async get(organizationId: number, id: number): Promise<AiService | null> {
    const r = this.q.get.get(organizationId, id);
    return r ? aiServiceFromRow(r) : null;
  }

  async list(organizationId: number): Promise<AiService[]> {
    return this.q.list.all(organizationId).map(aiServiceFromRow);
  }

  async update(organizationId: number, id: number, patch: AiServicePatch): Promise<AiService | null> {
    try {
      const row = this.q.update.get({
        org: organizationId, id, now: toMs(patch.now),
        name: patch.name ?? null, nameKey: patch.name !== undefined ? aiServiceNameKey(patch.name) : null,
        settings: patch.settings ? JSON.stringify(patch.settings) : null,
        secrets: patch.secrets ? JSON.stringify(patch.secrets) : null,
      });
      return row ? aiServiceFromRow(row) : null;
    } catch (e) {
      if (isUniqueViolation(e, 'name_key')) throw nameTaken();
      throw e;
    }
  }

  async delete(organizationId: number, id: number): Promise<boolean> {
    return this.q.delete.run(organizationId, id).changes > 0;
  }
}
