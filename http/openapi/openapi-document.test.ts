import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { HttpRoutesToken } from '../../plugins/tokens.js';
import { startTestService, type TestService } from '../../test/support/test-service.js';
import type { RouteDefinition } from '../routing/route.js';
import { buildOpenApiDocument, missingSchemas } from './openapi-document.js';

// ajv-formats ships CommonJS with `exports.default` (see http/validation/ajv.ts)
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

describe('OpenAPI document', () => {
  let svc: TestService;
  let routes: RouteDefinition[];
  beforeAll(async () => {
    svc = await startTestService();
    routes = svc.container.getAll<RouteDefinition[]>(HttpRoutesToken).flat();
  });
  afterAll(async () => {
    await svc.close();
  });

  it('is served as OpenAPI 3.1 with every registered operation and its schemas', async () => {
    const r = await svc.get('/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(routes.length).toBeGreaterThan(5);
    for (const route of routes) {
      const op = doc.paths[`/api/v1${route.path}`]?.[route.method];
      expect(op).toBeDefined();
      expect(op.responses['200']).toBeDefined();
      if (route.body) expect(op.requestBody.content['application/json'].schema).toEqual(JSON.parse(JSON.stringify(route.body)));
      for (const name of [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
        expect(op.parameters.find((p: { name: string; in: string }) => p.name === name && p.in === 'path')?.schema).toBeDefined();
      }
      if (route.auth !== 'none') expect(op.responses['401']).toBeDefined();
    }
    const ids = routes.map((x) => x.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('has a schema for every route (a route without one fails here)', () => {
    expect(missingSchemas(routes)).toEqual([]);
    const broken: RouteDefinition = { method: 'post', path: '/thing/{thing_id}', operationId: 'x', summary: 'x', tags: [], auth: 'any', response: {}, handler: () => ({}) };
    expect(missingSchemas([broken])).toEqual([
      'POST /thing/{thing_id}: path parameter thing_id has no schema',
      'POST /thing/{thing_id}: no request body schema (set bodyOptional for bodiless operations)',
    ]);
  });

  it('only holds schemas that compile as JSON Schema 2020-12', () => {
    const doc = buildOpenApiDocument(routes, { version: '0.0.0' });
    // the formats the server validates with (http/validation/ajv.ts); a format neither knows is a failure here
    // rather than ajv's console warning
    const warnings: unknown[] = [];
    const ajv = new Ajv2020({ strict: false, logger: { log: () => {}, warn: (...m: unknown[]) => warnings.push(m.join(' ')), error: (...m: unknown[]) => warnings.push(m.join(' ')) } });
    addFormats(ajv);
    ajv.addSchema({ $id: 'doc', ...doc.components!.schemas! } as never);
    for (const [path, item] of Object.entries(doc.paths!)) {
      for (const [method, op] of Object.entries(item as Record<string, any>)) {
        const schemas = [op.requestBody?.content?.['application/json']?.schema, op.responses?.['200']?.content?.['application/json']?.schema].filter(Boolean);
        for (const s of schemas) expect(() => ajv.compile(JSON.parse(JSON.stringify(s).replace(/#\/components\/schemas\//g, 'doc#/')))).not.toThrow();
        expect(`${method} ${path}`).toBeTruthy();
      }
    }
    expect(warnings).toEqual([]);
  });

  it('declares no JSON Schema dialect Swagger UI would warn about (its default is the OAS 3.1 base dialect)', async () => {
    const doc = (await svc.get('/openapi.json')).body;
    // Swagger UI renders a warning when jsonSchemaDialect is set to anything but its own default dialect
    const bundle = await (await fetch(`${svc.url}/docs/swagger-ui-bundle.js`)).text();
    const uiDefault = /new JsonSchemaDialect\("([^"]+)"\)/.exec(bundle)?.[1];
    expect(uiDefault).toBe('https://spec.openapis.org/oas/3.1/dialect/base');
    expect(doc.jsonSchemaDialect ?? uiDefault).toBe(uiDefault);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('serves Swagger UI at /docs', async () => {
    const r = await fetch(`${svc.url}/docs/`);
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('swagger');
  });

  it('answers 405 for a known path with another method', async () => {
    const r = await svc.request('PATCH', '/health');
    expect(r.status).toBe(405);
    expect(r.body.code).toBe('method_not_allowed');
  });
});
