import express, { type NextFunction, type Request, type Response } from 'express';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import swaggerUi from 'swagger-ui-express';
import { ForbiddenError, ValidationError } from '../core/errors.js';
import type { Authenticate } from '../core/identity/authenticate.use-case.js';
import type { Principal } from '../core/identity/identity.js';
import type { Logger } from '../core/ports/logger.port.js';
import { mapError } from './error-mapper.js';
import { buildOpenApiDocument } from './openapi/openapi-document.js';
import type { RouteContext, RouteDefinition } from './routing/route.js';
import { compileValidator } from './validation/ajv.js';

export interface AppOptions {
  routes: RouteDefinition[];
  authenticate: Authenticate;
  logger: Logger;
  version: string;
  publicUrl?: string;
  maxJsonBodyBytes: number;
}

const API_PREFIX = '/api/v1';
const REQUEST_ID = /^[\w.\-:]{1,128}$/;

function toExpressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

function toRegex(path: string): RegExp {
  const body = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{(\w+)\\?\}|\{(\w+)\}/g, '[^/]+');
  return new RegExp(`^${API_PREFIX}${body}/?$`);
}

function credentialsOf(req: Request): { apiKey?: string | null; bearerToken?: string | null } {
  const apiKey = req.headers['x-api-key'];
  const authz = req.headers.authorization;
  const out: { apiKey?: string; bearerToken?: string } = {};
  if (typeof apiKey === 'string') out.apiKey = apiKey;
  if (typeof authz === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    if (m) out.bearerToken = m[1]!;
  }
  return out;
}

/**
 * The express application: request ids and access logs, JSON parsing with a size limit, every route of
 * `routes` with ajv validation of path, query and body, authentication, the single error mapping, the
 * OpenAPI document and Swagger UI, JSON 404/405 for everything else.
 */
export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');

  const document = buildOpenApiDocument(options.routes, { version: options.version, serverUrl: options.publicUrl });
  const router = express.Router();

  app.use((req: Request, res: Response, next: NextFunction) => {
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const log = options.logger.child({ request_id: requestId });
    res.locals.log = log;
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      // the path only: query strings can carry signatures
      log.info(
        { method: req.method, path: req.path, status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 },
        'request',
      );
    });
    next();
  });

  // provider webhooks keep their raw body: some signature schemes sign the bytes, not the parsed fields
  const keepRawBody = (req: http.IncomingMessage, _res: http.ServerResponse, buf: Buffer) => {
    if (req.url?.startsWith(`${API_PREFIX}/telephony/`)) (req as http.IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
  };
  app.use(express.json({ limit: options.maxJsonBodyBytes, strict: false, type: ['application/json', 'application/*+json'], verify: keepRawBody }));
  app.use(express.urlencoded({ limit: options.maxJsonBodyBytes, extended: false, verify: keepRawBody }));

  for (const route of options.routes) {
    const validateParams = route.params ? compileValidator(route.params, 'path') : null;
    const validateQuery = route.query ? compileValidator(route.query, 'query') : null;
    const validateBody = route.body ? compileValidator(route.body, 'body') : null;
    const path = route.expressPath ?? toExpressPath(route.path);
    router[route.method](path, async (req: Request, res: Response, next: NextFunction) => {
      try {
        let principal: Principal | undefined;
        if (route.auth !== 'none') {
          principal = await options.authenticate.execute(credentialsOf(req));
          if (route.auth === 'session' && principal.via !== 'session') {
            throw new ForbiddenError('session_required', 'This operation needs a session token (Authorization: Bearer), not an API key');
          }
        }
        const params = { ...(req.params as Record<string, unknown>) };
        const query = { ...(req.query as Record<string, unknown>) };
        const issues = [...(validateParams?.(params) ?? []), ...(validateQuery?.(query) ?? [])];
        let body: unknown = undefined;
        if (validateBody) {
          body = req.is(['application/json', 'application/*+json']) ? req.body : undefined;
          if (body === undefined) {
            if (!route.bodyOptional) issues.push({ loc: ['body'], msg: 'Field required: send a JSON body with Content-Type: application/json', type: 'missing' });
            else body = {};
          }
          if (body !== undefined) issues.push(...validateBody(body));
        }
        if (issues.length > 0) throw new ValidationError(issues);
        const ctx: RouteContext = { body, query, params, principal: principal as Principal, req, res, log: res.locals.log as Logger };
        const result = await route.handler(ctx);
        if (!res.headersSent) res.status(200).json(result ?? {});
      } catch (err) {
        next(err);
      }
    });
  }
  app.use(API_PREFIX, router);

  app.get(`${API_PREFIX}/openapi.json`, (_req, res) => {
    res.json(document);
  });
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(document as never, { customSiteTitle: 'Callplane API' }));

  const patterns = options.routes.map((r) => ({ method: r.method.toUpperCase(), re: toRegex(r.path) }));
  app.use((req: Request, res: Response) => {
    const allowed = patterns.filter((p) => p.re.test(req.path)).map((p) => p.method);
    if (allowed.length > 0) {
      res.setHeader('Allow', [...new Set(allowed)].join(', '));
      res.status(405).json({ detail: 'Method Not Allowed', code: 'method_not_allowed' });
      return;
    }
    res.status(404).json({ detail: 'Not Found', code: 'not_found' });
  });

  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const mapped = mapError(err);
    const log = (res.locals.log as Logger | undefined) ?? options.logger;
    if (mapped.unexpected) {
      const e = err as Error;
      log.error({ err: { type: e?.name, message: e?.message }, method: req.method, path: req.path }, 'unexpected error');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [k, v] of Object.entries(mapped.headers)) res.setHeader(k, v);
    res.status(mapped.status).json(mapped.body);
  });

  return app;
}

/**
 * An http.Server whose request and response objects are born with express's prototypes, so express's
 * per-request `Object.setPrototypeOf` changes nothing and node's http internals stay optimized
 * (ENVIRONMENT.md: about 4x the throughput of `app.listen`). Every express feature keeps working.
 */
export function createHttpServer(app: express.Express): http.Server {
  function FastRequest(this: unknown, ...args: unknown[]) {
    return Reflect.construct(http.IncomingMessage, args, FastRequest);
  }
  FastRequest.prototype = app.request;
  function FastResponse(this: unknown, ...args: unknown[]) {
    return Reflect.construct(http.ServerResponse, args, FastResponse);
  }
  FastResponse.prototype = app.response;
  return http.createServer(
    { IncomingMessage: FastRequest as unknown as typeof http.IncomingMessage, ServerResponse: FastResponse as unknown as typeof http.ServerResponse },
    app,
  );
}

