/** A contact-list upload: reserved when its signed URL is issued, marked uploaded when the PUT succeeds. */
export interface Upload {
  id: number;
  organizationId: number;
  /** `uploads/<org_id>/<uuid>/<sanitized file name>`. */
  fileKey: string;
  fileName: string;
  declaredSize: number;
  contentType: string;
  createdAt: Date;
  /** When the signed upload URL stops working. */
  expiresAt: Date;
  uploadedAt: Date | null;
  /** Bytes received, once uploaded. */
  size: number | null;
}

/** Uploads. Every method is scoped by organization (the signed PUT reads it from the key's `uploads/<org_id>/` prefix). */
export const UploadRepository = Symbol.for('callplane.UploadRepository');
export interface UploadRepository {
  /** Records an issued upload URL. Throws ConflictError('upload_exists') when the key is taken (never, with a fresh UUID). */
  create(organizationId: number, input: { fileKey: string; fileName: string; declaredSize: number; contentType: string; expiresAt: Date; now: Date }): Promise<Upload>;
  /** The upload with this key, or null when absent or in another organization. */
  getByKey(organizationId: number, fileKey: string): Promise<Upload | null>;
  /** Records a completed PUT (a repeat PUT of the same key updates size and time). Null when absent. */
  markUploaded(organizationId: number, fileKey: string, input: { size: number; now: Date }): Promise<Upload | null>;
}
