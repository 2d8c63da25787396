import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import { FakeAriServer } from '../../test/fakes/ari/fake-ari-server.js';
import { AriClient, normalizeEvent, type AriEvent, type AriHealth } from './ari.client.js';
import { until } from '../../test/support/until.js';

describe('AriClient against the fake ARI server', () => {
  let fake: FakeAriServer;
  let client: AriClient;
  let events: AriEvent[];
  const clients: AriClient[] = [];
  const fakes: FakeAriServer[] = [];

  function newClient(f: FakeAriServer, extra: Partial<ConstructorParameters<typeof AriClient>[0]> = {}): AriClient {
    const c = new AriClient({
      url: f.url,
      username: f.credentials.username,
      password: f.credentials.password,
      app: 'callplane',
      pingIntervalMs: 0,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200, jitter: false },
      ...extra,
    });
    clients.push(c);
    return c;
  }

  beforeEach(async () => {
    fake = await FakeAriServer.start({ username: 'cp-user', password: 's3cret' });
    fakes.push(fake);
    client = newClient(fake);
    events = [];
    client.onEvent((e) => events.push(e));
    await client.connect();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await Promise.all(fakes.splice(0).map((f) => f.close()));
  });

  it('loads the api-docs with Basic auth, then opens the event socket for the app with api_key', () => {
    const docs = fake.requests.filter((r) => r.path.startsWith('/ari/api-docs/') && r.authorized);
    expect(docs.map((r) => r.path)).toEqual(expect.arrayContaining([
      '/ari/api-docs/resources.json', '/ari/api-docs/channels.json', '/ari/api-docs/events.json',
    ]));
    const ws = fake.requests.filter((r) => r.websocket);
    expect(ws).toHaveLength(1);
    expect(ws[0]).toMatchObject({ path: '/ari/events', status: 101, user: 'cp-user' });
    expect(ws[0].query.app).toBe('callplane');
    expect(fake.connectedApps).toEqual([['callplane']]);
    const h = client.health();
    expect(h.connected).toBe(true);
    expect(h.reconnectAttempts).toBe(0);
    expect(typeof h.lastConnectedAt).toBe('string');
  });

  it('originates into the Stasis app with the attempt id as channelId, caller id, args, variables and timeout', async () => {
    const result = await client.originate({
      channelId: 'attempt-42',
      endpoint: 'PJSIP/+15551230000@trunk',
      callerId: '"Callplane" <+15550001111>',
      appArgs: ['outbound', 'run-7'],
      variables: { CALLPLANE_RUN: 'run-7' },
      timeoutSeconds: 25,
    });
    expect(result).toEqual({
      outcome: 'created',
      channel: expect.objectContaining({ id: 'attempt-42', state: 'Down', callerNumber: '+15550001111' }),
    });
    const req = fake.requests.find((r) => r.method === 'POST' && r.path === '/ari/channels');
    expect(req?.query).toMatchObject({
      endpoint: 'PJSIP/+15551230000@trunk',
      app: 'callplane',
      channelId: 'attempt-42',
      appArgs: 'outbound,run-7',
      callerId: '"Callplane" <+15550001111>',
      timeout: '25',
    });
    expect(req?.body).toEqual({ variables: { CALLPLANE_RUN: 'run-7' } });
    expect(req?.user).toBe('cp-user');
    expect(fake.channels.get('attempt-42')?.variables).toEqual({ CALLPLANE_RUN: 'run-7' });
  });

  it('a retry of the same attempt gets already_exists (Asterisk 409) and dials nothing new', async () => {
    await client.originate({ channelId: 'attempt-1', endpoint: 'PJSIP/100' });
    const again = await client.originate({ channelId: 'attempt-1', endpoint: 'PJSIP/100' });
    expect(again).toEqual({ outcome: 'already_exists', channelId: 'attempt-1' });
    const originates = fake.requests.filter((r) => r.method === 'POST' && r.path === '/ari/channels');
    expect(originates.map((r) => r.status)).toEqual([200, 409]);
    expect(fake.channels.size).toBe(1);
  });

  it('other refusals become ProviderApiError with the ARI message; 5xx is retryable, 4xx is not', async () => {
    const bad = client.originate({ channelId: 'a-2', endpoint: 'no-slash' });
    await expect(bad).rejects.toBeInstanceOf(ProviderApiError);
    await expect(bad).rejects.toMatchObject({ provider: 'ari', retryable: false, detail: expect.stringContaining('Invalid endpoint specified') });

    fake.failNext(1, 500, 'Allocation failed');
    const err = (await client.originate({ channelId: 'a-3', endpoint: 'PJSIP/100' }).catch((e: unknown) => e)) as ProviderApiError;
    expect(err).toBeInstanceOf(ProviderApiError);
    expect(err.retryable).toBe(true);
    expect(err.detail).toContain('HTTP 500');
    expect(err.detail).toContain('Allocation failed');
    expect(err.detail).not.toContain('s3cret');
  });

  it('delivers the outbound lifecycle as normalized events, with the hangup cause', async () => {
    await client.originate({ channelId: 'call-1', endpoint: 'PJSIP/100', appArgs: ['outbound'] });
    fake.simulateRinging('call-1');
    fake.simulateAnswer('call-1');
    fake.simulateHangup('call-1', 16);
    await until('ChannelDestroyed', () => events.some((e) => e.type === 'ChannelDestroyed'));

    expect(events.map((e) => e.type)).toEqual([
      'ChannelStateChange', 'Dial', 'ChannelStateChange', 'Dial', 'StasisStart', 'ChannelHangupRequest', 'StasisEnd', 'ChannelDestroyed',
    ]);
    expect(events.every((e) => e.channelId === 'call-1' && e.application === 'callplane')).toBe(true);
    expect(events[0].state).toBe('Ringing');
    expect(events[1].dialStatus).toBe('RINGING');
    expect(events[4]).toMatchObject({ type: 'StasisStart', state: 'Up', args: ['outbound'] });
    expect(events[7]).toMatchObject({ type: 'ChannelDestroyed', cause: 16, causeText: 'Normal Clearing' });
    for (const e of events) expect(Number.isNaN(Date.parse(e.timestamp))).toBe(false);
  });

  it.each([
    [17, 'User busy'],
    [18, 'No user responding'],
    [19, 'User alerting, no answer'],
    [21, 'Call Rejected'],
    [1, 'Unallocated (unassigned) number'],
  ])('delivers hangup cause %i (%s) on ChannelDestroyed for an unanswered call', async (cause, text) => {
    await client.originate({ channelId: `c-${cause}`, endpoint: 'PJSIP/100' });
    fake.simulateHangup(`c-${cause}`, cause);
    await until('ChannelDestroyed', () => events.some((e) => e.type === 'ChannelDestroyed'));
    const destroyed = events.find((e) => e.type === 'ChannelDestroyed');
    expect(destroyed).toMatchObject({ channelId: `c-${cause}`, cause, causeText: text });
    expect(events.some((e) => e.type === 'StasisStart')).toBe(false);
  });

  it('after the channel is gone the id can be dialed again (Asterisk checks live channels only)', async () => {
    await client.originate({ channelId: 'reuse', endpoint: 'PJSIP/100' });
    fake.simulateHangup('reuse', 19);
    expect(await client.getChannel('reuse')).toBeNull();
    expect((await client.originate({ channelId: 'reuse', endpoint: 'PJSIP/100' })).outcome).toBe('created');
  });

  it('hangup sends the reason, is idempotent, and the hangup arrives as ChannelDestroyed', async () => {
    await client.originate({ channelId: 'h-1', endpoint: 'PJSIP/100' });
    fake.simulateAnswer('h-1');
    expect(await client.hangup('h-1', 'normal')).toBe('hung_up');
    const del = fake.requests.find((r) => r.method === 'DELETE');
    expect(del).toMatchObject({ path: '/ari/channels/h-1', query: { reason: 'normal' }, status: 204 });
    await until('ChannelDestroyed', () => events.some((e) => e.type === 'ChannelDestroyed'));
    expect(events.find((e) => e.type === 'ChannelDestroyed')?.cause).toBe(16);
    expect(await client.hangup('h-1')).toBe('not_found');
  });

  it('an inbound call arrives as StasisStart with caller number and dialed extension, and can be answered', async () => {
    fake.simulateInbound({ channelId: 'in-1', callerNumber: '+15557654321', dialedExten: '+15550009999' });
    await until('StasisStart', () => events.length > 0);
    expect(events[0]).toMatchObject({
      type: 'StasisStart', channelId: 'in-1', callerNumber: '+15557654321', dialedExten: '+15550009999', state: 'Ring', args: [],
    });
    await client.answer('in-1');
    await until('answer state change', () => events.some((e) => e.type === 'ChannelStateChange'));
    expect(events.find((e) => e.type === 'ChannelStateChange')?.state).toBe('Up');
    expect((await client.getChannel('in-1'))?.state).toBe('Up');
    await expect(client.answer('gone')).rejects.toMatchObject({ provider: 'ari', detail: expect.stringContaining('HTTP 404') });
  });

  it('reconnects after the server drops the socket, counting attempts with backoff, and reports health', async () => {
    const changes: AriHealth[] = [];
    client.onHealthChange((h) => changes.push(h));
    const firstConnectedAt = client.health().lastConnectedAt;
    fake.refuseWebSockets = true;
    fake.dropWebSockets();
    await until('three refused attempts', () => client.health().reconnectAttempts >= 3);
    const down = client.health();
    expect(down.connected).toBe(false);
    expect(down.lastError).toContain('503');
    expect(down.lastDisconnectedAt).toBeDefined();

    fake.refuseWebSockets = false;
    await until('reconnection', () => client.health().connected);
    const up = client.health();
    expect(up).toMatchObject({ connected: true, reconnectAttempts: 0, reconnects: 1 });
    expect(up.lastConnectedAt! >= firstConnectedAt!).toBe(true);
    // exponential backoff without jitter after the drop: 20, 40, 80, ... capped at 200
    const delays = changes.filter((h) => h.nextRetryInMs !== undefined).map((h) => h.nextRetryInMs);
    expect(delays.slice(0, 3)).toEqual([20, 40, 80]);
    expect(changes.at(-1)?.connected).toBe(true);

    // events flow on the new socket
    fake.simulateInbound({ channelId: 'after', callerNumber: '+1555', dialedExten: '100' });
    await until('event after reconnect', () => events.some((e) => e.channelId === 'after'));
    // the refused upgrades were recorded by the fake
    expect(fake.requests.filter((r) => r.websocket && r.status === 503).length).toBeGreaterThanOrEqual(3);
  });

  it('caps the backoff delay', async () => {
    const c = newClient(fake, { reconnect: { initialDelayMs: 10, maxDelayMs: 40, factor: 3, jitter: false } });
    const delays: number[] = [];
    c.onHealthChange((h) => {
      if (h.nextRetryInMs !== undefined) delays.push(h.nextRetryInMs);
    });
    fake.refuseWebSockets = true;
    await expect(c.connect()).rejects.toBeInstanceOf(ProviderApiError);
    await until('four retries', () => delays.length >= 4);
    // the first attempt failed, so the first retry waits initial × factor; then capped at 40
    expect(delays.slice(0, 4)).toEqual([30, 40, 40, 40]);
    fake.refuseWebSockets = false;
    await until('late connection', () => c.health().connected);
  });

  it('rejects wrong credentials with a safe ProviderApiError and keeps retrying in the background', async () => {
    const c = newClient(fake, { password: 'wrong-password' });
    const err = (await c.connect().catch((e: unknown) => e)) as ProviderApiError;
    expect(err).toBeInstanceOf(ProviderApiError);
    expect(err.detail).toMatch(/username or password/);
    expect(err.detail).not.toContain('wrong-password');
    expect(c.health()).toMatchObject({ connected: false, reconnectAttempts: 1 });
    await expect(c.originate({ channelId: 'x', endpoint: 'PJSIP/1' })).rejects.toBeInstanceOf(ProviderApiError);
  });

  it('an unreachable Asterisk fails connect() as retryable', async () => {
    const gone = await FakeAriServer.start();
    const url = gone.url;
    await gone.close();
    const c = new AriClient({ url, username: 'u', password: 'p', app: 'a', pingIntervalMs: 0, reconnect: { initialDelayMs: 50 } });
    clients.push(c);
    await expect(c.connect()).rejects.toMatchObject({ provider: 'ari', retryable: true });
    expect(c.health().connected).toBe(false);
  });

  it('two configurations with different credentials never use each other\'s (ari-client shares them process-wide)', async () => {
    const other = await FakeAriServer.start({ username: 'other-user', password: 'other-pass' });
    fakes.push(other);
    const c2 = newClient(other, { app: 'second' });
    await c2.connect();
    // the first client, connected before, must still authenticate as itself
    await client.originate({ channelId: 'one', endpoint: 'PJSIP/1' });
    await c2.originate({ channelId: 'two', endpoint: 'PJSIP/2' });
    const one = fake.requests.filter((r) => r.method === 'POST');
    const two = other.requests.filter((r) => r.method === 'POST');
    expect(one.map((r) => [r.user, r.status])).toEqual([['cp-user', 200]]);
    expect(two.map((r) => [r.user, r.status])).toEqual([['other-user', 200]]);
    expect(other.connectedApps).toEqual([['second']]);
  });

  it('close() stops the socket for good: no reconnect, connect() refused', async () => {
    await client.close();
    await until('socket closed', () => fake.connectedApps.length === 0);
    expect(client.health().connected).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.connectedApps).toEqual([]);
    await expect(client.connect()).rejects.toBeInstanceOf(ProviderApiError);
  });
});

describe('normalizeEvent', () => {
  it('ignores messages without a channel and fixes Asterisk timestamps', () => {
    expect(normalizeEvent({ type: 'ApplicationReplaced', application: 'a' })).toBeNull();
    expect(normalizeEvent('nope')).toBeNull();
    const e = normalizeEvent({
      type: 'ChannelDestroyed', timestamp: '2024-05-01T10:11:12.345-0200', cause: 21, cause_txt: 'Call Rejected',
      channel: { id: 'c', name: 'PJSIP/1', state: 'Down', caller: { name: '', number: '' }, dialplan: { exten: 's', context: 'x' } },
    });
    expect(e).toEqual({
      type: 'ChannelDestroyed', channelId: 'c', cause: 21, causeText: 'Call Rejected', state: 'Down',
      dialedExten: 's', context: 'x', timestamp: '2024-05-01T12:11:12.345Z',
    });
  });
});
