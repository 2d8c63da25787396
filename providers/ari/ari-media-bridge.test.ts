/**
 * ARI call media against the fake Asterisk: on answer, a mixing bridge with the caller and an external media
 * channel over chan_websocket, whose WebSocket (the fake acting as Asterisk) connects to a loopback stand-in of our
 * media endpoint with the run id and media token; audio flows both ways; the ends tear everything down; a media
 * failure fails the run and hangs the caller up without escaping.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { silentLogger } from '../../core/ports/logger.port.js';
import type { NormalizedCallEvent, PlaceCallRequest, ProviderContext } from '../../core/ports/telephony-provider.port.js';
import { FakeAriServer } from '../../test/fakes/ari/fake-ari-server.js';
import { mediaTransportData } from './ari-media-bridge.js';
import { createAriPlugin } from './index.js';
import type { AriProvider } from './ari.provider.js';
import { until } from '../../test/support/until.js';

const APP = 'callplane';
const PASSWORD = 'ari-media-secret';
const CONNECTION = 'callplane-media';
const TOKEN = '1900000000.' + 'ab'.repeat(32);
const plugin = createAriPlugin({ client: { reconnect: { initialDelayMs: 20, maxDelayMs: 200, jitter: false }, pingIntervalMs: 0 }, connectWaitMs: 2000 });

/** What our media endpoint saw of one connection. */
interface MediaConnection {
  url: string;
  ws: WebSocket;
  texts: string[];
  audio: Buffer[];
  closed: boolean;
}

