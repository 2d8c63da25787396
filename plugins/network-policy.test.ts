import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import {
  assertConnectable,
  cachingResolver,
  checkUrlShape,
  classifyAddress,
  NetworkPolicyError,
  pinnedLookup,
  PinnedPoster,
  PinnedPostTimeoutError,
  policyFetch,
  type HostResolver,
} from './network-policy.js';

const strict = { allowPrivateNetwork: false, field: 'base_url' };
const open = { allowPrivateNetwork: true, field: 'base_url' };
const resolverOf = (table: Record<string, string[]>): HostResolver => async (host) => {
  const list = table[host];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

describe('checkUrlShape (save time)', () => {
  it('accepts a public http(s) URL and names the field in every issue', () => {
    expect(checkUrlShape('https://api.example.com/v1', strict)).toEqual([]);
    expect(checkUrlShape('', strict)).toEqual([['base_url', 'base_url is required']]);
    expect(checkUrlShape('not a url', strict)).toEqual([['base_url', 'base_url must be a valid http or https URL']]);
    expect(checkUrlShape('ftp://example.com/', strict)).toEqual([['base_url', 'base_url must use http or https']]);
    expect(checkUrlShape('https://user:pw@example.com/', strict)).toEqual([['base_url', 'base_url must not carry credentials in the URL']]);
  });

  it('takes ws/wss when asked', () => {
    expect(checkUrlShape('wss://api.example.com/stream', { ...strict, protocols: ['ws:', 'wss:'] })).toEqual([]);
    expect(checkUrlShape('wss://api.example.com/stream', strict)[0][1]).toMatch(/must use http or https/);
  });

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://2852039166/', // decimal
    'http://0251.0376.0251.0376/', // octal
    'http://0xa9.0xfe.0xa9.0xfe/', // hex
    'http://0xa9fea9fe/',
    'http://169.254.43518/',
    'http://[::ffff:169.254.169.254]/', // IPv4-mapped IPv6
    'http://[::ffff:a9fe:a9fe]/',
    'http://[64:ff9b::a9fe:a9fe]/', // NAT64
    'http://[2002:a9fe:a9fe::1]/', // 6to4
    'http://[fd00:ec2::254]/',
    'http://metadata.google.internal/',
    'http://METADATA.GOOGLE.INTERNAL./',
    'ws://169.254.169.254/',
  ])('refuses the metadata service %s even where private networks are allowed', (url) => {
    const issues = checkUrlShape(url, { ...open, protocols: ['http:', 'https:', 'ws:', 'wss:'] });
    expect(issues).toEqual([['base_url', 'base_url must not point at a cloud metadata service']]);
  });

  it.each(['http://127.0.0.1:8088', 'http://10.0.0.2', 'http://192.168.1.1', 'http://100.64.0.1', 'http://[::1]/', 'http://[fd12::1]/', 'http://[fe80::1]/', 'http://localhost/', 'http://017700000001/', 'http://[::ffff:10.0.0.1]/'])(
    'refuses private %s only when the setting forbids it',
    (url) => {
      expect(checkUrlShape(url, strict)[0][1]).toMatch(/private or loopback address.*CALLPLANE_ALLOW_PRIVATE_NETWORK/);
      expect(checkUrlShape(url, open)).toEqual([]);
    },
  );
});

describe('classifyAddress', () => {
  it('classes resolved addresses in every spelling', () => {
    expect(classifyAddress('8.8.8.8')).toBe('public');
    expect(classifyAddress('2606:4700::1111')).toBe('public');
    expect(classifyAddress('::ffff:8.8.8.8')).toBe('public');
    expect(classifyAddress('169.254.169.254')).toBe('metadata');
    expect(classifyAddress('2852039166')).toBe('metadata');
    expect(classifyAddress('0251.0376.0251.0376')).toBe('metadata');
    expect(classifyAddress('::ffff:169.254.169.254')).toBe('metadata');
    expect(classifyAddress('64:ff9b::169.254.169.254')).toBe('metadata');
    expect(classifyAddress('64:ff9b::8.8.8.8')).toBe('private');
    expect(classifyAddress('172.16.0.1')).toBe('private');
    expect(classifyAddress('not-an-address')).toBe('private');
  });
});

