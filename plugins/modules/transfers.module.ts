import type { Container } from 'inversify';
import { CallUrls } from '../../core/calls/call-urls.js';
import { TransferCall } from '../../core/calls/transfer-call.use-case.js';
import { CallTransfer } from '../../core/ports/call-transfer.port.js';
import { Clock } from '../../core/ports/clock.port.js';
import { Logger } from '../../core/ports/logger.port.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import { ProviderInstances } from '../../core/telephony/provider-instances.js';
import { port, provide } from './wire.js';

/**
 * Transfers (docs/voice.md "Transfers"): the `CallTransfer` port the voice session calls when an endCall node's
 * last words with `transfer_to` were heard, implemented by `TransferCall` over the run's provider instance. Wired
 * by name. Needs runs, telephony configurations and provider instances (the telephony module); absent otherwise,
 * and then the session hangs up as it would without a transfer.
 */
export function transfersModule(c: Container): void {
  if (![RunRepository, TelephonyConfigurationRepository, ProviderInstances, CallUrls].every((t) => c.isBound(t))) return;
  provide(c, port<CallTransfer>(CallTransfer), {
    deps: {
      runs: port<RunRepository>(RunRepository),
      configurations: port<TelephonyConfigurationRepository>(TelephonyConfigurationRepository),
      instances: ProviderInstances,
      urls: CallUrls,
      clock: port<Clock>(Clock),
      logger: port<Logger>(Logger),
    },
    init: (d) => new TransferCall({ ...d, log: d.logger.child({ component: 'transfer' }) }),
  });
}
