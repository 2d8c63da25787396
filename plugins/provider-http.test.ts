import { describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../core/errors.js';
import { jsonOrNull, parseRetryAfter, providerHttp, retryDelayMs, type ProviderHttpOptions } from './provider-http.js';

interface Seen {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
}

function scripted(responses: Array<Response | Error>): { fetch: typeof fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const impl = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    seen.push({ url: String(url), method: String(init?.method), headers: { ...(init?.headers as Record<string, string>) }, body: init?.body as string | undefined });
    const next = responses.shift();
    if (!next) throw new Error('no scripted response left');
    if (next instanceof Error) throw next;
    return next;
  };
  return { fetch: impl as typeof fetch, seen };
}

function client(f: typeof fetch, waits: number[], extra: Partial<ProviderHttpOptions> = {}) {
  return providerHttp({
    provider: 'acme',
    name: 'Acme',
    baseUrl: 'http://acme.test/v1/',
    headers: () => ({ authorization: 'Bearer k' }),
    errorDetail: (body) => ((body as { error?: unknown } | null)?.error ? `: ${String((body as { error: unknown }).error)}` : ''),
    fetch: f,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...extra,
  });
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers });

describe('providerHttp', () => {
  it('sends JSON, form and query with the client headers and returns the parsed body', async () => {
    const { fetch, seen } = scripted([json(200, { ok: 1 }), new Response(null, { status: 204 }), json(201, [])]);
    const http = client(fetch, []);
    expect(await http.request('POST', '/calls', { what: 'dial', json: { a: 1 } })).toEqual({ status: 200, body: { ok: 1 }, text: '{"ok":1}', notFound: false });
    expect((await http.request('DELETE', '/calls/1', { what: 'hang up' })).body).toBeNull();
    await http.request('POST', '/numbers', { what: 'update', form: { x: 'a b', y: '+1' }, query: { 'f[n]': '+1' }, headers: { extra: 'yes' } });
    expect(seen[0]).toEqual({ url: 'http://acme.test/v1/calls', method: 'POST', headers: { accept: 'application/json', authorization: 'Bearer k', 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(seen[1]!.body).toBeUndefined();
    expect(seen[1]!.headers['content-type']).toBeUndefined();
    expect(seen[2]).toEqual({
      url: 'http://acme.test/v1/numbers?f%5Bn%5D=%2B1',
      method: 'POST',
      headers: { accept: 'application/json', authorization: 'Bearer k', extra: 'yes', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'x=a+b&y=%2B1',
    });
  });

  it('retries a 429 with Retry-After or exponential backoff, each wait capped, then gives up with a retryable error', async () => {
    const { fetch, seen } = scripted([json(429, {}, { 'retry-after': '2' }), json(429, {}), json(429, {}, { 'retry-after': '3600' }), json(429, { error: 'slow down' })]);
    const waits: number[] = [];
    const err = await client(fetch, waits, { retryBaseDelayMs: 100, maxRetryDelayMs: 5_000 }).request('GET', '/x', { what: 'fetch x' }).catch((e: unknown) => e);
    expect(waits).toEqual([2_000, 200, 5_000]);
    expect(seen).toHaveLength(4);
    expect(err).toBeInstanceOf(ProviderApiError);
    expect((err as ProviderApiError).message).toBe('Acme fetch x failed (HTTP 429: slow down)');
    expect((err as ProviderApiError).retryable).toBe(true);
    expect((err as ProviderApiError).provider).toBe('acme');
  });

  it('maps errors: not-found statuses, 4xx (not retryable), 5xx, unreadable answers, an unreachable API', async () => {
    const { fetch } = scripted([
      json(404, { error: 'gone' }),
      json(400, { error: 'bad number' }),
      new Response('<html>', { status: 502 }),
      new Response('not json', { status: 200 }),
      Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }),
    ]);
    const http = client(fetch, []);
    expect(await http.request('GET', '/a', { what: 'fetch a', notFoundStatuses: [404] })).toEqual({ status: 404, body: null, text: '{"error":"gone"}', notFound: true });
    await expect(http.request('GET', '/a', { what: 'fetch a', notFoundStatuses: [404] })).rejects.toMatchObject({ message: 'Acme fetch a failed (HTTP 400: bad number)', retryable: false });
    await expect(http.request('GET', '/a', { what: 'fetch a' })).rejects.toMatchObject({ message: 'Acme fetch a failed (HTTP 502)', retryable: true });
    await expect(http.request('GET', '/a', { what: 'fetch a' })).rejects.toMatchObject({ message: 'Acme fetch a returned an unreadable answer (HTTP 200)', retryable: true });
    await expect(http.request('GET', '/a', { what: 'fetch a' })).rejects.toMatchObject({ message: 'Acme fetch a failed: API unreachable (ECONNREFUSED)', retryable: true });
  });

  it('reads the words of a refusal answered as a value: its JSON, null when empty or not JSON', async () => {
    const { fetch } = scripted([json(422, { errors: [{ code: '90018' }] })]);
    const res = await client(fetch, []).request('POST', '/a', { what: 'transfer', notFoundStatuses: [422] });
    expect(res.body).toBeNull();
    expect(jsonOrNull(res.text)).toEqual({ errors: [{ code: '90018' }] });
    expect(jsonOrNull('')).toBeNull();
    expect(jsonOrNull('<html>')).toBeNull();
  });

  it("reads an unreadable 2xx answer as null with unreadableBody: 'null'", async () => {
    const { fetch } = scripted([new Response('not json', { status: 200 })]);
    expect((await client(fetch, [], { unreadableBody: 'null' }).request('GET', '/a', { what: 'fetch a' })).body).toBeNull();
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('1.5')).toBe(1_500);
    expect(parseRetryAfter(7)).toBe(7_000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(new Date(Date.now() - 60_000).toUTCString())).toBe(0);
    expect(retryDelayMs(3, undefined)).toBe(4_000);
    expect(retryDelayMs(10, undefined)).toBe(10_000);
  });
});