describe('assertConnectable (connect time)', () => {
  it('refuses a name that resolves to the metadata service (169.254.169.254.nip.io), even with private networks allowed', async () => {
    const resolve = resolverOf({ '169.254.169.254.nip.io': ['169.254.169.254'] });
    const err = await assertConnectable('http://169.254.169.254.nip.io/', { ...open, resolve }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkPolicyError);
    expect((err as NetworkPolicyError).code).toBe('refused_address');
    expect((err as Error).message).toBe('base_url must not point at a cloud metadata service (169.254.169.254.nip.io resolves to 169.254.169.254)');
  });

  it('checks every resolved address, mapped IPv6 and loose IPv4 forms included', async () => {
    const resolve = resolverOf({
      'mixed.example': ['93.184.216.34', '::ffff:169.254.169.254'],
      'decimal.example': ['2852039166'],
      'octal.example': ['0251.0376.0251.0376'],
      'lan.example': ['93.184.216.34', '10.1.2.3'],
    });
    for (const host of ['mixed.example', 'decimal.example', 'octal.example']) {
      await expect(assertConnectable(`https://${host}/`, { ...open, resolve })).rejects.toThrow(/cloud metadata service/);
    }
    await expect(assertConnectable('https://lan.example/', { ...strict, resolve })).rejects.toThrow(/lan\.example resolves to 10\.1\.2\.3.*CALLPLANE_ALLOW_PRIVATE_NETWORK/);
    const ok = await assertConnectable('https://lan.example/', { ...open, resolve });
    expect(ok.addresses.map((a) => a.address)).toEqual(['93.184.216.34', '10.1.2.3']);
  });

  it('names an unresolvable host and refuses credentials before resolving', async () => {
    const resolve = resolverOf({});
    await expect(assertConnectable('https://nowhere.example/', { ...strict, label: 'OpenAI base URL', resolve })).rejects.toThrow('OpenAI base URL host nowhere.example could not be resolved (ENOTFOUND)');
    await expect(assertConnectable('https://u:p@nowhere.example/', { ...strict, resolve })).rejects.toMatchObject({ code: 'invalid_url' });
  });

  it('pins: the lookup answers only the checked addresses', async () => {
    const target = await assertConnectable('http://api.example/', { ...open, resolve: resolverOf({ 'api.example': ['203.0.113.7', '2001:db8::7'] }) });
    const one = await new Promise((r) => target.lookup('api.example', { family: 6 }, (_e, address, family) => r([address, family])));
    expect(one).toEqual(['2001:db8::7', 6]);
    const all = await new Promise((r) => pinnedLookup(target.addresses)('anything', { all: true }, (_e, list) => r(list)));
    expect(all).toEqual([{ address: '203.0.113.7', family: 4 }, { address: '2001:db8::7', family: 6 }]);
  });
});

