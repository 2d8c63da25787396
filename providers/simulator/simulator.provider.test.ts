import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from '@jest/globals';
import { ProviderApiError } from '../../core/errors.js';
import type { NormalizedCallEvent, PlaceCallRequest } from '../../core/ports/telephony-provider.port.js';
import { fakeProviderContext, runTelephonyProviderContract } from '../../test/contracts/telephony-provider.contract.js';
import simulator from './index.js';
import { SimulatorProvider, simulatorConfig } from './simulator.provider.js';
import { scenarioFor } from './simulator.status-map.js';

const here = dirname(fileURLToPath(import.meta.url));

const request = (to: string, attemptKey = `a-${to}`, runId = 1): PlaceCallRequest => ({
  attemptKey, organizationId: 1, runId, to, from: '+15550001111',
  statusCallbackUrl: 'https://x/api/v1/telephony/simulator/status/1', answerUrl: 'https://x/answer', mediaUrl: 'wss://x/media',
  machineDetection: false, ringTimeoutSeconds: 30,
});

/** Resolves once `events` holds a final status. */
async function untilFinal(events: NormalizedCallEvent[], timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!events.some((e) => e.kind === 'status' && (e.status === 'completed' || e.status === 'failed'))) {
    if (Date.now() - start > timeoutMs) throw new Error(`no final status: ${JSON.stringify(events)}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

runTelephonyProviderContract('simulator', () => ({
  plugin: simulator,
  fixturesDir: join(here, 'fixtures'),
  validConfig: { account_id: 'sim-acct-1', api_key: 'sk_live_abcdef123456', ring_ms: 0, talk_ms: 10 },
  otherAccountConfig: { account_id: 'sim-acct-2', ring_ms: 0, talk_ms: 10 },
  placeCall: {
    async setup() {
      return { config: { account_id: 'sim-acct-1', ring_ms: 1, talk_ms: 20 }, teardown: async () => {} };
    },
    request: request('+14155550142', 'attempt-42', 42),
    async verify(placed, reported) {
      expect(placed.providerCallId).toBe('sim-attempt-42');
      await untilFinal(reported);
      expect(reported.map((e) => (e.kind === 'status' ? [e.status, e.outcome ?? null, e.runId] : e.kind))).toEqual([
        ['ringing', null, 42], ['in_progress', null, 42], ['completed', 'completed', 42],
      ]);
      expect(reported.at(-1)).toMatchObject({ durationSeconds: 0.02, providerCallId: 'sim-attempt-42' });
    },
  },
}));

describe('simulator provider (API.md section 8)', () => {
  const live: SimulatorProvider[] = [];
  const make = (config: Record<string, unknown> = { ring_ms: 1, talk_ms: 5 }) => {
    const events: NormalizedCallEvent[] = [];
    const p = new SimulatorProvider(simulatorConfig(config), fakeProviderContext(events));
    live.push(p);
    return { p, events };
  };
  afterEach(async () => {
    await Promise.all(live.splice(0).map((p) => p.close()));
  });

  it('chooses the outcome by the last two digits of the called number', () => {
    expect(scenarioFor('+1 (415) 555-0100')).toBe('dial_failed');
    expect(scenarioFor('+14155550101')).toBe('busy');
    expect(scenarioFor('+14155550102')).toBe('no_answer');
    expect(scenarioFor('+14155550103')).toBe('voicemail');
    expect(scenarioFor('+14155550104')).toBe('answered');
    expect(scenarioFor('sip:alice@example.com')).toBe('answered');
  });

  it('fails the dial itself for numbers ending in 00', async () => {
    const { p, events } = make();
    const err = await p.placeCall(request('+14155550100')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderApiError);
    expect((err as ProviderApiError).retryable).toBe(false);
    expect(events).toEqual([]);
  });

  it.each([
    ['+14155550101', 'completed', 'busy'],
    ['+14155550102', 'completed', 'no_answer'],
    ['+14155550103', 'completed', 'voicemail'],
  ])('%s rings, then ends %s with outcome %s', async (to, status, outcome) => {
    const { p, events } = make();
    await p.placeCall(request(to));
    await untilFinal(events);
    expect(events.map((e) => (e.kind === 'status' ? e.status : e.kind))).toEqual(['ringing', status]);
    expect(events[1]).toMatchObject({ outcome });
  });

  it('answers, talks talk_ms and reports the duration; placing the same attempt again dials nothing', async () => {
    const { p, events } = make({ ring_ms: 0, talk_ms: 30 });
    const first = await p.placeCall(request('+14155550177', 'same'));
    const again = await p.placeCall(request('+14155550177', 'same'));
    expect(again).toEqual({ providerCallId: first.providerCallId, alreadyPlaced: true });
    await untilFinal(events);
    expect(events.map((e) => (e.kind === 'status' ? e.status : e.kind))).toEqual(['ringing', 'in_progress', 'completed']);
    expect(events[2]).toMatchObject({ outcome: 'completed', durationSeconds: 0.03 });
    expect(await p.getCallStatus(first.providerCallId)).toMatchObject({ status: 'completed', outcome: 'completed' });
    expect(await p.placeCall(request('+14155550177', 'same'))).toEqual({ providerCallId: first.providerCallId, alreadyPlaced: true });
  });

  it('hangup cancels a ringing call and ends an answered one; both idempotent', async () => {
    const { p, events } = make({ ring_ms: 60_000, talk_ms: 1000 });
    const ringing = await p.placeCall(request('+14155550150', 'r'));
    await new Promise((r) => setTimeout(r, 10));
    expect(await p.getCallStatus(ringing.providerCallId)).toMatchObject({ status: 'ringing' });
    await p.hangup(ringing.providerCallId);
    await p.hangup(ringing.providerCallId);
    expect(events.filter((e) => e.kind === 'status' && e.outcome === 'canceled')).toEqual([expect.objectContaining({ status: 'completed' })]);

    const { p: p2, events: e2 } = make({ ring_ms: 0, talk_ms: 600_000 });
    const answered = await p2.placeCall(request('+14155550151', 'b'));
    while (!e2.some((e) => e.kind === 'status' && e.status === 'in_progress')) await new Promise((r) => setTimeout(r, 2));
    await p2.hangup(answered.providerCallId);
    expect(e2.at(-1)).toMatchObject({ status: 'completed', outcome: 'completed', durationSeconds: expect.any(Number) });
    expect(await p2.getCallStatus('sim-unknown')).toBeNull();
  });

  it('close cancels every pending timer: nothing is reported afterwards', async () => {
    const { p, events } = make({ ring_ms: 20, talk_ms: 20 });
    for (let i = 0; i < 50; i++) await p.placeCall(request(`+1415555${String(1010 + i)}`, `c${i}`));
    expect(p.activeCalls).toBe(50);
    await p.close();
    const before = events.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(events.length).toBe(before);
    expect(p.activeCalls).toBe(0);
    await expect(p.placeCall(request('+14155550160'))).rejects.toBeInstanceOf(ProviderApiError);
  });

  it('runs thousands of concurrent calls to completion', async () => {
    const { p, events } = make({ ring_ms: 5, talk_ms: 5 });
    const n = 3000;
    let refused = 0;
    for (let i = 0; i < n; i++) {
      await p.placeCall(request(`+1415556${String(i).padStart(4, '0')}`, `k${i}`, i + 1)).catch((e: unknown) => {
        if (!(e instanceof ProviderApiError)) throw e;
        refused++;
      });
    }
    expect(refused).toBe(30);
    const start = Date.now();
    while (events.filter((e) => e.kind === 'status' && (e.status === 'completed' || e.status === 'failed')).length < n - 30) {
      if (Date.now() - start > 10_000) throw new Error('calls did not finish');
      await new Promise((r) => setTimeout(r, 5));
    }
    // 30 of 3000 end in 00: their dial failed up front; every other call reached a final status once
    const finals = events.filter((e) => e.kind === 'status' && (e.status === 'completed' || e.status === 'failed'));
    expect(new Set(finals.map((e) => (e as { runId: number }).runId)).size).toBe(finals.length);
    expect(p.activeCalls).toBe(0);
  });

  it('answers inbound calls with {run_id} and plays them through', async () => {
    const { p, events } = make({ ring_ms: 0, talk_ms: 5 });
    const m = p.inboundAnswer({ runId: 9, providerCallId: 'sim-in-1', mediaUrl: 'wss://x', statusCallbackUrl: 'https://x' });
    expect(m).toEqual({ contentType: 'application/json', body: '{"run_id":9}' });
    await untilFinal(events);
    expect(events.map((e) => (e.kind === 'status' ? e.status : e.kind))).toEqual(['in_progress', 'completed']);
  });

  it('checks X-Simulator-Key only when an api_key is configured', () => {
    const req = { publicUrl: 'u', method: 'POST', headers: {} as Record<string, string>, body: {}, query: {} };
    expect(make({}).p.verifyWebhook(req)).toBe(true);
    const { p } = make({ api_key: 'k-123456' });
    expect(p.verifyWebhook(req)).toBe(false);
    expect(p.verifyWebhook({ ...req, headers: { 'x-simulator-key': 'k-123457' } })).toBe(false);
    expect(p.verifyWebhook({ ...req, headers: { 'x-simulator-key': 'k-123456' } })).toBe(true);
  });

  it('parses the inbound test body and refuses with 404/409 JSON', () => {
    expect(simulator.parseInboundCall!({ publicUrl: 'u', method: 'POST', headers: {}, query: {}, body: { account_id: 'a', from: '+1555', to: '+14155550142' } }))
      .toEqual({ accountId: 'a', from: '+1555', to: '+14155550142', providerCallId: expect.stringMatching(/^sim-in-/) });
    expect(simulator.parseInboundCall!({ publicUrl: 'u', method: 'POST', headers: {}, query: {}, body: {} })).toEqual({ ignored: expect.any(String) });
    expect(simulator.inboundReject!('phone_number_not_found')).toMatchObject({ status: 404 });
    expect(JSON.parse(simulator.inboundReject!('workflow_archived').body)).toEqual({ detail: expect.any(String), code: 'workflow_archived' });
  });
});