describe('ARI call media (bridge + chan_websocket external media)', () => {
  let fake: FakeAriServer;
  let media: WebSocketServer;
  let mediaBase: string;
  /** Status the stand-in media endpoint answers upgrades with (101 accepts). */
  let upgradeStatus = 101;
  /** While set, the stand-in media endpoint holds upgrades until it resolves. */
  let holdUpgrades: Promise<void> | undefined;
  const connections: MediaConnection[] = [];
  const live: AriProvider[] = [];
  let configurationId = 500;

  beforeAll(async () => {
    fake = await FakeAriServer.start({ username: APP, password: PASSWORD });
    media = new WebSocketServer({
      port: 0,
      host: '127.0.0.1',
      verifyClient: (_info, cb) => {
        const answer = () => (upgradeStatus === 101 ? cb(true) : cb(false, upgradeStatus, 'Unauthorized'));
        if (holdUpgrades) void holdUpgrades.then(answer);
        else answer();
      },
    });
    await new Promise<void>((r) => media.once('listening', () => r()));
    mediaBase = `ws://127.0.0.1:${(media.address() as AddressInfo).port}/api/v1/telephony/ari/media`;
    media.on('connection', (ws, req) => {
      const c: MediaConnection = { url: req.url ?? '', ws, texts: [], audio: [], closed: false };
      connections.push(c);
      ws.on('message', (data, isBinary) => {
        const buf = Buffer.from(data as Buffer);
        if (isBinary) c.audio.push(buf);
        else c.texts.push(buf.toString('utf8'));
      });
      ws.on('close', () => {
        c.closed = true;
      });
    });
    fake.websocketClients.set(CONNECTION, mediaBase);
  });
  afterAll(async () => {
    await fake.close();
    for (const c of media.clients) c.terminate();
    await new Promise<void>((r) => media.close(() => r()));
  });
  afterEach(async () => {
    upgradeStatus = 101;
    holdUpgrades = undefined;
    fake.refuseWebSockets = false;
    await Promise.all(live.splice(0).map((p) => p.close()));
  });

  function make(opts: { wsClientName?: string; decide?: () => { runId: number; mediaUrl?: string } | { refused: string } } = {}) {
    const reported: NormalizedCallEvent[] = [];
    const context: ProviderContext = {
      publicUrl: 'https://cp.example.org',
      allowPrivateNetwork: true,
      log: silentLogger,
      reportStatus: async (e) => {
        reported.push(e);
      },
      reportInbound: async () => (opts.decide ?? (() => ({ refused: 'phone_number_not_found' })))(),
    };
    const config = { ari_endpoint: fake.url, app_name: APP, app_password: PASSWORD, ws_client_name: opts.wsClientName ?? CONNECTION, dial_template: 'PJSIP/{number}@trunk' };
    const p = plugin.create({ ...config, configurationId: ++configurationId, organizationId: 1 }, context) as AriProvider;
    live.push(p);
    return { p, reported };
  }

  function request(runId: number, attemptKey: string): PlaceCallRequest {
    return {
      attemptKey, organizationId: 1, runId, to: '+15557654321', from: '+15550001111',
      statusCallbackUrl: `https://cp.example.org/api/v1/telephony/ari/status/${runId}`, answerUrl: '',
      mediaUrl: `wss://cp.example.org/api/v1/telephony/ari/media/${runId}?token=${encodeURIComponent(TOKEN)}`,
      machineDetection: false, ringTimeoutSeconds: 30,
    };
  }

  const statuses = (events: NormalizedCallEvent[]) => events.map((e) => (e.kind === 'status' ? `${e.providerCallId}:${e.status}` : 'ignored'));
  const requestsTo = (path: string) => fake.requests.filter((r) => r.path === path);

  it('outbound: bridges the answered caller with an external media channel; audio flows both ways; our hang-up tears it down', async () => {
    const { p, reported } = make();
    const before = connections.length;
    await p.placeCall(request(42, 'media-out-1'));
    fake.simulateRinging('media-out-1');
    fake.simulateAnswer('media-out-1');
    await until('media connection', () => connections.length > before);
    const conn = connections[before]!;
    await until('media bridged', () => fake.bridges.get('media-out-1-bridge')?.channels.length === 2);

    expect(requestsTo('/ari/bridges/media-out-1-bridge')[0]).toMatchObject({ method: 'POST', status: 200, query: { type: 'mixing' } });
    const external = requestsTo('/ari/channels/externalMedia');
    expect(external).toHaveLength(1);
    expect(external[0]).toMatchObject({
      method: 'POST', status: 200,
      query: {
        channelId: 'media-out-1-media', app: APP, external_host: CONNECTION, transport: 'websocket', encapsulation: 'none',
        connection_type: 'client', format: 'ulaw', direction: 'both', transport_data: `v(run_id=42,token=${TOKEN})`, data: 'callplane-media,42',
      },
    });
    // caller first, then the media channel once it entered Stasis (its WebSocket is up)
    expect(requestsTo('/ari/bridges/media-out-1-bridge/addChannel').map((r) => [r.query.channel, r.status])).toEqual([['media-out-1', 204], ['media-out-1-media', 204]]);
    expect(fake.bridges.get('media-out-1-bridge')?.channels).toEqual(['media-out-1', 'media-out-1-media']);
    // chan_websocket connected to the configured URI with the run id and the token as query parameters
    expect(conn.url).toBe(`/api/v1/telephony/ari/media?run_id=42&token=${TOKEN}`);
    expect(fake.channels.get('media-out-1-media')?.endpoint).toBe(`WebSocket/${CONNECTION}/v(run_id=42,token=${TOKEN})d(both)`);
    await until('MEDIA_START', () => conn.texts.length > 0);
    expect(conn.texts[0]).toMatch(new RegExp(`^MEDIA_START connection_id:${CONNECTION} channel:WebSocket/${CONNECTION}/0x[0-9a-f]+ format:ulaw optimal_frame_size:160 ptime:20$`));

    // caller audio in, agent audio out, a mark echoed
    const leg = fake.mediaLegs.get('media-out-1-media')!;
    const callerAudio = Buffer.alloc(480, 0x2a);
    leg.sendAudio(callerAudio);
    await until('caller audio', () => conn.audio.reduce((n, b) => n + b.length, 0) === 480);
    expect(conn.audio.map((b) => b.length)).toEqual([160, 160, 160]);
    const agentAudio = Buffer.alloc(800, 0x55);
    conn.ws.send(agentAudio, { binary: true });
    conn.ws.send('MARK_MEDIA correlation_id:greeting');
    await until('agent audio at Asterisk', () => leg.receivedBytes === 800);
    expect(Buffer.concat(leg.received).equals(agentAudio)).toBe(true);
    await until('mark processed', () => conn.texts.includes('MEDIA_MARK_PROCESSED correlation_id:greeting'));

    // the media channel is no call of its own: no status for it
    expect(reported.every((e) => e.kind !== 'status' || e.providerCallId === 'media-out-1')).toBe(true);
    expect(p.health().detail).toMatchObject({ media_calls: 1 });

    await p.hangup('media-out-1');
    await until('torn down', () => !fake.channels.has('media-out-1-media') && !fake.bridges.has('media-out-1-bridge'));
    await until('media socket closed', () => conn.closed);
    await until('final status', () => reported.some((e) => e.kind === 'status' && e.status === 'completed'));
    expect(statuses(reported)).toEqual(['media-out-1:ringing', 'media-out-1:in_progress', 'media-out-1:in_progress', 'media-out-1:completed']);
    expect(fake.requests.filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual(expect.arrayContaining([
      '/ari/channels/media-out-1', '/ari/channels/media-out-1-media', '/ari/bridges/media-out-1-bridge',
    ]));
    await p.idle();
    expect(p.health().detail).toMatchObject({ media_calls: 0 });
  });

  it('inbound: the answered call gets media with the media URL the host gave; the agent\'s HANGUP hangs the caller up', async () => {
    const { p, reported } = make({ decide: () => ({ runId: 77, mediaUrl: `wss://cp.example.org/api/v1/telephony/ari/media/77?token=${encodeURIComponent(TOKEN)}` }) });
    await p.idle();
    await until('event socket', () => fake.connectedApps.some((apps) => apps.includes(APP)));
    const before = connections.length;
    fake.simulateInbound({ channelId: 'media-in-1', callerNumber: '+15559876543', dialedExten: '1000', app: APP });
    await until('media connection', () => connections.length > before);
    const conn = connections[before]!;
    expect(conn.url).toBe(`/api/v1/telephony/ari/media?run_id=77&token=${TOKEN}`);
    await until('media bridged', () => fake.bridges.get('media-in-1-bridge')?.channels.length === 2);
    expect(fake.channels.get('media-in-1')?.state).toBe('Up');
    expect(requestsTo('/ari/channels/externalMedia').at(-1)?.query).toMatchObject({ channelId: 'media-in-1-media', data: 'callplane-media,77' });

    // the agent ends the call: chan_websocket's HANGUP ends the media channel, and with it the call
    conn.ws.send('HANGUP');
    await until('caller hung up', () => !fake.channels.has('media-in-1'));
    await until('bridge destroyed', () => !fake.bridges.has('media-in-1-bridge'));
    await until('final status', () => reported.some((e) => e.kind === 'status' && e.status === 'completed'));
    expect(requestsTo('/ari/channels/media-in-1').map((r) => r.method)).toEqual(['DELETE']);
    expect(statuses(reported)).toEqual(['media-in-1:in_progress', 'media-in-1:completed']);
  });

  it('a refused externalMedia is contained: the run fails with Asterisk\'s words, the caller is hung up, nothing is left behind', async () => {
    const { p, reported } = make({ wsClientName: 'not-in-websocket-client-conf' });
    await p.placeCall(request(43, 'media-out-2'));
    fake.simulateAnswer('media-out-2');
    await until('caller hung up', () => !fake.channels.has('media-out-2'));
    await until('bridge destroyed', () => !fake.bridges.has('media-out-2-bridge'));
    await p.idle();
    expect(requestsTo('/ari/channels/externalMedia').at(-1)).toMatchObject({ status: 400, query: { external_host: 'not-in-websocket-client-conf' } });
    const failed = reported.find((e) => e.kind === 'status' && e.status === 'failed');
    expect(failed).toMatchObject({
      kind: 'status', providerCallId: 'media-out-2', runId: 43, status: 'failed', outcome: 'failed',
      detail: expect.stringContaining('external_host must be a valid websocket_client connection id.'),
    });
    // the caller channel's own end event arrives over the events socket after the hang-up: once it is handled the
    // call is forgotten, and it reported nothing more
    await until('the call is forgotten', () => (p.health().detail as { tracked_calls?: number }).tracked_calls === 0);
    await p.idle();
    expect(statuses(reported)).toEqual(['media-out-2:in_progress', 'media-out-2:in_progress', 'media-out-2:failed']);
    expect(p.health().detail).toMatchObject({ media_calls: 0, tracked_calls: 0 });
  });

  it('an Asterisk failing to create the bridge (500) is contained the same way', async () => {
    const { p, reported } = make();
    await p.placeCall(request(48, 'media-out-7'));
    fake.failNext(1, 500, 'Internal Server Error', (method, path) => method === 'POST' && path === '/ari/bridges/media-out-7-bridge');
    fake.simulateAnswer('media-out-7');
    await until('caller hung up', () => !fake.channels.has('media-out-7'));
    await p.idle();
    expect(reported.find((e) => e.kind === 'status' && e.status === 'failed')).toMatchObject({
      runId: 48, detail: expect.stringMatching(/^call media failed: Asterisk refused the call's media: .*create bridge failed \(HTTP 500\)/),
    });
    expect(requestsTo('/ari/channels/externalMedia').some((r) => r.query.channelId === 'media-out-7-media')).toBe(false);
  });

  it('a media WebSocket our endpoint refuses fails the call the same way', async () => {
    upgradeStatus = 401;
    const { p, reported } = make();
    await p.placeCall(request(44, 'media-out-3'));
    fake.simulateAnswer('media-out-3');
    await until('caller hung up', () => !fake.channels.has('media-out-3'));
    await until('bridge destroyed', () => !fake.bridges.has('media-out-3-bridge'));
    expect(fake.mediaLegs.get('media-out-3-media')?.refusedStatus).toBe(401);
    await until('failed', () => reported.some((e) => e.kind === 'status' && e.status === 'failed'));
    expect(reported.find((e) => e.kind === 'status' && e.status === 'failed')).toMatchObject({
      runId: 44, outcome: 'failed', detail: expect.stringMatching(/media WebSocket did not connect \(Asterisk cause 38/),
    });
  });

  it('a caller moved to another bridge (a transfer) is not hung up when the media ends', async () => {
    const { p, reported } = make();
    await p.placeCall(request(45, 'media-out-4'));
    fake.simulateAnswer('media-out-4');
    await until('media bridged', () => fake.bridges.get('media-out-4-bridge')?.channels.length === 2);
    const auth = { authorization: `Basic ${Buffer.from(`${APP}:${PASSWORD}`).toString('base64')}` };
    expect((await fetch(`${fake.url}/ari/bridges?type=mixing&bridgeId=elsewhere`, { method: 'POST', headers: auth })).status).toBe(200);
    expect((await fetch(`${fake.url}/ari/bridges/elsewhere/addChannel?channel=media-out-4`, { method: 'POST', headers: auth })).status).toBe(204);
    // our endpoint ends the stream (the agent left after the hand-over)
    connections.find((c) => c.url.includes('run_id=45&'))!.ws.close(1000);
    await until('our bridge destroyed', () => !fake.bridges.has('media-out-4-bridge'));
    await p.idle();
    expect(fake.channels.get('media-out-4')?.state).toBe('Up');
    expect(requestsTo('/ari/channels/media-out-4').filter((r) => r.method === 'DELETE')).toHaveLength(0);
    expect(reported.some((e) => e.kind === 'status' && e.status === 'failed')).toBe(false);
    await p.hangup('media-out-4');
  });

  it('a media channel that came up while the event WebSocket was down joins its bridge after the re-connection', async () => {
    let releaseUpgrade!: () => void;
    holdUpgrades = new Promise<void>((r) => {
      releaseUpgrade = r;
    });
    const { p } = make();
    await p.placeCall(request(47, 'media-out-6'));
    fake.simulateAnswer('media-out-6');
    await until('externalMedia requested', () => requestsTo('/ari/channels/externalMedia').some((r) => r.query.channelId === 'media-out-6-media'));
    fake.refuseWebSockets = true;
    fake.dropWebSockets();
    await until('event socket down', () => p.health().ok === false);
    releaseUpgrade();
    // its StasisStart goes to nobody
    await until('media channel in Stasis', () => fake.channels.get('media-out-6-media')?.inStasis === true);
    expect(fake.bridges.get('media-out-6-bridge')?.channels).toEqual(['media-out-6']);
    fake.refuseWebSockets = false;
    await until('bridged after the re-connection', () => fake.bridges.get('media-out-6-bridge')?.channels.length === 2);
    expect(requestsTo('/ari/channels/media-out-6-media').filter((r) => r.method === 'GET').map((r) => r.status)).toEqual([200]);
    await p.hangup('media-out-6');
    await until('torn down', () => !fake.channels.has('media-out-6-media') && !fake.bridges.has('media-out-6-bridge'));
  });

  it('without ws_client_name the call carries no media and nothing is created', async () => {
    const { p, reported } = make({ wsClientName: '' });
    const count = fake.requests.length;
    await p.placeCall(request(46, 'media-out-5'));
    fake.simulateAnswer('media-out-5');
    await until('in progress', () => reported.some((e) => e.kind === 'status' && e.status === 'in_progress'));
    await p.idle();
    expect(fake.requests.slice(count).filter((r) => r.path.startsWith('/ari/bridges') || r.path === '/ari/channels/externalMedia')).toEqual([]);
    await p.hangup('media-out-5');
  });

  it('puts the run id and the token of the signed media URL in chan_websocket\'s URI options, and refuses URLs without a usable token', () => {
    expect(mediaTransportData(`wss://cp.example.org/api/v1/telephony/ari/media/9?token=${encodeURIComponent(TOKEN)}`, 9)).toBe(`v(run_id=9,token=${TOKEN})`);
    expect(() => mediaTransportData('wss://cp.example.org/api/v1/telephony/ari/media/9', 9)).toThrow(/no media token/);
    expect(() => mediaTransportData('wss://cp.example.org/m?token=a,b)', 9)).toThrow(/no media token/);
    expect(() => mediaTransportData('not a url', 9)).toThrow(/not a URL/);
  });
});