describe('policyFetch against a real local server', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  async function serve(handler: http.RequestListener): Promise<string> {
    server = http.createServer(handler);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it('refuses a 302 to the metadata service and never follows it', async () => {
    const seen: string[] = [];
    const base = await serve((req, res) => {
      seen.push(req.url ?? '');
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
    });
    const err = await policyFetch(`${base}/ari/api-docs/resources.json`, {}, { ...open, label: 'ARI endpoint' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkPolicyError);
    expect((err as NetworkPolicyError).code).toBe('redirect_refused');
    expect((err as Error).message).toBe('ARI endpoint answered a redirect (302) to http://169.254.169.254/latest/meta-data/; redirects are not followed');
    expect(seen).toEqual(['/ari/api-docs/resources.json']);
  });

  it('returns other statuses with headers and a streamed body, sends the body, connects to the pinned address', async () => {
    const base = await serve((req, res) => {
      let body = '';
      req.on('data', (c) => (body += String(c)));
      req.on('end', () => res.writeHead(201, { 'content-type': 'application/json', 'x-host': req.headers.host ?? '' }).end(JSON.stringify({ method: req.method, body, type: req.headers['content-type'] })));
    });
    const port = new URL(base).port;
    // a name that "resolves" to the loopback server: the request goes to the checked address
    const res = await policyFetch(`http://svc.example:${port}/x?y=1`, { method: 'POST', body: new URLSearchParams({ a: 'b' }) }, { ...open, resolve: resolverOf({ 'svc.example': ['127.0.0.1'] }) });
    expect(res.status).toBe(201);
    expect(res.headers.get('x-host')).toBe(`svc.example:${port}`);
    expect(await res.json()).toEqual({ method: 'POST', body: 'a=b', type: 'application/x-www-form-urlencoded;charset=UTF-8' });
    await expect(policyFetch(`${base}/`, {}, strict)).rejects.toThrow(/private or loopback/);
  });

  it('sends headers given as a record, a Headers or pairs under lower-case names, repeated ones joined, a given content-type kept', async () => {
    const base = await serve((req, res) => res.end(JSON.stringify({ type: req.headers['content-type'], accept: req.headers.accept, custom: req.headers['x-custom'] })));
    const sent = async (headers: Headers | Record<string, string> | Array<[string, string]>) =>
      (await policyFetch(`${base}/`, { method: 'POST', headers, body: '{}' }, open)).json();
    expect(await sent({ 'Content-Type': 'application/json', Accept: 'text/event-stream', 'X-Custom': ' a ' })).toEqual({ type: 'application/json', accept: 'text/event-stream', custom: 'a' });
    expect(await sent(new Headers([['x-custom', 'a'], ['X-Custom', 'b']]))).toEqual({ type: 'text/plain;charset=UTF-8', custom: 'a, b' });
    expect(await sent([['X-Custom', 'a'], ['x-custom', 'b'], ['accept', 'application/json']])).toEqual({ type: 'text/plain;charset=UTF-8', accept: 'application/json', custom: 'a, b' });
  });

  it('an abort mid-body cuts the connection (the body fails as a reset, as with node\'s own signal option), and a signal outliving its requests keeps no listener', async () => {
    const base = await serve((req, res) => {
      if (req.url === '/done') return void res.end('ok');
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part;');
      const t = setTimeout(() => res.end('never'), 5_000);
      res.on('close', () => clearTimeout(t));
    });
    const a = new AbortController();
    const res = await policyFetch(`${base}/slow`, { signal: a.signal }, open);
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first part;');
    a.abort();
    await expect(reader.read()).rejects.toMatchObject({ code: 'ECONNRESET' });

    const kept = new AbortController();
    for (let i = 0; i < 3; i++) expect(await (await policyFetch(`${base}/done`, { signal: kept.signal }, open)).text()).toBe('ok');
    await new Promise((r) => setImmediate(r));
    expect(getEventListeners(kept.signal, 'abort')).toHaveLength(0);
  });

  it('rejects with the socket error when nothing listens, and with the abort reason when aborted', async () => {
    const base = await serve(() => undefined); // never answers
    await expect(policyFetch(`${base}/`, { signal: AbortSignal.timeout(50) }, open)).rejects.toMatchObject({ name: 'TimeoutError' });
    const closedPort = new URL(base).port;
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    await expect(policyFetch(`http://127.0.0.1:${closedPort}/`, {}, open)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('cachingResolver (how the system resolver is reused)', () => {
  const counting = (table: Record<string, string[]>) => {
    const asked: string[] = [];
    const base = resolverOf(table);
    return { asked, resolve: (host: string) => (asked.push(host), base(host)) };
  };

  it('reuses an answer for ttlMs, per host, and asks again after it', async () => {
    let t = 0;
    const dns = counting({ 'a.example': ['203.0.113.1'], 'b.example': ['203.0.113.2'] });
    const resolve = cachingResolver(dns.resolve, { ttlMs: 5_000, now: () => t });
    expect(await resolve('a.example')).toEqual([{ address: '203.0.113.1', family: 4 }]);
    t = 4_999;
    await resolve('a.example');
    await resolve('b.example');
    expect(dns.asked).toEqual(['a.example', 'b.example']);
    t = 5_000;
    await resolve('a.example');
    expect(dns.asked).toEqual(['a.example', 'b.example', 'a.example']);
  });

  it('shares one lookup in flight, forgets failures, hands out copies and keeps at most maxHosts', async () => {
    const dns = counting({ 'a.example': ['203.0.113.1'], 'b.example': ['203.0.113.2'] });
    const resolve = cachingResolver(dns.resolve, { ttlMs: 5_000, maxHosts: 1, now: () => 0 });
    const [one, two] = await Promise.all([resolve('a.example'), resolve('a.example')]);
    expect(dns.asked).toEqual(['a.example']);
    one[0].address = '10.0.0.1';
    expect(two[0].address).toBe('203.0.113.1');
    expect((await resolve('a.example'))[0].address).toBe('203.0.113.1');
    await expect(resolve('gone.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(resolve('gone.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await resolve('b.example');
    await resolve('a.example');
    expect(dns.asked).toEqual(['a.example', 'gone.example', 'gone.example', 'b.example', 'a.example']);
  });

  it('a remembered answer is still checked against each caller\'s policy, and pinned', async () => {
    const resolve = cachingResolver(resolverOf({ 'svc.example': ['10.1.2.3'], 'meta.example': ['169.254.169.254'] }), { ttlMs: 60_000 });
    const target = await assertConnectable('http://svc.example/', { ...open, resolve });
    expect(target.addresses).toEqual([{ address: '10.1.2.3', family: 4 }]);
    await expect(assertConnectable('http://svc.example/', { ...strict, resolve })).rejects.toMatchObject({ code: 'refused_address' });
    await expect(assertConnectable('http://meta.example/', { ...open, resolve })).rejects.toMatchObject({ code: 'refused_address' });
    await expect(assertConnectable('http://meta.example/', { ...open, resolve })).rejects.toMatchObject({ code: 'refused_address' });
  });
});

describe('PinnedPoster (webhook deliveries)', () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });

  /** A server on `host` (port 0 = any) that records each request's host header and the socket's local address. */
  async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void, host = '127.0.0.1', port = 0) {
    const seen: Array<{ host: string | undefined; local: string | undefined; body: string }> = [];
    const sockets = { opened: 0, closed: 0 };
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += String(c)));
      req.on('end', () => {
        seen.push({ host: req.headers.host, local: req.socket.localAddress, body });
        handler(req, res);
      });
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', (s) => {
      sockets.opened++;
      s.on('close', () => sockets.closed++);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(port, host, () => r()));
    return { port: (server.address() as AddressInfo).port, seen, sockets };
  }
  const post = (p: PinnedPoster, url: string, timeoutMs = 10_000) => p.post(url, { headers: { 'content-type': 'application/json' }, body: '{"a":1}', timeoutMs });

  it('sends the caller\'s headers once each, the URL\'s Host and the body\'s length, on a kept-alive connection', async () => {
    const raw: string[][] = [];
    const s = await serve((req, res) => { raw.push(req.rawHeaders); res.writeHead(200).end(); });
    const p = new PinnedPoster({ ...open, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const headers = { 'content-type': 'application/json', 'callplane-delivery-id': '7', Host: 'evil.example', 'Content-Length': '1' };
    for (let i = 0; i < 2; i++) expect(await p.post(`http://hooks.invalid:${s.port}/a?b=1`, { headers, body: '{"é":1}', timeoutMs: 10_000 })).toEqual({ status: 200 });
    const pairs = (r: string[]) => r.reduce<string[]>((acc, v, i) => (i % 2 ? acc : [...acc, `${v.toLowerCase()}: ${r[i + 1]}`]), []);
    expect(raw.map(pairs)).toEqual([0, 1].map(() => [
      `host: hooks.invalid:${s.port}`, 'connection: keep-alive', 'content-type: application/json', 'callplane-delivery-id: 7', 'content-length: 8',
    ]));
    expect(s.sockets.opened).toBe(1);
    expect(s.seen.map((x) => x.body)).toEqual(['{"é":1}', '{"é":1}']);
    p.close();
  });

  it('sends a POST once: a kept connection the receiver closes under it fails the attempt (the outbox retries it), it is never sent again', async () => {
    let n = 0;
    const s = await serve((req, res) => {
      if (++n === 2) req.socket.destroy();
      else res.writeHead(200).end();
    });
    const p = new PinnedPoster(open);
    const url = `http://127.0.0.1:${s.port}/hooks`;
    expect(await post(p, url)).toEqual({ status: 200 });
    const err = await post(p, url).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ECONNRESET', message: 'socket hang up' });
    expect(s.seen).toHaveLength(2);
    expect(await post(p, url)).toEqual({ status: 200 });
    expect(s.seen).toHaveLength(3);
    p.close();
  });

  it('https: connects to the checked address, names the URL\'s host in TLS (SNI), and verifies the certificate', async () => {
    // a self-signed certificate for hooks.test (test/fixtures/tls): the server sees the name the client asked for;
    // the client refuses the certificate (no trusted issuer), so verification is on and nothing is sent
    const dir = new URL('../test/fixtures/tls/', import.meta.url);
    const names: Array<string | undefined> = [];
    const context = { key: readFileSync(new URL('hooks-test.key', dir)), cert: readFileSync(new URL('hooks-test.crt', dir)) };
    const server = tls.createServer({
      ...context,
      SNICallback: (name, cb) => {
        names.push(name);
        cb(null, tls.createSecureContext(context));
      },
    }, (socket) => socket.destroy());
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    const asked: string[] = [];
    const p = new PinnedPoster({ ...open, resolve: async (host) => { asked.push(host); return [{ address: '127.0.0.1', family: 4 }]; } });
    try {
      const err = await post(p, `https://hooks.test:${port}/hooks`).catch((e: unknown) => e);
      expect((err as NodeJS.ErrnoException).code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
      expect(asked).toEqual(['hooks.test']);
      expect(names).toEqual(['hooks.test']);
    } finally {
      p.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('refuses a redirect and never follows it', async () => {
    const s = await serve((_req, res) => res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end());
    const p = new PinnedPoster({ ...open, label: 'Webhook endpoint' });
    const err = await post(p, `http://127.0.0.1:${s.port}/hooks`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkPolicyError);
    expect(err).toMatchObject({ code: 'redirect_refused', redirect: { status: 302, location: 'http://169.254.169.254/latest/meta-data/' } });
    expect((err as Error).message).toBe('Webhook endpoint answered a redirect (302) to http://169.254.169.254/latest/meta-data/; redirects are not followed');
    expect(s.seen).toHaveLength(1);
    p.close();
  });

  it('connects to the checked address (never the system resolver), keeps the connection alive, and answers other statuses as they are', async () => {
    let n = 0;
    const s = await serve((_req, res) => res.writeHead(++n === 3 ? 503 : 200).end('ignored body'));
    const asked: string[] = [];
    const p = new PinnedPoster({ ...open, resolve: async (host) => { asked.push(host); return [{ address: '127.0.0.1', family: 4 }]; } });
    // hooks.invalid cannot resolve anywhere: reaching the server proves the pinned lookup was used
    expect(await post(p, `http://hooks.invalid:${s.port}/a`)).toEqual({ status: 200 });
    expect(await post(p, `http://hooks.invalid:${s.port}/a`)).toEqual({ status: 200 });
    expect(await post(p, `http://hooks.invalid:${s.port}/a`)).toEqual({ status: 503 });
    expect(s.seen.map((x) => x.host)).toEqual(Array(3).fill(`hooks.invalid:${s.port}`));
    expect(s.seen.map((x) => x.body)).toEqual(Array(3).fill('{"a":1}'));
    expect(s.sockets.opened).toBe(1);
    expect(asked).toEqual(['hooks.invalid']);
    p.close();
  });

  it('closes DNS rebinding: a check is reused only within checkCacheMs and only towards the addresses it checked; the next answer is checked again', async () => {
    const first = await serve((_req, res) => res.end());
    const second = await serve((_req, res) => res.end(), '127.0.0.2', first.port);
    let answer = '127.0.0.1';
    let t = 0;
    const asked: string[] = [];
    const p = new PinnedPoster({ ...open, resolve: async () => { asked.push(answer); return [{ address: answer, family: 4 }]; } }, { checkCacheMs: 1000, now: () => t });
    const url = `http://hooks.invalid:${first.port}/`;
    expect(await post(p, url)).toEqual({ status: 200 });
    // the name now answers the metadata service: within the second, the request still goes to the checked address
    answer = '169.254.169.254';
    t = 999;
    expect(await post(p, url)).toEqual({ status: 200 });
    expect(first.seen).toHaveLength(2);
    expect(asked).toEqual(['127.0.0.1']);
    // past it, the new answer is checked and refused before any connection
    t = 1000;
    await expect(post(p, url)).rejects.toMatchObject({ code: 'refused_address' });
    expect(asked).toEqual(['127.0.0.1', '169.254.169.254']);
    // a refusal is not kept: the next send checks again; an allowed new answer gets new connections to that address,
    // and the kept-alive one to the old address is closed, never reused
    answer = '127.0.0.2';
    expect(await post(p, url)).toEqual({ status: 200 });
    expect(first.seen).toHaveLength(2);
    expect(second.seen).toEqual([{ host: `hooks.invalid:${first.port}`, local: '127.0.0.2', body: '{"a":1}' }]);
    await new Promise((r) => setTimeout(r, 20));
    expect(first.sockets).toEqual({ opened: 1, closed: 1 });
    p.close();
  });

  it('closes a kept connection once it sat idle for idleSocketMs, and never one in use', async () => {
    const s = await serve((_req, res) => res.end());
    const p = new PinnedPoster(open, { idleSocketMs: 150 });
    const url = `http://127.0.0.1:${s.port}/`;
    // used every ~10 ms for several sweeps: the one connection stays open
    for (let i = 0; i < 50; i++) {
      expect(await post(p, url)).toEqual({ status: 200 });
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(s.sockets).toEqual({ opened: 1, closed: 0 });
    // idle: closed within two sweeps, and the next request opens a new one
    await new Promise((r) => setTimeout(r, 450));
    expect(s.sockets).toEqual({ opened: 1, closed: 1 });
    expect(await post(p, url)).toEqual({ status: 200 });
    expect(s.sockets.opened).toBe(2);
    p.close();
  });

  it('refuses private and metadata addresses as the policy says, for names and literals', async () => {
    const toMetadata = new PinnedPoster({ ...open, resolve: async () => [{ address: '169.254.169.254', family: 4 }] });
    await expect(post(toMetadata, 'https://hooks.example.com/')).rejects.toMatchObject({ code: 'refused_address' });
    const strictPoster = new PinnedPoster({ ...strict, resolve: async () => [{ address: '10.1.2.3', family: 4 }] });
    await expect(post(strictPoster, 'https://hooks.example.com/')).rejects.toMatchObject({ code: 'refused_address' });
    await expect(post(strictPoster, 'https://127.0.0.1/')).rejects.toMatchObject({ code: 'refused_address' });
  });

  it('bounds the whole exchange by timeoutMs: no answer fails, a status that came in time counts though its body never ends', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/slow-body') {
        res.writeHead(200);
        res.write('part');
        return;
      }
      // /never: no answer at all
    });
    const p = new PinnedPoster(open);
    const started = Date.now();
    await expect(post(p, `http://127.0.0.1:${s.port}/never`, 100)).rejects.toBeInstanceOf(PinnedPostTimeoutError);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await post(p, `http://127.0.0.1:${s.port}/slow-body`, 100)).toEqual({ status: 200 });
    p.close();
  });

  it('bounds every request in flight with one timer, each by its own deadline (a shorter one sent later included)', async () => {
    const s = await serve(() => undefined); // never answers
    const p = new PinnedPoster(open);
    const url = `http://127.0.0.1:${s.port}/never`;
    await post(p, url, 50).catch(() => undefined); // the check is made and kept (a check is per URL)
    const timers = jest.spyOn(globalThis, 'setTimeout');
    try {
      const started = Date.now();
      const ended: Array<[string, number]> = [];
      const send = (name: string, timeoutMs: number) =>
        post(p, url, timeoutMs).then(() => ended.push([`${name} answered`, Date.now() - started]), (e: unknown) => ended.push([e instanceof PinnedPostTimeoutError ? name : `${name}: ${String(e)}`, Date.now() - started]));
      // ten sends with ascending deadlines arm one timer between them (a timer per send would be ten)
      const long = Array.from({ length: 10 }, (_v, i) => send(`long${i}`, 400));
      await new Promise((r) => setImmediate(r));
      const armedForTen = timers.mock.calls.length;
      // a later send with an earlier deadline re-arms the one timer for it
      const short = send('short', 100);
      await new Promise((r) => setImmediate(r));
      const armedForEleven = timers.mock.calls.length;
      await Promise.all([...long, short]);
      expect(armedForTen).toBe(1);
      expect(armedForEleven).toBe(2);
      expect(ended.map(([name]) => name)).toEqual(['short', ...Array.from({ length: 10 }, (_v, i) => `long${i}`)]);
      const at = new Map(ended);
      expect(at.get('short')).toBeGreaterThanOrEqual(95);
      expect(at.get('short')).toBeLessThan(350);
      expect(at.get('long0')).toBeGreaterThanOrEqual(395);
    } finally {
      timers.mockRestore();
      p.close();
    }
  });

  it('fails by rejecting, never by throwing, also when the request cannot even be built', async () => {
    const s = await serve((_req, res) => res.end());
    const p = new PinnedPoster(open);
    const url = `http://127.0.0.1:${s.port}/`;
    expect(await post(p, url)).toEqual({ status: 200 }); // the check is kept: the next call builds the request at once
    let sent: Promise<unknown> | undefined;
    // a header value with a line break: the request is refused before anything is written
    expect(() => { sent = p.post(url, { headers: { 'x-bad': 'a\r\nb' }, body: '{}', timeoutMs: 1000 }); }).not.toThrow();
    await expect(sent).rejects.toThrow(/header/i);
    expect(s.seen).toHaveLength(1);
    p.close();
  });

  it('rejects with the socket error when nothing listens', async () => {
    const s = await serve(() => undefined);
    const server = servers.pop()!;
    await new Promise<void>((r) => server.close(() => r()));
    await expect(post(new PinnedPoster(open), `http://127.0.0.1:${s.port}/`)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
