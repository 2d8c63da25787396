import { describe, expect, it } from '@jest/globals';
import type { SimulatedCallRequest } from '../../core/ports/simulated-callers.port.js';
import type { NormalizedCallEvent } from '../../core/ports/telephony-provider.port.js';
import { fakeProviderContext } from '../../test/contracts/telephony-provider.contract.js';
import simulator from './index.js';
import { SimulatorProvider, simulatorConfig } from './simulator.provider.js';
import { ProviderRegistry } from '../../plugins/provider-registry.js';

const registry = ProviderRegistry.builtIn({ allowPrivateNetwork: false }, [simulator]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const statuses = (events: NormalizedCallEvent[]) => events.map((e) => (e.kind === 'status' ? e.status : e.kind));
const CALLER = { lines: ['Yes, this is Dana.'] };
const answer = { runId: 3, providerCallId: 'sim-in-1', mediaUrl: 'wss://x/media', statusCallbackUrl: 'https://x/status', caller: CALLER };

describe('the simulator with a simulated caller (API.md 13)', () => {
  it('parses caller {lines, persona?} on the inbound test endpoint', () => {
    const call = simulator.parseInboundCall!({ publicUrl: 'u', method: 'POST', headers: {}, query: {}, body: { to: '+15550004444', caller: { lines: ['Hi'], persona: 'calm' } } });
    expect(call).toMatchObject({ to: '+15550004444', caller: { lines: ['Hi'], persona: 'calm' } });
    expect(() => simulator.parseInboundCall!({ publicUrl: 'u', method: 'POST', headers: {}, query: {}, body: { to: '+1555', caller: { lines: [42] } } }))
      .toThrow(expect.objectContaining({ name: 'ValidationError' }) as unknown as Error);
  });

  it('hands an answered call with a caller to the host and holds it until hang-up (talk_ms does not end it); the hang-up completes it', async () => {
    const events: NormalizedCallEvent[] = [];
    const requests: Array<Omit<SimulatedCallRequest, 'provider'>> = [];
    const sim = new SimulatorProvider(simulatorConfig({ talk_ms: 5 }), { ...fakeProviderContext(events), connectSimulatedCaller: (r) => (requests.push(r), true) });
    sim.inboundAnswer(answer);
    await sleep(40);
    expect(statuses(events)).toEqual(['in_progress']);
    expect(requests).toEqual([{ runId: 3, providerCallId: 'sim-in-1', caller: CALLER, hangUp: expect.any(Function) }]);
    await requests[0]!.hangUp();
    expect(statuses(events)).toEqual(['in_progress', 'completed']);
    await sim.close();
  });

  it('a configuration with caller_lines / caller_persona brings that caller to every answered outbound call; an inbound call\'s own caller wins', async () => {
    expect(simulatorConfig({}).caller).toBeNull();
    expect(simulatorConfig({ caller_lines: [], caller_persona: ' ' }).caller).toBeNull();
    expect(simulatorConfig({ caller_persona: 'a calm patient' }).caller).toEqual({ lines: [], persona: 'a calm patient' });
    const events: NormalizedCallEvent[] = [];
    const requests: Array<Omit<SimulatedCallRequest, 'provider'>> = [];
    const config = simulatorConfig({ ring_ms: 0, talk_ms: 5, caller_lines: ['Hello?', 'Yes, Tuesday works.'], caller_persona: 'Dana' });
    const sim = new SimulatorProvider(config, { ...fakeProviderContext(events), connectSimulatedCaller: (r) => (requests.push(r), true) });
    await sim.placeCall({ runId: 8, attemptKey: 'c1-a1', to: '+15550001234', from: '+15550000000', statusCallbackUrl: 'https://x/status', mediaUrl: 'wss://x/media' } as never);
    await sleep(40);
    expect(statuses(events)).toEqual(['ringing', 'in_progress']);
    expect(requests).toEqual([{ runId: 8, providerCallId: 'sim-c1-a1', caller: { lines: ['Hello?', 'Yes, Tuesday works.'], persona: 'Dana' }, hangUp: expect.any(Function) }]);
    await requests[0]!.hangUp();
    expect(statuses(events)).toEqual(['ringing', 'in_progress', 'completed']);
    sim.inboundAnswer(answer);
    await sleep(20);
    expect(requests[1]).toMatchObject({ runId: 3, caller: CALLER });
    await sim.close();
  });

  it('validates caller_lines and caller_persona in the config (422 at the field)', () => {
    for (const bad of [{ caller_lines: 'hi' }, { caller_lines: [''] }, { caller_lines: ['  '] }, { caller_lines: Array(51).fill('x') }, { caller_persona: '' }, { caller_persona: 'x'.repeat(4001) }]) {
      const r = registry.validateConfig({ provider: 'simulator', ...bad });
      expect(r.ok).toBe(false);
      expect(!r.ok && r.issues.map((i) => i.loc[0])).toContain(Object.keys(bad)[0]);
    }
    expect(registry.validateConfig({ provider: 'simulator', caller_lines: ['Hi'], caller_persona: 'Dana' })).toMatchObject({ ok: true, config: { caller_lines: ['Hi'], caller_persona: 'Dana' } });
  });

  it('a host without the voice pipeline (connect answers false) runs the call on the timers', async () => {
    const events: NormalizedCallEvent[] = [];
    const sim = new SimulatorProvider(simulatorConfig({ talk_ms: 5 }), { ...fakeProviderContext(events), connectSimulatedCaller: () => false });
    sim.inboundAnswer(answer);
    await sleep(60);
    expect(statuses(events)).toEqual(['in_progress', 'completed']);
    await sim.close();
  });
});
