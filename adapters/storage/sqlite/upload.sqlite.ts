import { ConflictError } from '../../../core/errors.js';
import type { Upload, UploadRepository } from '../../../core/ports/upload.repository.port.js';
import { fromMs, fromMsOrNull, isUniqueViolation, toMs, type SqliteDatabase } from './database.js';

interface UploadRow {
  id: number; organization_id: number; file_key: string; file_name: string; declared_size: number; content_type: string;
  created_at: number; expires_at: number; uploaded_at: number | null; size: number | null;
}

export const uploadFromRow = (r: UploadRow): Upload => ({
  id: r.id, organizationId: r.organization_id, fileKey: r.file_key, fileName: r.file_name, declaredSize: r.declared_size,
  contentType: r.content_type, createdAt: fromMs(r.created_at), expiresAt: fromMs(r.expires_at), uploadedAt: fromMsOrNull(r.uploaded_at), size: r.size,
});

export class SqliteUploadRepository implements UploadRepository {
  private readonly q;

  constructor(db: SqliteDatabase) {
    this.q = {
      insert: db.prepare<[number, string, string, number, string, number, number], UploadRow>(`INSERT INTO uploads
        (organization_id, file_key, file_name, declared_size, content_type, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`),
      byKey: db.prepare<[number, string], UploadRow>('SELECT * FROM uploads WHERE organization_id = ? AND file_key = ?'),
      uploaded: db.prepare<[number, number, number, string], UploadRow>(
        'UPDATE uploads SET size = ?, uploaded_at = ? WHERE organization_id = ? AND file_key = ? RETURNING *'),
    };
  }

  async create(organizationId: number, input: { fileKey: string; fileName: string; declaredSize: number; contentType: string; expiresAt: Date; now: Date }) {
    try {
      return uploadFromRow(this.q.insert.get(organizationId, input.fileKey, input.fileName, input.declaredSize, input.contentType, toMs(input.now), toMs(input.expiresAt))!);
    } catch (e) {
      if (isUniqueViolation(e)) throw new ConflictError('upload_exists', 'An upload with this key already exists');
      throw e;
    }
  }

  async getByKey(organizationId: number, fileKey: string) {
    const r = this.q.byKey.get(organizationId, fileKey);
    return r ? uploadFromRow(r) : null;
  }

  async markUploaded(organizationId: number, fileKey: string, input: { size: number; now: Date }) {
    const r = this.q.uploaded.get(input.size, toMs(input.now), organizationId, fileKey);
    return r ? uploadFromRow(r) : null;
  }
}
