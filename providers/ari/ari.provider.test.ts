import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import { silentLogger } from '../../core/ports/logger.port.js';
import type { InboundCall, NormalizedCallEvent, PlaceCallRequest, ProviderContext, TelephonyProvider } from '../../core/ports/telephony-provider.port.js';
import { FakeAriServer } from '../../test/fakes/ari/fake-ari-server.js';
import { runTelephonyProviderContract } from '../../test/contracts/telephony-provider.contract.js';
import { checkAriEndpoint } from './ari-endpoint-policy.js';
import { ariAccountId, ariConnectionsOf, createAriPlugin } from './index.js';
import { AriProvider, dialString } from './ari.provider.js';
import { ARI_UNANSWERED_CAUSE, mapAriHangup } from './ari.status-map.js';
import { until } from '../../test/support/until.js';

const here = dirname(fileURLToPath(import.meta.url));
const APP = 'callplane';
const PASSWORD = 'ari-secret-1234';

/** Fast reconnects, no keep-alive pings: tests stay quick and leave no timers. */
const plugin = createAriPlugin({ client: { reconnect: { initialDelayMs: 20, maxDelayMs: 200, jitter: false }, pingIntervalMs: 0 }, connectWaitMs: 2000 });

const statuses = (events: NormalizedCallEvent[]) => events.map((e) => (e.kind === 'status' ? [e.status, e.outcome ?? null] : ['ignored', null]));

function request(overrides: Partial<PlaceCallRequest> = {}): PlaceCallRequest {
  return {
    attemptKey: 'attempt-42', organizationId: 1, runId: 42, to: '+15557654321', from: '+15550001111',
    statusCallbackUrl: 'https://cp.example.org/api/v1/telephony/ari/status/42', answerUrl: '', mediaUrl: 'wss://cp.example.org/api/v1/telephony/ari/media/42',
    machineDetection: false, ringTimeoutSeconds: 30, ...overrides,
  };
}

let contractFake: FakeAriServer | undefined;
runTelephonyProviderContract('ari', () => ({
  plugin,
  fixturesDir: join(here, 'fixtures'),
  // Port 9 (discard) refuses at once: instances built from it retry in the background until closed.
  validConfig: { ari_endpoint: 'http://127.0.0.1:9', app_name: APP, app_password: PASSWORD, ws_client_name: '', dial_template: 'PJSIP/{number}@trunk' },
  otherAccountConfig: { ari_endpoint: 'https://pbx.example.com:8089', app_name: APP, app_password: PASSWORD, ws_client_name: 'media', dial_template: 'PJSIP/{number}' },
  placeCall: {
    async setup() {
      contractFake = await FakeAriServer.start({ username: APP, password: PASSWORD });
      const fake = contractFake;
      return {
        config: { ari_endpoint: fake.url, app_name: APP, app_password: PASSWORD, ws_client_name: '', dial_template: 'PJSIP/{number}@trunk' },
        teardown: async () => fake.close(),
      };
    },
    request: request(),
    async verify(placed, reported) {
      const fake = contractFake!;
      expect(placed).toEqual({ providerCallId: 'attempt-42', alreadyPlaced: false });
      const originate = fake.requests.find((r) => r.method === 'POST' && r.path.startsWith('/ari/channels'));
      expect(originate?.query).toMatchObject({ endpoint: 'PJSIP/+15557654321@trunk', app: APP, channelId: 'attempt-42', appArgs: 'callplane-outbound,42', callerId: '+15550001111', timeout: '30' });
      expect(originate?.body).toEqual({ variables: { CALLPLANE_RUN_ID: '42' } });
      fake.simulateRinging('attempt-42');
      fake.simulateAnswer('attempt-42');
      fake.simulateHangup('attempt-42', 16);
      await until('final status', () => reported.some((e) => e.kind === 'status' && e.status === 'completed'));
      expect(statuses(reported)).toEqual([['ringing', null], ['in_progress', null], ['in_progress', null], ['completed', 'completed']]);
      expect(reported.every((e) => e.kind === 'status' && e.runId === 42 && e.providerCallId === 'attempt-42')).toBe(true);
    },
  },
}));

