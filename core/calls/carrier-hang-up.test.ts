import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../ports/logger.port.js';
import type { TelephonyConfiguration } from '../telephony/telephony-configuration.js';
import { CarrierHangUp } from './carrier-hang-up.js';

const configuration = { id: 3, provider: 'telnyx' } as TelephonyConfiguration;

function harness(fail = false) {
  const hungUp: Array<[number, string]> = [];
  const hangUp = new CarrierHangUp(
    { findForProviderEvent: async (id) => (id === 3 ? configuration : null) },
    {
      forConfiguration: (c) => ({
        hangup: async (callId: string) => {
          if (fail) throw new Error('carrier down');
          hungUp.push([c.id, callId]);
        },
      }),
    },
    silentLogger,
  );
  return { hangUp, hungUp };
}

describe('CarrierHangUp', () => {
  it("hangs up the run's call through its configuration's carrier; the stream's call id when the run has none", async () => {
    const { hangUp, hungUp } = harness();
    await hangUp.execute({ id: 1, provider: 'telnyx', telephonyConfigurationId: 3, providerCallId: 'v3:run' }, 'v3:stream', 'end_call');
    await hangUp.execute({ id: 2, provider: 'telnyx', telephonyConfigurationId: 3, providerCallId: null }, 'v3:stream', 'end_call');
    expect(hungUp).toEqual([[3, 'v3:run'], [3, 'v3:stream']]);
  });

  it('does nothing without a call id, a configuration or with one of another provider; never throws', async () => {
    const { hangUp, hungUp } = harness();
    await hangUp.execute({ id: 1, provider: 'telnyx', telephonyConfigurationId: 3, providerCallId: null }, undefined, 'x');
    await hangUp.execute({ id: 1, provider: 'telnyx', telephonyConfigurationId: null, providerCallId: 'v3:a' }, undefined, 'x');
    await hangUp.execute({ id: 1, provider: 'telnyx', telephonyConfigurationId: 9, providerCallId: 'v3:a' }, undefined, 'x');
    await hangUp.execute({ id: 1, provider: 'twilio', telephonyConfigurationId: 3, providerCallId: 'CA1' }, undefined, 'x');
    expect(hungUp).toEqual([]);
    await expect(harness(true).hangUp.execute({ id: 1, provider: 'telnyx', telephonyConfigurationId: 3, providerCallId: 'v3:a' }, undefined, 'x')).resolves.toBeUndefined();
  });
});
