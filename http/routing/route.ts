import type { Request, Response } from 'express';
import type { Principal } from '../../core/identity/identity.js';
import type { Logger } from '../../core/ports/logger.port.js';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1); the same object feeds ajv and the OpenAPI document. */
export type JsonSchema = Record<string, unknown>;

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';
export type AuthRequirement = 'none' | 'any' | 'session';

export interface RouteContext<B = any, Q = any, P = any> {
  body: B;
  query: Q;
  params: P;
  /** Present on every route whose `auth` is not `none`. */
  principal: Principal;
  /**
   * Authenticates the request's credentials now (the same step as `auth: 'any'`; throws `UnauthenticatedError`).
   * For `auth: 'none'` routes that need credentials only in some cases (the simulator's webhooks).
   */
  authenticate(): Promise<Principal>;
  req: Request;
  res: Response;
  log: Logger;
}

/**
 * One API operation: its validation schemas, its OpenAPI description and its handler, in one value, so the
 * document and the validator cannot drift. A handler returns the JSON body of a 200, or sends the response
 * itself (streams, redirects, provider markup) and returns undefined.
 */
export interface RouteDefinition {
  method: HttpMethod;
  /** OpenAPI-style path under /api/v1, e.g. `/campaign/{campaign_id}`. */
  path: string;
  /** Express path when it differs from `path` (wildcards such as `/uploads/*file_key`). */
  expressPath?: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: AuthRequirement;
  params?: JsonSchema;
  query?: JsonSchema;
  /** JSON body schema. Required unless `bodyOptional`. */
  body?: JsonSchema;
  bodyOptional?: boolean;
  /** A non-JSON request body the handler reads itself (e.g. the CSV PUT). */
  rawBody?: { contentType: string; description: string };
  /** JSON schema of the 200 body, or a non-JSON content type. */
  response: JsonSchema | { contentType: string; description: string; schema?: JsonSchema };
  /** Documented error statuses besides 401/422 (added automatically). */
  errors?: number[];
  handler(ctx: RouteContext): Promise<unknown> | unknown;
}

export const isNonJsonResponse = (r: RouteDefinition['response']): r is { contentType: string; description: string; schema?: JsonSchema } =>
  typeof (r as { contentType?: unknown }).contentType === 'string';

/** Identity helper that keeps literal types while checking the shape. */
export const defineRoutes = (routes: RouteDefinition[]): RouteDefinition[] => routes;
