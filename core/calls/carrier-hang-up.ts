import type { Logger } from '../ports/logger.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import type { TelephonyProvider } from '../ports/telephony-provider.port.js';
import type { Run } from '../runs/run.js';
import type { TelephonyConfiguration } from '../telephony/telephony-configuration.js';

/**
 * Hangs a call up through its carrier's call-control API, for carriers whose media stream is only a fork of
 * the call (manifest `media.hangUp` `rest`: Telnyx), so closing the stream alone would leave the caller on a
 * silent line (docs/voice.md "Carriers and media framing"). The call is the run's provider call id, else the
 * one the stream's `start` named. Never throws: a run without a configuration or a call id, or a carrier
 * failure, is logged and left to the call's own end (idle timeouts, the reconcile sweep).
 */
export class CarrierHangUp {
  constructor(
    private readonly configurations: Pick<TelephonyConfigurationRepository, 'findForProviderEvent'>,
    private readonly instances: { forConfiguration(configuration: TelephonyConfiguration): Pick<TelephonyProvider, 'hangup'> },
    private readonly log: Logger,
  ) {}

  async execute(run: Pick<Run, 'id' | 'provider' | 'telephonyConfigurationId' | 'providerCallId'>, streamCallId: string | undefined, reason: string): Promise<void> {
    const callId = run.providerCallId ?? streamCallId;
    const log = this.log.child({ provider: run.provider, run_id: run.id });
    try {
      if (!callId || run.telephonyConfigurationId === null) {
        log.warn({ reason }, 'carrier hang-up skipped: no call id or configuration');
        return;
      }
      const configuration = await this.configurations.findForProviderEvent(run.telephonyConfigurationId);
      if (!configuration || configuration.provider !== run.provider) {
        log.warn({ reason }, 'carrier hang-up skipped: the configuration is gone');
        return;
      }
      await this.instances.forConfiguration(configuration).hangup(callId);
      log.info({ reason }, 'call hung up through the carrier');
    } catch (e) {
      log.warn({ err: (e as Error)?.message, reason }, 'carrier hang-up failed');
    }
  }
}
