/**
 * An ARI endpoint that redirects, points the SDK elsewhere, resolves to cloud metadata or breaks its event
 * socket fails only its own connection (a clear `lastError`, unhealthy, retried in the background) and never
 * raises an error outside a handler (which would end the process on every start).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeAriServer } from '../../test/fakes/ari/fake-ari-server.js';
import { providerFaultOf } from '../../plugins/provider-faults.js';
import { AriClient, type AriClientOptions, type AriEvent } from './ari.client.js';
import { until } from '../../test/support/until.js';

describe('ARI connection failures stay inside the connection', () => {
  let fake: FakeAriServer;
  let elsewhere: http.Server;
  let elsewhereUrl: string;
  let elsewhereHits: string[];
  const clients: AriClient[] = [];
  const escaped: unknown[] = [];
  const onEscape = (err: unknown) => escaped.push(err);

  function newClient(extra: Partial<AriClientOptions> = {}): AriClient {
    const c = new AriClient({
      url: fake.url, username: 'cp', password: 'pw', app: 'callplane', pingIntervalMs: 0,
      reconnect: { initialDelayMs: 30, maxDelayMs: 100, jitter: false }, allowPrivateNetwork: true, ...extra,
    });
    clients.push(c);
    return c;
  }

  beforeEach(async () => {
    escaped.length = 0;
    // jest reports an escaped error as a failure too; these listeners make it an explicit assertion
    process.on('uncaughtException', onEscape);
    process.on('unhandledRejection', onEscape);
    fake = await FakeAriServer.start({ username: 'cp', password: 'pw' });
    elsewhereHits = [];
    elsewhere = http.createServer((req, res) => {
      elsewhereHits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"swaggerVersion":"1.2","apis":[]}');
    });
    await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', () => r()));
    elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await fake.close();
    await new Promise<void>((r) => elsewhere.close(() => r()));
    process.off('uncaughtException', onEscape);
    process.off('unhandledRejection', onEscape);
  });

  it('an endpoint that redirects its api-docs fails the connection with a clear message and is never followed', async () => {
    fake.redirectApiDocs = { location: 'http://169.254.169.254/latest/meta-data/' };
    const client = newClient();
    const err = await client.connect().catch((e: unknown) => e);
    expect((err as Error).message).toBe('ARI endpoint answered a redirect (302) to http://169.254.169.254/latest/meta-data/; redirects are not followed');
    const h = client.health();
    expect(h).toMatchObject({ connected: false, reconnectAttempts: 1, lastError: (err as Error).message });
    await until('a background retry', () => client.health().reconnectAttempts >= 2);
    expect(escaped).toEqual([]);
  });

  it('a redirect answered to ari-client itself (after a clean preflight) fails the load instead of throwing "cb.redirect is not a function"', async () => {
    fake.redirectApiDocs = { location: `${elsewhereUrl}/ari/api-docs/resources.json`, after: 1 };
    const client = newClient({ reconnect: { initialDelayMs: 5_000, maxDelayMs: 5_000, jitter: false } });
    const err = await client.connect().catch((e: unknown) => e);
    expect((err as Error).message).toBe(`ARI endpoint answered a redirect (302) to ${elsewhereUrl}/ari/api-docs/resources.json; redirects are not followed`);
    expect(client.health().connected).toBe(false);
    expect(elsewhereHits).toEqual([]);
    // the next configuration still loads (the serialized load queue was not left hanging)
    fake.redirectApiDocs = undefined;
    const other = await FakeAriServer.start({ username: 'cp', password: 'pw' });
    try {
      const next = newClient({ url: other.url });
      await next.connect();
      expect(next.health().connected).toBe(true);
    } finally {
      await other.close();
    }
    expect(escaped).toEqual([]);
  });

  it('api-docs whose basePath points at another host are refused before ari-client sends anything there', async () => {
    fake.apiDocsBasePath = elsewhereUrl;
    const client = newClient();
    await expect(client.connect()).rejects.toThrow(`Asterisk ARI api-docs at ${fake.url} point at another host (basePath ${elsewhereUrl}/ari); refused`);
    expect(elsewhereHits).toEqual([]);
  });

  it('a host name resolving to the metadata service is refused at connect time; private addresses follow the setting', async () => {
    const port = new URL(fake.url).port;
    const toMetadata = newClient({ url: `http://169.254.169.254.nip.io:${port}`, resolve: async () => [{ address: '169.254.169.254', family: 4 }] });
    await expect(toMetadata.connect()).rejects.toThrow('ari_endpoint must not point at a cloud metadata service (169.254.169.254.nip.io resolves to 169.254.169.254)');
    const strict = newClient({ allowPrivateNetwork: false });
    await expect(strict.connect()).rejects.toThrow(/ari_endpoint points at a private or loopback address/);
    // a name resolving to the loopback fake is fine where private networks are allowed, and the connection is pinned to it
    const named = newClient({ url: `http://pbx.example:${port}`, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    await named.connect();
    expect(named.health().connected).toBe(true);
    expect(fake.requests.filter((r) => r.websocket && r.status === 101)).toHaveLength(1);
  });

  it('the credentials check goes through the same policy: checked addresses, no redirects', async () => {
    const port = new URL(fake.url).port;
    const toMetadata = newClient({ url: `http://169.254.169.254.nip.io:${port}`, resolve: async () => [{ address: '169.254.169.254', family: 4 }] });
    expect(await toMetadata.checkCredentials()).toEqual({ ok: false, message: 'ari_endpoint must not point at a cloud metadata service (169.254.169.254.nip.io resolves to 169.254.169.254)' });
    expect(fake.requests.filter((r) => r.path === '/ari/asterisk/info')).toEqual([]);
    expect(await newClient().checkCredentials()).toMatchObject({ ok: true });
    const redirecting = http.createServer((_req, res) => res.writeHead(302, { location: `${elsewhereUrl}/ari/asterisk/info` }).end());
    await new Promise<void>((r) => redirecting.listen(0, '127.0.0.1', () => r()));
    try {
      const c = newClient({ url: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}` });
      expect(await c.checkCredentials()).toEqual({ ok: false, message: expect.stringMatching(/answered a redirect \(HTTP 302\); redirects are not followed$/) });
      expect(elsewhereHits).toEqual([]);
    } finally {
      await new Promise<void>((r) => redirecting.close(() => r()));
    }
  });

  it('undeclared events and malformed messages are dropped; the socket stays up and later events arrive', async () => {
    for (const mode of ['undeclared-event', 'malformed'] as const) {
      fake.eventSocketMisbehaviour = mode;
      const client = newClient();
      const events: AriEvent[] = [];
      client.onEvent((e) => events.push(e));
      await client.connect();
      fake.simulateInbound({ channelId: `in-${mode}`, callerNumber: '+15550001', dialedExten: '200', app: 'callplane' });
      await until('the inbound event', () => events.some((e) => e.channelId === `in-${mode}`));
      expect(client.health().connected).toBe(true);
      // nothing came of the malformed messages; the undeclared event type is passed on as-is (the provider ignores it)
      expect(events.filter((e) => e.channelId !== 'ghost').map((e) => e.channelId)).toEqual([`in-${mode}`]);
      await client.close();
    }
    expect(escaped).toEqual([]);
  });

  it('a socket that breaks (invalid frame) marks the connection unhealthy with the reason and retries', async () => {
    fake.eventSocketMisbehaviour = 'bad-frame';
    const client = newClient();
    await client.connect().catch(() => undefined); // may open first, then break
    await until('the broken socket', () => !client.health().connected && /Invalid WebSocket frame/.test(client.health().lastError ?? ''));
    fake.eventSocketMisbehaviour = undefined;
    await until('a reconnect', () => client.health().connected);
    expect(escaped).toEqual([]);
  });

  it('an error escaping from inside ari-client is claimed as an ARI fault (the process guard survives it)', () => {
    const thrown = new TypeError('cb.redirect is not a function');
    thrown.stack = 'TypeError: cb.redirect is not a function\n    at Object.redirect (/srv/callplane/node_modules/swagger-client/lib/swagger.js:1300:19)';
    expect(providerFaultOf(thrown)).toMatchObject({ provider: 'ari', message: 'ari-client failed outside any handler: cb.redirect is not a function' });
    expect(providerFaultOf(new Error('something of ours'))).toBeUndefined();
  });
});
