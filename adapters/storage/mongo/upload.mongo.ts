import type { Db } from 'mongodb';
import { ConflictError } from '../../../core/errors.js';
import type { Upload, UploadRepository } from '../../../core/ports/upload.repository.port.js';
import { dateOrNull, isDuplicateKey, nextId } from './mongo-database.js';
import { Collections, Indexes } from './mongo-schema.js';

export interface UploadDocument {
  _id: number; organizationId: number; fileKey: string; fileName: string; declaredSize: number; contentType: string;
  createdAt: Date; expiresAt: Date; uploadedAt: Date | null; size: number | null;
}

export const uploadToDocument = (u: Upload): UploadDocument => ({
  _id: u.id, organizationId: u.organizationId, fileKey: u.fileKey, fileName: u.fileName, declaredSize: u.declaredSize, contentType: u.contentType,
  createdAt: new Date(u.createdAt), expiresAt: new Date(u.expiresAt), uploadedAt: dateOrNull(u.uploadedAt), size: u.size,
});
export const uploadFromDocument = (d: UploadDocument): Upload => ({
  id: d._id, organizationId: d.organizationId, fileKey: d.fileKey, fileName: d.fileName, declaredSize: d.declaredSize, contentType: d.contentType,
  createdAt: new Date(d.createdAt), expiresAt: new Date(d.expiresAt), uploadedAt: dateOrNull(d.uploadedAt), size: d.size ?? null,
});

/** UploadRepository on MongoDB: one document per upload, the file key unique; every operation is one document. */
export class MongoUploadRepository implements UploadRepository {
  private readonly uploads;

  constructor(private readonly db: Db) {
    this.uploads = db.collection<UploadDocument>(Collections.uploads);
  }

  async create(organizationId: number, input: { fileKey: string; fileName: string; declaredSize: number; contentType: string; expiresAt: Date; now: Date }) {
    const doc = uploadToDocument({
      id: await nextId(this.db, Collections.uploads), organizationId, fileKey: input.fileKey, fileName: input.fileName, declaredSize: input.declaredSize,
      contentType: input.contentType, createdAt: input.now, expiresAt: input.expiresAt, uploadedAt: null, size: null,
    });
    try {
      await this.uploads.insertOne(doc);
    } catch (e) {
      if (isDuplicateKey(e, Indexes.uploadsFileKey)) throw new ConflictError('upload_exists', 'An upload with this key already exists');
      throw e;
    }
    return uploadFromDocument(doc);
  }

  async getByKey(organizationId: number, fileKey: string) {
    const d = await this.uploads.findOne({ organizationId, fileKey });
    return d ? uploadFromDocument(d) : null;
  }

  async markUploaded(organizationId: number, fileKey: string, input: { size: number; now: Date }) {
    const d = await this.uploads.findOneAndUpdate({ organizationId, fileKey }, { $set: { size: input.size, uploadedAt: input.now } }, { returnDocument: 'after' });
    return d ? uploadFromDocument(d) : null;
  }
}
