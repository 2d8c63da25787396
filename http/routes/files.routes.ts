import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ForbiddenError, NotFoundError } from '../../core/errors.js';
import type { ByteRange, StoredObject } from '../../core/ports/object-store.port.js';
import { byteRangeOf } from '../routing/byte-range.js';
import { defineRoutes } from '../routing/route.js';
import { arr, obj, str } from '../routing/schema-helpers.js';

/** What the download route needs from an object store that signs its own URLs (the embedded local store). */
export interface SelfSignedObjectStore {
  /** Signature and expiry check of a download URL, constant time; false when tampered, expired or malformed. */
  verifyDownload(key: string, expires: number, signature: string): boolean;
  stat(key: string): Promise<StoredObject | null>;
  get(key: string, range?: ByteRange): Promise<AsyncIterable<Uint8Array> | null>;
}

const notFound = () => new NotFoundError('file_not_found', 'File not found');
const signatureInvalid = () => new ForbiddenError('signature_invalid', 'The download link is invalid or has expired');

/**
 * `GET /api/v1/files/<key>?expires=&signature=`: the embedded store's signed download URLs (transcripts,
 * recordings). No credentials: the signature authorizes. Tampered, expired or malformed: 403 `signature_invalid`;
 * valid but the object is gone: 404 `file_not_found`. The body is streamed with the stored content type. One byte
 * range (`Range: bytes=a-b`, `a-`, `-n`) is answered 206 with `Content-Range`, so an <audio> element can seek in
 * a recording; a range past the end is 416 `range_not_satisfiable` with `Content-Range: bytes *\/<size>`; several
 * ranges, a malformed header or an `If-Range` (no validators are sent, so none can match) get the whole 200. The
 * signature is checked before anything else.
 */
export function filesRoutes(store: SelfSignedObjectStore) {
  return defineRoutes([
    {
      method: 'get', path: '/files/{file_key}', expressPath: '/files/*file_key', operationId: 'downloadFile',
      summary: 'Download an artifact through a signed URL', tags: ['files'], auth: 'none',
      description:
        'Follow transcript_url / recording_url of a run; they carry expires and signature and are valid 3600 s. ' +
        'Tampered or expired: 403 `signature_invalid`. Supports one `Range: bytes=a-b | a- | -n` (206 with Content-Range; ' +
        '416 `range_not_satisfiable` past the end; several ranges get the whole 200).',
      params: obj({ file_key: { anyOf: [str(), arr(str())], description: 'the object key; may contain /' } }, ['file_key']),
      query: obj({ expires: str({ description: 'unix seconds' }), signature: str({ description: 'hex HMAC-SHA256' }) }),
      response: { contentType: 'application/octet-stream', description: 'The object, with its stored Content-Type' },
      errors: [403, 404, 416],
      handler: async ({ params, query, req, res }) => {
        const raw = params.file_key as string | string[];
        const key = Array.isArray(raw) ? raw.join('/') : String(raw);
        const expires = typeof query.expires === 'string' && /^\d{1,15}$/.test(query.expires) ? Number(query.expires) : NaN;
        const signature = typeof query.signature === 'string' ? query.signature : '';
        if (!Number.isInteger(expires) || !signature || !store.verifyDownload(key, expires, signature)) throw signatureInvalid();
        const meta = await store.stat(key);
        if (!meta) throw notFound();
        const range = req.headers['if-range'] === undefined ? byteRangeOf(req.headers.range, meta.size) : { kind: 'full' as const };
        res.setHeader('Accept-Ranges', 'bytes');
        res.setHeader('Cache-Control', 'private, no-store');
        if (range.kind === 'unsatisfiable') {
          res.setHeader('Content-Range', `bytes */${meta.size}`);
          res.status(416).json({ detail: `The requested range lies outside the file's ${meta.size} bytes`, code: 'range_not_satisfiable' });
          return undefined;
        }
        const body = await store.get(key, range.kind === 'partial' ? { start: range.start, end: range.end } : undefined);
        if (!body) throw notFound();
        if (range.kind === 'partial') {
          res.status(206);
          res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${meta.size}`);
          res.setHeader('Content-Length', String(range.end - range.start + 1));
        } else {
          res.status(200);
          res.setHeader('Content-Length', String(meta.size));
        }
        res.setHeader('Content-Type', meta.contentType);
        res.setHeader('X-Content-Type-Options', 'nosniff');
        // stored content is served from the API origin: never let it run scripts there
        res.setHeader('Content-Security-Policy', 'sandbox');
        await pipeline(Readable.from(body), res);
        return undefined;
      },
    },
  ]);
}
