import { describe, expect, it } from '@jest/globals';
import { InputError } from '../errors.js';
import type { ProviderPlugin } from '../ports/telephony-provider.port.js';
import { AgentReadiness } from './agent-readiness.js';

const carriers = {
  get: (p: string) => ({ twilio: 'websocket', ari: 'ari', simulator: 'none' } as Record<string, string>)[p]
    ? ({ manifest: { mediaTransport: ({ twilio: 'websocket', ari: 'ari', simulator: 'none' } as Record<string, string>)[p] } } as unknown as ProviderPlugin)
    : null,
};
const talking = { llm: { service_id: 1, model: 'm' }, stt: { service_id: 2 }, tts: { service_id: 3 } };
const refusal = (f: () => void) => {
  try {
    f();
    return null;
  } catch (e) {
    return e;
  }
};

describe('AgentReadiness (API.md 11)', () => {
  const r = new AgentReadiness(carriers);
  it('a carrier with call audio needs llm, stt and tts', () => {
    for (const provider of ['twilio', 'ari']) {
      const e = refusal(() => r.assertCanTakeCalls({ id: 7, workflowConfigurations: {} }, provider));
      expect(e).toBeInstanceOf(InputError);
      expect(e).toMatchObject({ code: 'agent_not_configured' });
      const { stt: _s, ...noStt } = talking;
      expect(refusal(() => r.assertCanTakeCalls({ id: 7, workflowConfigurations: noStt }, provider))).toMatchObject({ code: 'agent_not_configured' });
      expect(refusal(() => r.assertCanTakeCalls({ id: 7, workflowConfigurations: talking }, provider))).toBeNull();
    }
  });
  it('the simulator (no call audio) and an unloaded plugin run any workflow', () => {
    expect(r.needsTalkingAgent('simulator')).toBe(false);
    expect(refusal(() => r.assertCanTakeCalls({ id: 7, workflowConfigurations: {} }, 'simulator'))).toBeNull();
    expect(refusal(() => r.assertCanTakeCalls({ id: 7, workflowConfigurations: {} }, 'gone'))).toBeNull();
  });
});
