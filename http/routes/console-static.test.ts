import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import http from 'node:http';
import { startTestService, type TestService } from '../../test/support/test-service.js';
import { consoleStatic, IMMUTABLE, REVALIDATE } from './console-static.js';

const HTML = { accept: 'text/html,application/xhtml+xml' };

describe('console static files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'callplane-console-'));
  let server: Server;
  let url: string;
  beforeAll(async () => {
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Callplane</title><div id="app"></div>');
    writeFileSync(join(dir, 'assets', 'index-AbCd1234_x.js'), 'console.log(1)');
    writeFileSync(join(dir, 'assets', 'index-AbCd1234_x.js.gz'), gzipSync('console.log(1)'));
    writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    const app = express();
    app.use(consoleStatic(dir));
    app.use((_req, res) => res.status(404).json({ detail: 'Not Found', code: 'not_found' }));
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves index.html at / with no-cache', async () => {
    const r = await fetch(`${url}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('cache-control')).toBe(REVALIDATE);
    expect(await r.text()).toContain('<div id="app">');
  });

  it('caches hashed assets for a year and other files not at all', async () => {
    const js = await fetch(`${url}/assets/index-AbCd1234_x.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toBe(IMMUTABLE);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    const icon = await fetch(`${url}/favicon.svg`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('cache-control')).toBe(REVALIDATE);
  });

  it('sends the precompressed copy of a hashed asset to clients that accept gzip, the plain file to others', async () => {
    const raw = await new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      http.get(`${url}/assets/index-AbCd1234_x.js`, { headers: { 'accept-encoding': 'gzip, br' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(raw.headers['cache-control']).toBe(IMMUTABLE);
    expect(raw.headers['content-type']).toMatch(/^text\/javascript/);
    expect(raw.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(raw.body).toString()).toBe('console.log(1)');
    const plain = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
      http.get(`${url}/assets/index-AbCd1234_x.js`, { headers: { 'accept-encoding': 'identity' } }, (res) => (res.resume(), resolve(res.headers))).on('error', reject);
    });
    expect(plain['content-encoding']).toBeUndefined();
    expect(plain['content-length']).toBe(String('console.log(1)'.length));
  });

  it('answers client routes with the app (SPA fallback) but leaves missing files and other methods a 404', async () => {
    const route = await fetch(`${url}/agents/12`, { headers: HTML });
    expect(route.status).toBe(200);
    expect(route.headers.get('cache-control')).toBe(REVALIDATE);
    expect(await route.text()).toContain('<div id="app">');
    expect((await fetch(`${url}/assets/missing-12345678.js`, { headers: HTML })).status).toBe(404);
    expect((await fetch(`${url}/agents/12`)).status).toBe(404); // not a browser navigation
    expect((await fetch(`${url}/agents/12`, { method: 'POST', headers: HTML })).status).toBe(404);
  });

  it('never answers /api or /docs, and refuses to leave its folder', async () => {
    const api = await fetch(`${url}/api/v1/nothing`, { headers: HTML });
    expect(api.status).toBe(404);
    expect(await api.json()).toEqual({ detail: 'Not Found', code: 'not_found' });
    expect((await fetch(`${url}/docs/x`, { headers: HTML })).status).toBe(404);
    expect((await fetch(`${url}/%2e%2e/%2e%2e/etc/passwd`)).status).toBe(404);
  });

  it('says the console is not built when its folder is empty', async () => {
    const app = express();
    app.use(consoleStatic(join(dir, 'nowhere')));
    const other = app.listen(0, '127.0.0.1');
    await new Promise((r) => other.once('listening', r));
    const r = await fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
    expect(r.status).toBe(503);
    expect(((await r.json()) as { code: string }).code).toBe('console_not_built');
    await new Promise((r2) => other.close(r2));
  });
});

describe('console mounted in the service', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(async () => svc.close());

  it('keeps the API, the OpenAPI document and Swagger UI as they were', async () => {
    const api = await fetch(`${svc.url}/api/v1/no-such-thing`, { headers: HTML });
    expect(api.status).toBe(404);
    expect(((await api.json()) as { code: string }).code).toBe('not_found');
    expect((await fetch(`${svc.url}/api/v1/openapi.json`)).status).toBe(200);
    const docs = await fetch(`${svc.url}/docs/`, { headers: HTML });
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
  });

  it('answers / with the console (or says it is not built)', async () => {
    const r = await fetch(`${svc.url}/`, { headers: HTML });
    expect([200, 503]).toContain(r.status);
    if (r.status === 200) expect(r.headers.get('cache-control')).toBe(REVALIDATE);
  });
});
