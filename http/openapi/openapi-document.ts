import type { OpenAPIV3_1 } from 'openapi-types';
import { errorBody, validationErrorBody } from '../routing/schema-helpers.js';
import { isNonJsonResponse, type JsonSchema, type RouteDefinition } from '../routing/route.js';

const ERROR_TEXT: Record<number, string> = {
  400: 'Bad request: a referenced record is missing or a domain rule failed',
  401: 'Not authenticated',
  403: 'Forbidden',
  404: 'Not found (or owned by another organization)',
  409: 'Conflict with stored state',
  413: 'Payload too large',
  429: 'Rate limited',
  502: 'Telephony provider error',
  503: 'Unavailable',
};

function parameters(schema: JsonSchema | undefined, where: 'path' | 'query'): OpenAPIV3_1.ParameterObject[] {
  if (!schema) return [];
  const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(props).map(([name, s]) => {
    const p: OpenAPIV3_1.ParameterObject = { name, in: where, required: where === 'path' || required.has(name), schema: s as OpenAPIV3_1.ParameterObject['schema'] };
    if (typeof s.description === 'string') p.description = s.description;
    return p;
  });
}

/**
 * Builds the OpenAPI 3.1 document from the very route definitions the server validates with. Every
 * operation carries its schemas; `missingSchemas` (tested) lists operations that lack one.
 */
export function buildOpenApiDocument(routes: RouteDefinition[], info: { version: string; serverUrl?: string }): OpenAPIV3_1.Document {
  const paths: OpenAPIV3_1.PathsObject = {};
  for (const r of routes) {
    const responses: OpenAPIV3_1.ResponsesObject = {};
    responses['200'] = isNonJsonResponse(r.response)
      ? { description: r.response.description, content: { [r.response.contentType]: { schema: (r.response.schema ?? { type: 'string' }) as OpenAPIV3_1.SchemaObject } } }
      : { description: 'Successful Response', content: { 'application/json': { schema: r.response as OpenAPIV3_1.SchemaObject } } };
    const statuses = new Set<number>(r.errors ?? []);
    if (r.auth !== 'none') statuses.add(401);
    if (r.auth === 'session') statuses.add(403);
    for (const s of [...statuses].sort()) {
      responses[String(s)] = { description: ERROR_TEXT[s] ?? 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    if (r.params || r.query || r.body) {
      responses['422'] = { description: 'Validation Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/HTTPValidationError' } } } };
    }
    const op: OpenAPIV3_1.OperationObject = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: r.tags,
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
      responses,
      security: r.auth === 'none' ? [] : r.auth === 'session' ? [{ bearer: [] }] : [{ bearer: [] }, { apiKey: [] }],
    };
    if (r.body) {
      op.requestBody = { required: !r.bodyOptional, content: { 'application/json': { schema: r.body as OpenAPIV3_1.SchemaObject } } };
    } else if (r.rawBody) {
      op.requestBody = { required: true, description: r.rawBody.description, content: { [r.rawBody.contentType]: { schema: { type: 'string', format: 'binary' } } } };
    }
    const path = `/api/v1${r.path}`;
    paths[path] = { ...(paths[path] ?? {}), [r.method]: op };
  }
  return {
    // no `jsonSchemaDialect`: the default, the OAS 3.1 base dialect, is JSON Schema 2020-12 plus OpenAPI's
    // keywords, which is what the schemas are; Swagger UI shows a warning banner for any other declared value
    openapi: '3.1.0',
    info: {
      title: 'Callplane API',
      version: info.version,
      description: 'Voice AI agents, telephony providers, outbound campaigns, call runs and usage. Every success is 200 with a JSON body; every error is `{detail, code}` (422: FastAPI-shaped `detail` list).',
    },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    paths,
    components: {
      schemas: {
        Error: errorBody as OpenAPIV3_1.SchemaObject,
        HTTPValidationError: validationErrorBody as OpenAPIV3_1.SchemaObject,
      },
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Session token from POST /api/v1/auth/login' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'API key from POST /api/v1/user/api-keys' },
      },
    },
  };
}

/** Operations that would reach the server without a schema for what they accept or return. */
export function missingSchemas(routes: RouteDefinition[]): string[] {
  const out: string[] = [];
  for (const r of routes) {
    const pathParamNames = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    const declared = Object.keys(((r.params?.properties ?? {}) as object));
    for (const n of pathParamNames) if (!declared.includes(n)) out.push(`${r.method.toUpperCase()} ${r.path}: path parameter ${n} has no schema`);
    if ((r.method === 'post' || r.method === 'put' || r.method === 'patch') && !r.body && !r.rawBody && !r.bodyOptional) {
      out.push(`${r.method.toUpperCase()} ${r.path}: no request body schema (set bodyOptional for bodiless operations)`);
    }
    if (!r.response) out.push(`${r.method.toUpperCase()} ${r.path}: no response schema`);
  }
  return out;
}
