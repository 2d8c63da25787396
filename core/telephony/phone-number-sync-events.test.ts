import { describe, expect, it } from '@jest/globals';
import type { OutboundEvent } from '../ports/event-publisher.port.js';
import { silentLogger } from '../ports/logger.port.js';
import { PhoneNumberService } from './phone-numbers.use-case.js';
import type { PhoneNumber } from './phone-number.js';
import type { TelephonyConfiguration } from './telephony-configuration.js';

/** `phone_number.sync_failed` is published where a number's provider sync is decided to have failed (docs/webhooks.md). */
describe('phone number sync events', () => {
  const number = { id: 5, organizationId: 3, telephonyConfigurationId: 9, address: '+15550001234', addressNormalized: '+15550001234' } as PhoneNumber;
  const configuration = { id: 9, organizationId: 3, provider: 'simulator' } as TelephonyConfiguration;
  const service = (sync: () => Promise<{ ok: boolean; message: string }>, published: OutboundEvent[]) => new PhoneNumberService(
    {} as never, {} as never, {} as never, {} as never, {} as never,
    { forConfiguration: () => ({ syncInboundWebhook: sync }) } as never, silentLogger, 'https://cp.example.com',
    { publish: async (e) => { published.push(e); } },
  );

  it('publishes a failed bind or a throwing provider, and nothing for a sync that succeeded', async () => {
    const published: OutboundEvent[] = [];
    expect(await service(async () => ({ ok: false, message: 'number not on the account' }), published).sync(configuration, number, true))
      .toEqual({ ok: false, message: 'number not on the account' });
    await service(async () => { throw new Error('provider down'); }, published).sync(configuration, number, false);
    await service(async () => ({ ok: true, message: 'bound' }), published).sync(configuration, number, true);
    expect(published).toEqual([
      { type: 'phone_number.sync_failed', organizationId: 3, operation: 'bind', message: 'number not on the account', phoneNumber: { id: 5, address: '+15550001234', telephonyConfigurationId: 9 } },
      { type: 'phone_number.sync_failed', organizationId: 3, operation: 'detach', message: 'provider down', phoneNumber: { id: 5, address: '+15550001234', telephonyConfigurationId: 9 } },
    ]);
  });
});
