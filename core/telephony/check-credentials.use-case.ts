import type { Clock } from '../ports/clock.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import type { CredentialsCheckResult } from '../ports/telephony-provider.port.js';
import type { ProviderInstances } from './provider-instances.js';
import type { CredentialsCheck, TelephonyConfiguration } from './telephony-configuration.js';

/** How long the provider gets to answer a credentials check before it counts as failed. */
export const DEFAULT_CREDENTIALS_CHECK_TIMEOUT_MS = 5_000;

/** At most this much of a provider's message is kept (it is shown to the user and stored). */
const MAX_MESSAGE_LENGTH = 500;

/**
 * Asks a configuration's provider whether its current credentials work (`TelephonyProvider.checkCredentials`),
 * bounded by `timeoutMs`, and records the answer as the configuration's `credentialsCheck` (API.md section 5).
 * Run after a configuration is created and whenever its credentials change; the configuration is saved either
 * way. A check that throws, times out or answers garbage is `{ok: false}` with a message: only a provider that
 * really accepted the credentials proves the account id (docs/security.md). Throws only what the repository
 * throws.
 */
export class CheckCredentials {
  constructor(
    private readonly repo: Pick<TelephonyConfigurationRepository, 'recordCredentialsCheck'>,
    private readonly instances: Pick<ProviderInstances, 'forConfiguration'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly timeoutMs: number = DEFAULT_CREDENTIALS_CHECK_TIMEOUT_MS,
  ) {}

  /** The configuration as stored with its new check (unchanged when it was deleted meanwhile). */
  async execute(configuration: TelephonyConfiguration): Promise<TelephonyConfiguration> {
    const result = await this.ask(configuration);
    const check: CredentialsCheck = { ok: result.ok, message: result.message.slice(0, MAX_MESSAGE_LENGTH), checkedAt: this.clock.now() };
    const log = { telephony_configuration_id: configuration.id, provider: configuration.provider, ok: check.ok, message: check.message };
    if (check.ok) this.log.info(log, 'telephony credentials checked');
    else this.log.warn(log, 'telephony credentials refused or not checkable');
    return (await this.repo.recordCredentialsCheck(configuration.organizationId, configuration.id, check)) ?? { ...configuration, credentialsCheck: check };
  }

  private async ask(configuration: TelephonyConfiguration): Promise<CredentialsCheckResult> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<CredentialsCheckResult>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, message: `The provider did not answer the credentials check within ${this.timeoutMs >= 1000 ? `${this.timeoutMs / 1000} s` : `${this.timeoutMs} ms`}` }), this.timeoutMs);
    });
    try {
      const provider = this.instances.forConfiguration(configuration);
      if (typeof provider.checkCredentials !== 'function') return { ok: false, message: `The "${configuration.provider}" provider plugin cannot check credentials` };
      const answer = await Promise.race([provider.checkCredentials(), timeout]);
      if (!answer || typeof answer.ok !== 'boolean') return { ok: false, message: 'The provider plugin gave no credentials check result' };
      return { ok: answer.ok, message: typeof answer.message === 'string' && answer.message ? answer.message : answer.ok ? 'Credentials accepted' : 'Credentials refused' };
    } catch (e) {
      const err = e as { detail?: unknown; message?: unknown };
      const message = typeof err?.detail === 'string' ? err.detail : typeof err?.message === 'string' ? err.message : 'the check failed';
      return { ok: false, message: `Credentials check failed: ${message}` };
    } finally {
      clearTimeout(timer);
    }
  }
}
