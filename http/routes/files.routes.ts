import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ForbiddenError, NotFoundError } from '../../core/errors.js';
import type { StoredObject } from '../../core/ports/object-store.port.js';
import { defineRoutes } from '../routing/route.js';
import { arr, obj, str } from '../routing/schema-helpers.js';

/** What the download route needs from an object store that signs its own URLs (the embedded local store). */
export interface SelfSignedObjectStore {
  /** Signature and expiry check of a download URL, constant time; false when tampered, expired or malformed. */
  verifyDownload(key: string, expires: number, signature: string): boolean;
  stat(key: string): Promise<StoredObject | null>;
  get(key: string): Promise<AsyncIterable<Uint8Array> | null>;
}

const signatureInvalid = () => new ForbiddenError('signature_invalid', 'The download link is invalid or has expired');

/**
 * `GET /api/v1/files/<key>?expires=&signature=`: the embedded store's signed download URLs (transcripts,
 * recordings). No credentials: the signature authorizes. Tampered, expired or malformed: 403 `signature_invalid`;
 * valid but the object is gone: 404 `file_not_found`. The body is streamed with the stored content type.
 */
export function filesRoutes(store: SelfSignedObjectStore) {
  return defineRoutes([
    {
      method: 'get', path: '/files/{file_key}', expressPath: '/files/*file_key', operationId: 'downloadFile',
      summary: 'Download an artifact through a signed URL', tags: ['files'], auth: 'none',
      description:
        'Follow transcript_url / recording_url of a run; they carry expires and signature and are valid 3600 s. ' +
        'Tampered or expired: 403 `signature_invalid`.',
      params: obj({ file_key: { anyOf: [str(), arr(str())], description: 'the object key; may contain /' } }, ['file_key']),
      query: obj({ expires: str({ description: 'unix seconds' }), signature: str({ description: 'hex HMAC-SHA256' }) }),
      response: { contentType: 'application/octet-stream', description: 'The object, with its stored Content-Type' },
      errors: [403, 404],
      handler: async ({ params, query, res }) => {
        const raw = params.file_key as string | string[];
        const key = Array.isArray(raw) ? raw.join('/') : String(raw);
        const expires = typeof query.expires === 'string' && /^\d{1,15}$/.test(query.expires) ? Number(query.expires) : NaN;
        const signature = typeof query.signature === 'string' ? query.signature : '';
        if (!Number.isInteger(expires) || !signature || !store.verifyDownload(key, expires, signature)) throw signatureInvalid();
        const meta = await store.stat(key);
        const body = meta ? await store.get(key) : null;
        if (!meta || !body) throw new NotFoundError('file_not_found', 'File not found');
        res.status(200);
        res.setHeader('Content-Type', meta.contentType);
        res.setHeader('Content-Length', String(meta.size));
        res.setHeader('Cache-Control', 'private, no-store');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        // stored content is served from the API origin: never let it run scripts there
        res.setHeader('Content-Security-Policy', 'sandbox');
        await pipeline(Readable.from(body), res);
        return undefined;
      },
    },
  ]);
}
