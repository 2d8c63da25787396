/**
 * The few semantic errors core throws. Each carries a stable snake_case `code`; `http/` alone maps the
 * class to a status code and the error to a `{detail, code}` body (API.md section 1). A `detail` is written
 * for the person reading the response: it never carries a secret.
 */
export abstract class DomainError extends Error {
  abstract readonly kind: ErrorKind;
  constructor(
    readonly code: string,
    readonly detail: string = code,
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

export type ErrorKind =
  | 'input'
  | 'validation'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'provider'
  | 'unavailable';

/** A domain rule on the request failed, or a referenced id is not in the caller's organization (400). */
export class InputError extends DomainError {
  readonly kind = 'input' as const;
}

/** One item of a FastAPI-shaped validation error. `loc` starts with `body`, `query` or `path`. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** Schema or graph validation failed (422 with FastAPI's `{detail: [{loc, msg, type}]}`). */
export class ValidationError extends DomainError {
  readonly kind = 'validation' as const;
  constructor(readonly issues: ValidationIssue[]) {
    super('validation_error', issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
  }
}

/** No credentials, or unknown/expired/revoked ones (401). */
export class UnauthenticatedError extends DomainError {
  readonly kind = 'unauthenticated' as const;
}

/** Authenticated but not allowed (403). */
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden' as const;
}

/** The record does not exist or belongs to another organization; never says which (404). */
export class NotFoundError extends DomainError {
  readonly kind = 'not_found' as const;
}

/** Conflicts with stored state (409). */
export class ConflictError extends DomainError {
  readonly kind = 'conflict' as const;
}

/** A body larger than allowed (413). */
export class PayloadTooLargeError extends DomainError {
  readonly kind = 'payload_too_large' as const;
}

/** Too many attempts; `retryAfterSeconds` goes to the `Retry-After` header (429). */
export class RateLimitedError extends DomainError {
  readonly kind = 'rate_limited' as const;
  constructor(
    readonly retryAfterSeconds: number,
    detail = 'Too many requests; try again later',
  ) {
    super('rate_limited', detail);
  }
}

/** A telephony provider's API refused or failed; `detail` is safe to show (no credentials) (502). */
export class ProviderApiError extends DomainError {
  readonly kind = 'provider' as const;
  constructor(
    readonly provider: string,
    detail: string,
    readonly retryable = false,
    code = 'provider_api_error',
  ) {
    super(code, detail);
  }
}

/** A dependency (storage) cannot be reached (503). */
export class UnavailableError extends DomainError {
  readonly kind = 'unavailable' as const;
}
