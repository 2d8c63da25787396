import { ForbiddenError, InputError, NotFoundError } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import type { TokenService } from '../ports/crypto.port.js';
import { isValidObjectKey, type ObjectBody, type ObjectStore } from '../ports/object-store.port.js';
import type { UploadRepository } from '../ports/upload.repository.port.js';

/** API.md section 4. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
export const UPLOAD_URL_TTL_SECONDS = 3600;

/**
 * A file name safe as the last segment of an object key: characters outside `[A-Za-z0-9._-]` become `_`, runs of
 * `_` collapse, leading dots are dropped, at most 120 characters keeping the `.csv` ending (lower-cased).
 */
export function sanitizeFileName(name: string): string {
  const base = name.trim().replace(/^.*[\\/]/, '');
  const stem = base.replace(/\.csv$/i, '').replace(/[^A-Za-z0-9._-]+/g, '_').replace(/_+/g, '_').replace(/^[._]+/, '').slice(0, 116);
  return `${stem || 'contacts'}.csv`;
}

/** The organization id a key `uploads/<org_id>/...` belongs to, or null. */
export function organizationOfUploadKey(key: string): number | null {
  const m = /^uploads\/([1-9]\d{0,15})\/[^/]+\/[^/]+$/.exec(key);
  return m ? Number(m[1]) : null;
}

export interface PresignedUpload {
  uploadUrl: string;
  fileKey: string;
  expiresIn: number;
}

/** `POST /s3/presigned-upload-url`: reserves a key of the caller's organization and signs a PUT for exactly `fileSize` bytes. */
export class CreateUploadUrl {
  constructor(
    private readonly store: ObjectStore,
    private readonly uploads: UploadRepository,
    private readonly tokens: Pick<TokenService, 'uuid'>,
    private readonly clock: Clock,
  ) {}

  async execute(organizationId: number, input: { fileName: string; fileSize: number; contentType: string }): Promise<PresignedUpload> {
    const fileKey = `uploads/${organizationId}/${this.tokens.uuid()}/${sanitizeFileName(input.fileName)}`;
    const now = this.clock.now();
    const uploadUrl = await this.store.signedUploadUrl(fileKey, { size: input.fileSize, contentType: input.contentType, expiresInSeconds: UPLOAD_URL_TTL_SECONDS });
    await this.uploads.create(organizationId, {
      fileKey, fileName: input.fileName, declaredSize: input.fileSize, contentType: input.contentType,
      expiresAt: new Date(now.getTime() + UPLOAD_URL_TTL_SECONDS * 1000), now,
    });
    return { uploadUrl, fileKey, expiresIn: UPLOAD_URL_TTL_SECONDS };
  }
}

/**
 * The signed PUT of the embedded store: the signature (over method, key, declared size, expiry) authorizes; a bad
 * or expired one is 403 `signature_invalid`. The body is streamed into the store and refused with 413 as soon as it
 * passes the declared size (or 10 MB); nothing is stored then.
 */
export class ReceiveUpload {
  constructor(
    private readonly store: ObjectStore,
    private readonly uploads: UploadRepository,
    private readonly clock: Clock,
  ) {}

  /** Checks the signature before any byte is read. */
  authorize(fileKey: string, grant: { size: number; expires: number; signature: string }): { organizationId: number } {
    const organizationId = organizationOfUploadKey(fileKey);
    if (!this.store.verifyUpload) throw new NotFoundError('not_found', 'This store does not receive uploads itself');
    if (organizationId === null || !isValidObjectKey(fileKey) || !Number.isInteger(grant.size) || grant.size < 1 || grant.size > MAX_UPLOAD_BYTES
      || !this.store.verifyUpload(fileKey, grant.size, grant.expires, grant.signature)) {
      throw new ForbiddenError('signature_invalid', 'The upload URL is invalid or has expired');
    }
    return { organizationId };
  }

  /**
   * `announcedBytes`: the request's Content-Length when it sent one. When fewer bytes arrived than announced (or
   * none at all), nothing is kept and 400 `upload_incomplete` is thrown: a 200 always means every byte is stored.
   */
  async execute(
    fileKey: string, grant: { size: number; expires: number; signature: string }, body: ObjectBody, contentType: string, announcedBytes?: number,
  ): Promise<{ fileKey: string; size: number }> {
    const { organizationId } = this.authorize(fileKey, grant);
    const stored = await this.store.put(fileKey, body, { contentType, maxBytes: Math.min(grant.size, MAX_UPLOAD_BYTES) });
    if ((announcedBytes !== undefined && stored.size !== announcedBytes) || stored.size === 0) {
      await this.store.delete(fileKey);
      throw new InputError('upload_incomplete', announcedBytes !== undefined && announcedBytes > 0
        ? `${stored.size} of the ${announcedBytes} bytes sent were received; nothing was stored, PUT the file again`
        : 'The body is empty: PUT the CSV bytes (for example curl -T contacts.csv or --data-binary @contacts.csv)');
    }
    await this.uploads.markUploaded(organizationId, fileKey, { size: stored.size, now: this.clock.now() });
    return { fileKey, size: stored.size };
  }
}
