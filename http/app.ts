import express, { type NextFunction, type Request, type Response } from 'express';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type swaggerUiExpress from 'swagger-ui-express';
import { ForbiddenError, ValidationError } from '../core/errors.js';
import type { Authenticate } from '../core/identity/authenticate.use-case.js';
import type { Principal } from '../core/identity/identity.js';
import type { Logger } from '../core/ports/logger.port.js';
import { mapError } from './error-mapper.js';
import { buildOpenApiDocument } from './openapi/openapi-document.js';
import { consoleStatic } from './routes/console-static.js';
import type { RouteContext, RouteDefinition } from './routing/route.js';
import { compileValidator } from './validation/ajv.js';
import { assertJsonDepth } from './validation/json-depth.js';

export interface AppOptions {
  routes: RouteDefinition[];
  authenticate: Authenticate;
  logger: Logger;
  version: string;
  publicUrl?: string;
  maxJsonBodyBytes: number;
  /** The built web console (dist/console) served at `/`; omitted: no console. */
  consoleDir?: string;
}

const API_PREFIX = '/api/v1';
const REQUEST_ID = /^[\w.\-:]{1,128}$/;

function toExpressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

function toRegex(path: string): RegExp {
  const body = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+');
  return new RegExp(`^${API_PREFIX}${body}/?$`);
}

/**
 * swagger-ui at /docs, its package (swagger-ui-express and swagger-ui-dist, about 3 MB of heap) loaded on the
 * first request under /docs rather than at start-up (docs/deployment.md, "Memory at start-up"); the OpenAPI JSON
 * route does not need it. Later requests go straight to the same router.
 */
function swaggerUiOnFirstUse(document: unknown): express.RequestHandler {
  let ui: express.Router | undefined;
  return (req, res, next) => {
    if (!ui) {
      const swaggerUi = createRequire(import.meta.url)('swagger-ui-express') as typeof swaggerUiExpress;
      const router = express.Router();
      router.use(swaggerUi.serve, swaggerUi.setup(document as never, { customSiteTitle: 'Callplane API' }));
      ui = router;
    }
    ui(req, res, next);
  };
}

/** A 200 JSON response written in one step (what `res.json` does, without its per-call content-type parsing). */
function sendJson(res: Response, value: unknown): void {
  const body = JSON.stringify(value);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** Whether the request announces a body (the test body-parser makes, without its per-request cost). */
function hasBody(req: http.IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * A logger that adds `fields` to each line it writes. Cheaper per request than a pino child (which builds its
 * serializers and redaction up front): the fields are merged only when a line is actually written.
 */
function withFields(base: Logger, fields: Record<string, unknown>): Logger {
  return {
    debug: (f, m) => base.debug({ ...fields, ...f }, m),
    info: (f, m) => base.info({ ...fields, ...f }, m),
    warn: (f, m) => base.warn({ ...fields, ...f }, m),
    error: (f, m) => base.error({ ...fields, ...f }, m),
    child: (f) => base.child({ ...fields, ...f }),
    ...(base.isEnabled ? { isEnabled: (level: 'debug' | 'info' | 'warn' | 'error') => base.isEnabled!(level) } : {}),
  };
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
  // one line per request at `info`; when that level is off, no per-request listener is set up at all
  const accessLog = options.logger.isEnabled?.('info') ?? true;

  app.use((req: Request, res: Response, next: NextFunction) => {
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const log = withFields(options.logger, { request_id: requestId });
    res.locals.log = log;
    if (accessLog) {
      const started = process.hrtime.bigint();
      res.on('finish', () => {
        // the path only: query strings can carry signatures
        log.info(
          { method: req.method, path: req.path, status: res.statusCode, ms: Number(process.hrtime.bigint() - started) / 1e6 },
          'request',
        );
      });
    }
    next();
  });

  // provider webhooks keep their raw body: some signature schemes sign the bytes, not the parsed fields
  const keepRawBody = (req: http.IncomingMessage, _res: http.ServerResponse, buf: Buffer) => {
    if (req.url?.startsWith(`${API_PREFIX}/telephony/`)) (req as http.IncomingMessage & { rawBody?: Buffer }).rawBody = buf;
  };
  // nesting depth is checked on the raw bytes before parsing: JSON.parse copes with any depth, the recursive
  // code after it (validation, cloning, storage) does not
  const verifyJson = (req: http.IncomingMessage, res: http.ServerResponse, buf: Buffer) => {
    assertJsonDepth(buf);
    keepRawBody(req, res, buf);
  };
  const parseJson = express.json({ limit: options.maxJsonBodyBytes, strict: false, type: ['application/json', 'application/*+json'], verify: verifyJson });
  const parseForm = express.urlencoded({ limit: options.maxJsonBodyBytes, extended: false, verify: keepRawBody });
  // routes that take raw bytes (the upload PUT) read the request stream themselves, whatever its content type:
  // a parser here would consume it (curl's default x-www-form-urlencoded made an empty file answered 200)
  // (provider webhooks declare a form/JSON `rawBody` for the document but are parsed like any body: not exempt)
  const rawBodyRoutes = options.routes.filter((r) => r.rawBody && !/^application\/(x-www-form-urlencoded|json)\b/i.test(r.rawBody.contentType))
    .map((r) => ({ method: r.method.toUpperCase(), prefix: API_PREFIX + r.path.slice(0, r.path.indexOf('{') === -1 ? undefined : r.path.indexOf('{')) }));
  const takesRawBody = (req: Request) => rawBodyRoutes.some((r) => r.method === req.method && req.path.startsWith(r.prefix));
  // requests without a body (most GETs) skip both parsers
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req) || takesRawBody(req)) return next();
    parseJson(req, res, (err?: unknown) => (err ? next(err) : parseForm(req, res, next)));
  });

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
        const ctx: RouteContext = {
          body, query, params, principal: principal as Principal, req, res, log: res.locals.log as Logger,
          authenticate: () => options.authenticate.execute(credentialsOf(req)),
        };
        const result = await route.handler(ctx);
        if (!res.headersSent) sendJson(res, result ?? {});
      } catch (err) {
        next(err);
      }
    });
  }
  app.use(API_PREFIX, router);

  app.get(`${API_PREFIX}/openapi.json`, (_req, res) => {
    res.json(document);
  });
  app.use('/docs', swaggerUiOnFirstUse(document));
  if (options.consoleDir) app.use(consoleStatic(options.consoleDir));

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
 * (ENVIRONMENT.md; measured here: express hello-world 44k req/s against 8.9k with `app.listen`). Classes that
 * extend node's own get express's request/response members on their prototypes, and become the prototypes
 * express assigns. Every express feature keeps working. Call once per app.
 */
export function createHttpServer(app: express.Express): http.Server {
  class FastRequest extends http.IncomingMessage {}
  class FastResponse extends http.ServerResponse {}
  for (const source of [Object.getPrototypeOf(app.request), app.request]) {
    Object.defineProperties(FastRequest.prototype, Object.getOwnPropertyDescriptors(source));
  }
  for (const source of [Object.getPrototypeOf(app.response), app.response]) {
    Object.defineProperties(FastResponse.prototype, Object.getOwnPropertyDescriptors(source));
  }
  app.request = FastRequest.prototype as unknown as typeof app.request;
  app.response = FastResponse.prototype as unknown as typeof app.response;
  return http.createServer({ IncomingMessage: FastRequest, ServerResponse: FastResponse as unknown as typeof http.ServerResponse }, app);
}

