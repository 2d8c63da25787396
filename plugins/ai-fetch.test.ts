import { afterEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { AiFetch, aiPolicyFetch } from './ai-fetch.js';
import type { HostResolver } from './network-policy.js';

const policy = { allowPrivateNetwork: true, field: 'base_url', label: 'AI service base_url' };

/** A local server counting its connections and requests; `handler` answers. */
async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse, nthOnSocket: number) => void) {
  const perSocket = new WeakMap<Socket, number>();
  const stats = { connections: 0, requests: 0 };
  const server = http.createServer((req, res) => {
    stats.requests++;
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      (req as { body?: string }).body = Buffer.concat(chunks).toString('utf8');
      handler(req, res, n);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', () => stats.connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, stats, server };
}

const servers: http.Server[] = [];
const clients: AiFetch[] = [];
const client = (opts: ConstructorParameters<typeof AiFetch>[1] = {}, resolve?: HostResolver) => {
  const c = new AiFetch({ ...policy, ...(resolve ? { resolve } : {}) }, opts);
  clients.push(c);
  return c;
};

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('AiFetch (the AI services\' policy fetch)', () => {
  it('answers a Response with the status, headers and streamed body, and sends the body and headers as given', async () => {
    const { url } = await serve((req, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-echo': String(req.headers['content-type']) });
      res.write('{"got":');
      res.end(`${JSON.stringify((req as { body?: string }).body)}}`);
    });
    const c = client();
    const res = await c.fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('x-echo')).toBe('application/json');
    expect(await res.json()).toEqual({ got: '{"a":1}' });
    const bin = await c.fetch(`${url}/v1/audio/transcriptions`, { method: 'POST', body: new Uint8Array([65, 66, 67]).subarray(1) });
    expect(await bin.json()).toEqual({ got: 'BC' });
  });

  it('reuses a URL\'s check for checkCacheMs, then resolves and checks the host again', async () => {
    const { url } = await serve((_req, res) => res.end('ok'));
    const port = new URL(url).port;
    let lookups = 0;
    let now = 1_000;
    const c = client({ now: () => now, checkCacheMs: 1_000 }, async () => {
      lookups++;
      return [{ address: '127.0.0.1', family: 4 }];
    });
    const at = `http://ai.test:${port}/v1/audio/speech`;
    for (let i = 0; i < 3; i++) expect(await (await c.fetch(at, { method: 'POST', body: 'x' })).text()).toBe('ok');
    expect(lookups).toBe(1);
    now += 1_000;
    await (await c.fetch(at, { method: 'POST', body: 'x' })).text();
    expect(lookups).toBe(2);
  });

  it('never keeps a failed check: a refused address is refused on every request', async () => {
    let lookups = 0;
    const c = new AiFetch({ ...policy, allowPrivateNetwork: false, resolve: async () => (lookups++, [{ address: '10.0.0.1', family: 4 }]) });
    clients.push(c);
    await expect(c.fetch('http://ai.test/v1/x')).rejects.toMatchObject({ code: 'refused_address', field: 'base_url' });
    await expect(c.fetch('http://ai.test/v1/x')).rejects.toMatchObject({ code: 'refused_address' });
    expect(lookups).toBe(2);
  });

  it('keeps the connections of 40 requests in flight together for the next 40 (node\'s default pool kept 16)', async () => {
    const { url, stats } = await serve((_req, res) => setTimeout(() => res.end('ok'), 20));
    const c = client();
    const wave = () => Promise.all(Array.from({ length: 40 }, async () => (await c.fetch(`${url}/v1/audio/speech`, { method: 'POST', body: 'x' })).text()));
    await wave();
    expect(stats.connections).toBe(40);
    await wave();
    expect(stats.requests).toBe(80);
    expect(stats.connections).toBe(40);
  });

  it('sends a request once more on a new connection when the kept one was closed by the server as it was sent', async () => {
    // the second request on any connection finds it closed (a keep-alive timeout crossing the request)
    const { url, stats } = await serve((req, res, n) => {
      if (n === 2) {
        req.socket.destroy();
        return;
      }
      res.end(`ok ${(req as { body?: string }).body}`);
    });
    const c = client();
    expect(await (await c.fetch(`${url}/v1/chat/completions`, { method: 'POST', body: 'one' })).text()).toBe('ok one');
    expect(await (await c.fetch(`${url}/v1/chat/completions`, { method: 'POST', body: 'two' })).text()).toBe('ok two');
    expect(stats.connections).toBe(2);
  });

  it('does not send again a request whose answer had begun, nor one on a new connection', async () => {
    const { url, stats } = await serve((req) => req.socket.destroy());
    const c = client();
    await expect(c.fetch(`${url}/v1/chat/completions`, { method: 'POST', body: 'x' })).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(stats.requests).toBe(1);
  });

  it('refuses a redirect without following it', async () => {
    let followed = 0;
    const target = await serve((_req, res) => {
      followed++;
      res.end('x');
    });
    const { url } = await serve((_req, res) => {
      res.writeHead(302, { location: `${target.url}/v1/elsewhere` });
      res.end();
    });
    await expect(client().fetch(`${url}/v1/audio/speech`, { method: 'POST', body: 'x' })).rejects.toMatchObject({
      code: 'redirect_refused',
      message: expect.stringMatching(/^AI service base_url answered a redirect \(302\) to .*\/v1\/elsewhere; redirects are not followed$/),
    });
    expect(followed).toBe(0);
  });

  it('streams the body as it comes, and an abort ends the body\'s read with the AbortError', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/pcm' });
      res.write(Buffer.alloc(100, 1));
      void released.then(() => res.end(Buffer.alloc(50, 2)));
    });
    const controller = new AbortController();
    const res = await client().fetch(`${url}/v1/audio/speech`, { method: 'POST', body: 'x', signal: controller.signal });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.value?.byteLength).toBe(100);
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
    release();
  });

  it('a large chunked body read slowly arrives whole: the connection pauses while nobody reads and resumes on the next read', async () => {
    const audio = Buffer.alloc(1 << 20);
    for (let i = 0; i < audio.length; i++) audio[i] = i % 251;
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/pcm', 'transfer-encoding': 'chunked' });
      void (async () => {
        for (let i = 0; i < audio.length; i += 4800) await new Promise<void>((r) => res.write(audio.subarray(i, i + 4800), () => r()));
        res.end();
      })();
    });
    const res = await client().fetch(`${url}/v1/audio/speech`, { method: 'POST', body: 'x' });
    const reader = res.body!.getReader();
    const parts: Uint8Array[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      await new Promise((r) => setImmediate(r)); // a slow consumer: the stream's queue fills, undici pauses
    }
    expect(Buffer.concat(parts).equals(audio)).toBe(true);
  });

  it('an abort before the answer rejects with the signal\'s reason', async () => {
    const { url } = await serve(() => undefined);
    const controller = new AbortController();
    const pending = client().fetch(`${url}/v1/chat/completions`, { method: 'POST', body: 'x', signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('a cancelled body closes its connection instead of returning it to the pool', async () => {
    const { url, stats } = await serve((_req, res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(10));
    });
    const c = client();
    const res = await c.fetch(`${url}/v1/audio/speech`, { method: 'POST', body: 'x' });
    await res.body!.cancel();
    const again = c.fetch(`${url}/v1/audio/speech`, { method: 'POST', body: 'y' });
    const r2 = await again;
    await r2.body!.cancel();
    expect(stats.connections).toBe(2);
  });

  it('the language models\' and the speech clients\' fetches share one pool: a model request reuses the connection a transcription freed', async () => {
    const { url, stats } = await serve((_req, res) => res.end('ok'));
    const forModels = aiPolicyFetch(true);
    const forSpeech = aiPolicyFetch(true);
    expect(await (await forSpeech(`${url}/v1/audio/transcriptions`, { method: 'POST', body: 'x' })).text()).toBe('ok');
    expect(await (await forModels(`${url}/v1/chat/completions`, { method: 'POST', body: 'y' })).text()).toBe('ok');
    expect(stats.requests).toBe(2);
    expect(stats.connections).toBe(1);
  });
});
