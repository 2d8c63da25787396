import { DomainError, RateLimitedError, ValidationError, type ErrorKind, type ValidationIssue } from '../core/errors.js';

/** The single mapping from core error kinds to HTTP statuses (API.md section 1). */
export const STATUS_BY_KIND: Record<ErrorKind, number> = {
  input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  validation: 422,
  rate_limited: 429,
  provider: 502,
  unavailable: 503,
};

export interface HttpErrorResponse {
  status: number;
  body: { detail: string; code: string } | { detail: ValidationIssue[] };
  headers: Record<string, string>;
}

/** express/body-parser errors carry `type` and `status`. */
interface BodyParserError { type?: string; status?: number; expose?: boolean }

/**
 * Turns anything thrown into a response. Unknown errors become a bare 500 without their message, so no
 * stack trace, SQL or secret ever leaves; the caller logs them.
 */
export function mapError(err: unknown): HttpErrorResponse & { unexpected: boolean } {
  if (err instanceof ValidationError) {
    return { status: 422, body: { detail: err.issues }, headers: {}, unexpected: false };
  }
  if (err instanceof DomainError) {
    const headers: Record<string, string> = {};
    if (err instanceof RateLimitedError) headers['Retry-After'] = String(err.retryAfterSeconds);
    return { status: STATUS_BY_KIND[err.kind], body: { detail: err.detail, code: err.code }, headers, unexpected: false };
  }
  const bp = err as BodyParserError;
  if (bp && typeof bp === 'object' && typeof bp.type === 'string') {
    if (bp.type === 'entity.too.large') {
      return { status: 413, body: { detail: 'Request body is too large', code: 'payload_too_large' }, headers: {}, unexpected: false };
    }
    if (bp.type === 'entity.parse.failed') {
      return {
        status: 422,
        body: { detail: [{ loc: ['body'], msg: 'JSON decode error: the body is not valid JSON', type: 'json_invalid' }] },
        headers: {},
        unexpected: false,
      };
    }
    if (bp.type === 'encoding.unsupported' || bp.type === 'charset.unsupported') {
      return { status: 415, body: { detail: 'Unsupported request encoding', code: 'unsupported_media_type' }, headers: {}, unexpected: false };
    }
    if (bp.type === 'request.aborted') {
      return { status: 400, body: { detail: 'Request aborted', code: 'request_aborted' }, headers: {}, unexpected: false };
    }
  }
  return { status: 500, body: { detail: 'Internal server error', code: 'internal_error' }, headers: {}, unexpected: true };
}
