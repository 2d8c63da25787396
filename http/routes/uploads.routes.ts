import type { Request } from 'express';
import { PayloadTooLargeError } from '../../core/errors.js';
import type { CreateUploadUrl, ReceiveUpload } from '../../core/uploads/uploads.use-case.js';
import { MAX_UPLOAD_BYTES } from '../../core/uploads/uploads.use-case.js';
import { defineRoutes } from '../routing/route.js';
import { arr, int, obj, str } from '../routing/schema-helpers.js';

export interface UploadRouteDeps {
  createUploadUrl: CreateUploadUrl;
  receiveUpload: ReceiveUpload;
}

const tooLarge = () => new PayloadTooLargeError('payload_too_large', 'The body is larger than the file_size the upload URL was issued for');

/** API.md section 4: the presigned upload URL and the embedded store's signed PUT. */
export function uploadRoutes(d: UploadRouteDeps) {
  return defineRoutes([
    {
      method: 'post', path: '/s3/presigned-upload-url', operationId: 'createPresignedUploadUrl', summary: 'Get a URL to upload a contact CSV to',
      tags: ['uploads'], auth: 'any',
      description: 'Then `PUT` the CSV bytes to `upload_url` (no credentials, at most `file_size` bytes, within `expires_in` seconds) and use ' +
        '`file_key` as `source_id` of a campaign.',
      body: obj({
        file_name: str({ minLength: 5, maxLength: 255, pattern: '\\.[cC][sS][vV]$', description: 'must end in .csv' }),
        file_size: int({ minimum: 1, maximum: MAX_UPLOAD_BYTES }),
        content_type: str({ minLength: 1, maxLength: 255, default: 'text/csv' }),
      }, ['file_name', 'file_size'], { additionalProperties: false }),
      response: obj({ upload_url: str(), file_key: str(), expires_in: int({ description: 'seconds' }) }, ['upload_url', 'file_key', 'expires_in']),
      handler: async ({ principal, body }) => {
        const r = await d.createUploadUrl.execute(principal.organizationId, { fileName: body.file_name, fileSize: body.file_size, contentType: body.content_type });
        return { upload_url: r.uploadUrl, file_key: r.fileKey, expires_in: r.expiresIn };
      },
    },
    {
      method: 'put', path: '/uploads/{file_key}', expressPath: '/uploads/*file_key', operationId: 'putUpload',
      summary: 'Upload the CSV bytes to a signed upload URL', tags: ['uploads'], auth: 'none',
      description: 'The signature in the query authorizes (no credentials). Bad or expired: 403 `signature_invalid`. More bytes than the ' +
        'declared `file_size` (or 10 MB): 413 `payload_too_large`, refused while streaming, nothing stored. The bytes are stored as sent ' +
        'whatever the Content-Type (curl\'s default `application/x-www-form-urlencoded` included); an empty body or fewer bytes than the ' +
        'Content-Length: 400 `upload_incomplete`, nothing stored.',
      params: obj({ file_key: { anyOf: [str(), arr(str())], description: 'the file_key; contains /' } }, ['file_key']),
      query: obj({ size: str(), expires: str({ description: 'unix seconds' }), signature: str({ description: 'hex HMAC-SHA256' }) }),
      rawBody: { contentType: 'text/csv', description: 'the CSV bytes' },
      response: obj({ file_key: str(), size: int() }, ['file_key', 'size']),
      errors: [400, 403, 413],
      handler: async ({ params, query, req, res }) => {
        const raw = params.file_key as string | string[];
        const key = Array.isArray(raw) ? raw.join('/') : String(raw);
        const num = (v: unknown) => (typeof v === 'string' && /^\d{1,15}$/.test(v) ? Number(v) : NaN);
        const grant = { size: num(query.size), expires: num(query.expires), signature: typeof query.signature === 'string' ? query.signature : '' };
        d.receiveUpload.authorize(key, grant);
        const declared = Number((req as Request).headers['content-length']);
        try {
          if (Number.isFinite(declared) && declared > grant.size) throw tooLarge();
          const type = String(req.headers['content-type'] ?? 'text/csv').slice(0, 255);
          const announced = Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined;
          const r = await d.receiveUpload.execute(key, grant, req as AsyncIterable<Uint8Array>, type, announced);
          return { file_key: r.fileKey, size: r.size };
        } catch (e) {
          // the client may still be sending: do not keep reading its body on this connection
          if (e instanceof PayloadTooLargeError) res.setHeader('Connection', 'close');
          throw e;
        }
      },
    },
  ]);
}
