import { describe, expect, it } from '@jest/globals';
import type { SimulatedCallRequest } from '../../core/ports/simulated-callers.port.js';
import type { NormalizedCallEvent } from '../../core/ports/telephony-provider.port.js';
import { fakeProviderContext } from '../../test/contracts/telephony-provider.contract.js';
import simulator from './index.js';
import { SimulatorProvider, simulatorConfig } from './simulator.provider.js';

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

  it('a host without the voice pipeline (connect answers false) runs the call on the timers', async () => {
    const events: NormalizedCallEvent[] = [];
    const sim = new SimulatorProvider(simulatorConfig({ talk_ms: 5 }), { ...fakeProviderContext(events), connectSimulatedCaller: () => false });
    sim.inboundAnswer(answer);
    await sleep(60);
    expect(statuses(events)).toEqual(['in_progress', 'completed']);
    await sim.close();
  });
});