describe('ARI status map', () => {
  it('maps the hangup causes of unanswered calls', () => {
    const outcome = (c: number) => mapAriHangup(c, false).outcome;
    expect(outcome(16)).toBe('no_answer');
    expect(outcome(17)).toBe('busy');
    expect(outcome(18)).toBe('no_answer');
    expect(outcome(19)).toBe('no_answer');
    expect(outcome(21)).toBe('busy');
    for (const c of [1, 3, 27, 28, 34, 38, 41, 42, 127]) expect(mapAriHangup(c, false)).toMatchObject({ status: 'failed', outcome: 'failed' });
    expect(mapAriHangup(999, false)).toMatchObject({ status: 'failed', outcome: 'failed', label: 'unexpected cause 999' });
    expect(mapAriHangup(undefined, false).outcome).toBe('failed');
    // Not failures: completed runs with that disposition.
    for (const c of [16, 17, 19, 21]) expect(mapAriHangup(c, false).status).toBe('completed');
    expect(Object.keys(ARI_UNANSWERED_CAUSE).length).toBeGreaterThan(20);
  });

  it('ends an answered call completed whatever the cause, and our own early hangup as canceled', () => {
    for (const c of [16, 17, 34, undefined]) expect(mapAriHangup(c, true)).toMatchObject({ status: 'completed', outcome: 'completed' });
    expect(mapAriHangup(16, false, true)).toMatchObject({ status: 'completed', outcome: 'canceled' });
  });
});

describe('ARI configuration checks', () => {
  const priv = { allowPrivateNetwork: false };
  const open = { allowPrivateNetwork: true };

  it('refuses non-http(s) schemes and credentials in the URL', () => {
    for (const url of ['ftp://pbx.example.com', 'file:///etc/passwd', 'ws://pbx.example.com:8088', 'gopher://x', 'not a url', '', 42]) {
      expect(checkAriEndpoint(url, open)).toHaveLength(1);
    }
    expect(checkAriEndpoint('http://user:pw@pbx.example.com:8088', open)[0]?.[1]).toMatch(/credentials/);
    expect(checkAriEndpoint('https://pbx.example.com:8089', priv)).toEqual([]);
    expect(checkAriEndpoint('http://203.0.113.0:8088', priv)).toEqual([]);
  });

  it('refuses cloud metadata addresses always, in every spelling', () => {
    for (const url of [
      'http://169.254.169.254/latest', 'http://[fd00:ec2::254]/', 'http://metadata.google.internal/', 'http://100.100.100.200/',
      'http://2852039166/', 'http://0xa9.0xfe.0xa9.0xfe/', 'http://[::ffff:169.254.169.254]/', 'http://169.254.170.2/', 'http://METADATA.google.internal./',
    ]) {
      expect(checkAriEndpoint(url, open)).toEqual([['ari_endpoint', 'ari_endpoint must not point at a cloud metadata service']]);
    }
  });

  it('refuses private-network addresses unless the setting allows them', () => {
    for (const url of [
      'http://127.0.0.1:8088', 'http://localhost:8088', 'http://10.1.2.3:8088', 'http://172.16.0.5', 'http://192.168.1.10', 'http://[::1]:8088',
      'http://[fd12:3456::1]/', 'http://[fe80::1]/', 'http://100.64.0.1/', 'http://0.0.0.0/', 'http://[::ffff:10.0.0.1]/', 'http://pbx.internal/',
    ]) {
      expect([url, checkAriEndpoint(url, priv)[0]?.[1]]).toEqual([url, expect.stringMatching(/private/)]);
      expect([url, checkAriEndpoint(url, open)]).toEqual([url, []]);
    }
  });

  it('runs through the plugin hook and at create time', () => {
    expect(plugin.validateConfig?.({ ari_endpoint: 'http://169.254.169.254' }, open)).toHaveLength(1);
    expect(plugin.validateConfig?.({ ari_endpoint: 'http://10.0.0.2:8088' }, priv)).toHaveLength(1);
    const context = fakeContext([]);
    expect(() => plugin.create({ ari_endpoint: 'http://10.0.0.2:8088', app_name: APP, app_password: 'x', configurationId: 9, organizationId: 1 }, { ...context, allowPrivateNetwork: false }))
      .toThrow(ProviderApiError);
  });

  it('derives the account id from the endpoint host and the app name', () => {
    expect(ariAccountId({ ari_endpoint: 'https://PBX.example.com:8089/ari', app_name: 'sales' })).toBe('pbx.example.com:8089/sales');
    expect(ariAccountId({ ari_endpoint: 'http://pbx.example.com:80', app_name: 'sales' })).toBe('pbx.example.com/sales');
  });

  it('builds dial strings from the template and refuses numbers that would change the dial', () => {
    expect(dialString('PJSIP/{number}@trunk', '+1 (555) 765-4321')).toBe('PJSIP/+1555765-4321@trunk');
    expect(dialString(undefined, '1000')).toBe('PJSIP/1000');
    expect(dialString('SIP/trunk/{number}', 'sip:alice@example.com')).toBe('SIP/trunk/sip:alice@example.com');
    for (const bad of ['1000&PJSIP/2000', '1000,30', 'a/b', '']) expect(() => dialString('PJSIP/{number}', bad)).toThrow(ProviderApiError);
  });
});

