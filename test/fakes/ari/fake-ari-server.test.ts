/**
 * Proves the fake satisfies the real SDK end to end, including ari-client's own event WebSocket, which
 * decodes each message with the `events` api-docs models and throws on an undeclared event type.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { createRequire } from 'node:module';
import { ARI_EVENT_TYPES, ariApiDocs } from './ari-api-docs.js';
import { FakeAriServer } from './fake-ari-server.js';

interface SdkClient {
  on(event: string, cb: (event: { type: string }, resource?: unknown) => void): void;
  start(app: string): Promise<void>;
  stop(): void;
  channels: { originate(p: Record<string, unknown>): Promise<{ id: string }>; externalMedia(p: Record<string, unknown>): Promise<{ id: string; name: string; state: string }> };
  bridges: {
    create(p: Record<string, unknown>): Promise<{ id: string }>;
    get(p: Record<string, unknown>): Promise<{ id: string; channels: string[] }>;
    addChannel(p: Record<string, unknown>): Promise<void>;
  };
}
const ari = createRequire(import.meta.url)('ari-client') as { connect(url: string, u: string, p: string): Promise<SdkClient> };

describe('FakeAriServer with the real ari-client', () => {
  let fake: FakeAriServer;
  let sdk: SdkClient | undefined;

  beforeEach(async () => {
    fake = await FakeAriServer.start({ username: 'u1', password: 'p1' });
  });
  afterEach(async () => {
    sdk?.stop();
    sdk = undefined;
    await fake.close();
  });

  it('declares every event type it can emit', () => {
    const models = Object.keys(ariApiDocs().resources.events.models);
    for (const type of ARI_EVENT_TYPES) expect(models).toContain(type);
  });

  it('serves api-docs with basePath on the request host and decodes every emitted event in ari-client', async () => {
    sdk = await ari.connect(fake.url, 'u1', 'p1');
    const seen: string[] = [];
    sdk.on('*', (e) => seen.push(e.type));
    await sdk.start('app1');
    const channel = await sdk.channels.originate({ endpoint: 'PJSIP/100', app: 'app1', channelId: 'c1' });
    expect(channel.id).toBe('c1');
    await expect(sdk.channels.originate({ endpoint: 'PJSIP/100', app: 'app1', channelId: 'c1' })).rejects.toThrow(/already exists/);
    fake.simulateRinging('c1');
    fake.simulateAnswer('c1');
    fake.simulateHangup('c1', 16);
    fake.simulateInbound({ channelId: 'in', callerNumber: '+1', dialedExten: '200', app: 'app1' });
    const want = ['ChannelStateChange', 'Dial', 'ChannelStateChange', 'Dial', 'StasisStart', 'ChannelHangupRequest', 'StasisEnd', 'ChannelDestroyed', 'StasisStart'];
    const start = Date.now();
    while (seen.length < want.length && Date.now() - start < 5000) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual(want);
    const listing = fake.requests.find((r) => r.path === '/ari/api-docs/resources.json' && r.authorized);
    expect(listing?.status).toBe(200);
  });

  it('plays chan_websocket for externalMedia through the real ari-client: the channel enters Stasis once its WebSocket is up and can be bridged', async () => {
    const { WebSocketServer } = await import('ws');
    const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((r) => server.once('listening', () => r()));
    const seenUrls: string[] = [];
    const firstText = new Promise<string>((resolve) => {
      server.on('connection', (ws, req) => {
        seenUrls.push(req.url ?? '');
        ws.once('message', (data) => resolve(String(data)));
      });
    });
    try {
      fake.websocketClients.set('media1', `ws://127.0.0.1:${(server.address() as { port: number }).port}/media`);
      sdk = await ari.connect(fake.url, 'u1', 'p1');
      const seen: string[] = [];
      sdk.on('*', (e) => seen.push(e.type));
      await sdk.start('app1');
      await expect(sdk.channels.externalMedia({ app: 'app1', external_host: 'nope', transport: 'websocket', encapsulation: 'none', format: 'ulaw' }))
        .rejects.toThrow(/valid websocket_client connection id/);
      await expect(sdk.channels.externalMedia({ app: 'app1', external_host: 'media1', transport: 'websocket', encapsulation: 'rtp', format: 'ulaw' }))
        .rejects.toThrow(/encapsulation must be 'none'/);
      const ch = await sdk.channels.externalMedia({
        app: 'app1', channelId: 'em1', external_host: 'media1', transport: 'websocket', encapsulation: 'none', format: 'ulaw', direction: 'both',
        transport_data: 'v(run_id=7,token=abc)', data: 'x,y',
      });
      expect(ch).toMatchObject({ id: 'em1', state: 'Down', name: expect.stringMatching(/^WebSocket\/media1\/0x/) });
      expect(await firstText).toMatch(/^MEDIA_START connection_id:media1 channel:WebSocket\/media1\/0x[0-9a-f]+ format:ulaw optimal_frame_size:160 ptime:20$/);
      expect(seenUrls).toEqual(['/media?run_id=7&token=abc']);
      const start = Date.now();
      while (!seen.includes('StasisStart') && Date.now() - start < 5000) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toEqual(['ChannelStateChange', 'StasisStart']);
      const bridge = await sdk.bridges.create({ type: 'mixing', bridgeId: 'b1' });
      expect(bridge.id).toBe('b1');
      await sdk.bridges.addChannel({ bridgeId: 'b1', channel: 'em1' });
      expect((await sdk.bridges.get({ bridgeId: 'b1' })).channels).toEqual(['em1']);
    } finally {
      for (const c of server.clients) c.terminate();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('refuses REST requests without valid credentials and accepts api_key', async () => {
    const res = await fetch(`${fake.url}/ari/channels`);
    expect(res.status).toBe(401);
    const bad = await fetch(`${fake.url}/ari/channels`, { headers: { Authorization: `Basic ${Buffer.from('u1:nope').toString('base64')}` } });
    expect(bad.status).toBe(401);
    const ok = await fetch(`${fake.url}/ari/channels?api_key=u1:p1`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual([]);
  });
});