function fakeContext(reported: NormalizedCallEvent[], inbound: Array<InboundCall & { configurationId: number }> = [], decide: () => { runId: number } | { refused: string } = () => ({ refused: 'phone_number_not_found' })): ProviderContext {
  return {
    publicUrl: 'https://cp.example.org',
    allowPrivateNetwork: true,
    log: silentLogger,
    reportStatus: async (e) => {
      reported.push(e);
    },
    reportInbound: async (call) => {
      inbound.push(call);
      return decide();
    },
  };
}

describe('ARI provider against the fake Asterisk', () => {
  let fake: FakeAriServer;
  const live: TelephonyProvider[] = [];
  let configurationId = 100;

  beforeAll(async () => {
    fake = await FakeAriServer.start({ username: APP, password: PASSWORD });
  });
  afterAll(async () => {
    await fake.close();
  });
  afterEach(async () => {
    await Promise.all(live.splice(0).map((p) => p.close()));
  });

  function make(opts: { reported?: NormalizedCallEvent[]; inbound?: Array<InboundCall & { configurationId: number }>; decide?: () => { runId: number } | { refused: string }; id?: number; password?: string } = {}) {
    const reported = opts.reported ?? [];
    const config = { ari_endpoint: fake.url, app_name: APP, app_password: opts.password ?? PASSWORD, ws_client_name: '', dial_template: 'PJSIP/{number}@trunk' };
    const p = plugin.create({ ...config, configurationId: opts.id ?? ++configurationId, organizationId: 1 }, fakeContext(reported, opts.inbound, opts.decide)) as AriProvider;
    live.push(p);
    return { p, reported };
  }

  it('originates with the attempt key as channelId; a retry of the attempt does not dial again', async () => {
    const { p } = make();
    const before = fake.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/ari/channels')).length;
    await expect(p.placeCall(request({ attemptKey: 'attempt-retry' }))).resolves.toEqual({ providerCallId: 'attempt-retry', alreadyPlaced: false });
    await expect(p.placeCall(request({ attemptKey: 'attempt-retry' }))).resolves.toEqual({ providerCallId: 'attempt-retry', alreadyPlaced: true });
    const originates = fake.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/ari/channels')).slice(before);
    expect(originates.map((r) => r.status)).toEqual([200, 409]);
    expect([...fake.channels.keys()].filter((id) => id === 'attempt-retry')).toHaveLength(1);
    await p.hangup('attempt-retry');
  });

  it('maps the hangup causes of unanswered calls (duration 0)', async () => {
    const { p, reported } = make();
    await p.placeCall(request({ attemptKey: 'busy-1', runId: 1 }));
    await p.placeCall(request({ attemptKey: 'noanswer-1', runId: 2 }));
    await p.placeCall(request({ attemptKey: 'congested-1', runId: 3 }));
    fake.simulateRinging('busy-1');
    fake.simulateHangup('busy-1', 17);
    fake.simulateRinging('noanswer-1');
    fake.simulateHangup('noanswer-1', 19);
    fake.simulateHangup('congested-1', 34);
    await until('three finals', () => reported.filter((e) => e.kind === 'status' && e.outcome).length === 3);
    const finals = reported.filter((e): e is NormalizedCallEvent & { kind: 'status' } => e.kind === 'status' && e.outcome !== undefined);
    expect(finals.map((e) => [e.runId, e.status, e.outcome, e.durationSeconds])).toEqual([
      [1, 'completed', 'busy', 0], [2, 'completed', 'no_answer', 0], [3, 'failed', 'failed', 0],
    ]);
    expect(finals[0]?.detail).toBe('cause 17 (User busy)');
  });

  it('reports our own hangup of a ringing call as canceled, of an answered call as completed', async () => {
    const { p, reported } = make();
    await p.placeCall(request({ attemptKey: 'cancel-1', runId: 5 }));
    fake.simulateRinging('cancel-1');
    await p.hangup('cancel-1');
    await p.placeCall(request({ attemptKey: 'talk-1', runId: 6 }));
    fake.simulateAnswer('talk-1');
    await until('answer seen', () => reported.some((e) => e.kind === 'status' && e.runId === 6 && e.status === 'in_progress'));
    await p.hangup('talk-1');
    await p.hangup('talk-1'); // already gone: fine
    await until('two finals', () => reported.filter((e) => e.kind === 'status' && e.outcome).length === 2);
    expect(reported.filter((e) => e.kind === 'status' && e.outcome).map((e) => e.kind === 'status' && [e.runId, e.outcome])).toEqual([[5, 'canceled'], [6, 'completed']]);
  });

  it('reads a live channel for reconciliation; an ended one is unknown', async () => {
    const { p } = make();
    await p.placeCall(request({ attemptKey: 'recon-1', runId: 8 }));
    fake.simulateRinging('recon-1');
    expect(await p.getCallStatus('recon-1')).toMatchObject({ kind: 'status', status: 'ringing', runId: 8, providerCallId: 'recon-1' });
    fake.simulateAnswer('recon-1');
    expect(await p.getCallStatus('recon-1')).toMatchObject({ status: 'in_progress' });
    fake.simulateHangup('recon-1', 16);
    expect(await p.getCallStatus('recon-1')).toBeNull();
  });

  it('keeps one WebSocket per configuration, shared by its instances, replaced when credentials change', async () => {
    const sockets = () => fake.connectedApps.length;
    const base = sockets();
    const a = make({ id: 500 });
    await a.p.placeCall(request({ attemptKey: 'share-1', runId: 9 })); // waits for the socket
    const b = make({ id: 500 });
    await until('socket', () => sockets() === base + 1);
    expect(ariConnectionsOf(plugin)?.configurations()).toContain(500);
    // The same event is handled once even with two instances alive.
    fake.simulateRinging('share-1');
    await until('ringing', () => a.reported.length + b.reported.length >= 1);
    await a.p.idle();
    await new Promise((r) => setTimeout(r, 30));
    expect(a.reported.length + b.reported.length).toBe(1);
    fake.simulateHangup('share-1', 16);
    // Changed credentials: a new connection replaces the old one (the fake checks only the password it knows,
    // so the new one keeps failing to authenticate and reports it).
    const c = make({ id: 500, password: 'rotated-password' });
    await until('old socket closed', () => sockets() === base);
    await until('auth failure visible', () => c.p.health().detail?.lastError !== undefined);
    expect(c.p.health()).toMatchObject({ ok: false, detail: { connected: false } });
    expect(String(c.p.health().detail?.lastError)).not.toContain('rotated-password');
    await Promise.all(live.splice(0).map((p) => p.close()));
    expect(ariConnectionsOf(plugin)?.configurations()).not.toContain(500);
  });

  it('reconnects after the WebSocket drops, reports health, and reconciles calls answered in the gap', async () => {
    const { p, reported } = make();
    await p.placeCall(request({ attemptKey: 'gap-1', runId: 11 }));
    expect(p.health()).toMatchObject({ ok: true, detail: { connected: true, reconnects: 0 } });
    fake.refuseWebSockets = true;
    fake.dropWebSockets();
    await until('down', () => !p.health().ok);
    fake.simulateAnswer('gap-1'); // nobody listening: this event is lost
    await until('a failed retry', () => Number(p.health().detail?.reconnectAttempts) >= 1);
    fake.refuseWebSockets = false;
    await until('reconnected', () => p.health().ok);
    expect(p.health().detail).toMatchObject({ connected: true, reconnects: 1 });
    await until('reconciled', () => reported.some((e) => e.kind === 'status' && e.status === 'in_progress'));
    fake.simulateHangup('gap-1', 16);
    await until('final', () => reported.some((e) => e.kind === 'status' && e.outcome === 'completed'));
    expect(reported.at(-1)).toMatchObject({ runId: 11, status: 'completed', outcome: 'completed' });
  });

  it('routes an inbound StasisStart by the dialed extension, answers it and reports the call', async () => {
    const inbound: Array<InboundCall & { configurationId: number }> = [];
    const { p, reported } = make({ id: 700, inbound, decide: () => ({ runId: 77 }) });
    await p.placeCall(request({ attemptKey: 'warmup-700', runId: 70 })); // make sure the socket is up
    fake.simulateHangup('warmup-700', 17);
    fake.simulateInbound({ channelId: 'in-1', callerNumber: '+15559876543', dialedExten: '+15550001111', app: APP });
    await until('answered', () => fake.channels.get('in-1')?.state === 'Up');
    expect(inbound).toEqual([{ providerCallId: 'in-1', from: '+15559876543', to: '+15550001111', accountId: ariAccountId({ ari_endpoint: fake.url, app_name: APP }), configurationId: 700 }]);
    await until('in progress', () => reported.some((e) => e.kind === 'status' && e.runId === 77 && e.status === 'in_progress'));
    fake.simulateHangup('in-1', 16);
    await until('final', () => reported.some((e) => e.kind === 'status' && e.runId === 77 && e.outcome !== undefined));
    expect(reported.filter((e) => e.kind === 'status' && e.runId === 77).map((e) => e.kind === 'status' && [e.status, e.outcome ?? null])).toEqual([
      ['in_progress', null], ['completed', 'completed'],
    ]);
  });

  it('sends a refused inbound call back to the dialplan (which can say goodbye)', async () => {
    const inbound: Array<InboundCall & { configurationId: number }> = [];
    const { p, reported } = make({ inbound, decide: () => ({ refused: 'phone_number_not_found' }) });
    await p.placeCall(request({ attemptKey: 'warmup-2', runId: 71 }));
    fake.simulateHangup('warmup-2', 17);
    fake.simulateInbound({ channelId: 'in-2', callerNumber: '+15559876543', dialedExten: '2000', app: APP });
    await until('continue', () => fake.requests.some((r) => r.path === '/ari/channels/in-2/continue'));
    expect(inbound.map((c) => c.to)).toEqual(['2000']);
    expect(fake.requests.some((r) => r.path === '/ari/channels/in-2/answer')).toBe(false);
    fake.simulateHangup('in-2', 16);
    await p.idle();
    expect(reported.filter((e) => e.kind === 'status' && e.providerCallId === 'in-2')).toEqual([]);
  });

  it('has nothing to push for inbound routing and takes no HTTP webhooks', async () => {
    const { p } = make();
    const sync = await p.syncInboundWebhook({ address: '1000', addressNormalized: '1000', inboundUrl: 'https://cp.example.org/api/v1/telephony/ari/inbound' });
    expect(sync.ok).toBe(true);
    expect(sync.message).toContain(`Stasis(${APP})`);
    expect((await p.syncInboundWebhook({ address: '1000', addressNormalized: '1000', inboundUrl: null })).ok).toBe(true);
    expect(p.verifyWebhook({ publicUrl: 'x', method: 'POST', headers: {}, body: {}, query: {} })).toBe(false);
    expect(plugin.parseInboundCall).toBeUndefined();
  });
});
