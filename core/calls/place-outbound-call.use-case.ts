import type { Clock } from '../ports/clock.port.js';
import type { PhoneNumberRepository } from '../ports/phone-number.repository.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { TelephonyProvider } from '../ports/telephony-provider.port.js';
import type { Run } from '../runs/run.js';
import type { TelephonyConfiguration } from '../telephony/telephony-configuration.js';
import type { CallUrls } from './call-urls.js';

export interface OutboundCallInput {
  configuration: TelephonyConfiguration;
  workflowId: number;
  definitionId: number;
  /** The run's name. */
  name: string;
  to: string;
  /** The caller id (normalized address), or null to let the provider decide. */
  from: string | null;
  campaignId?: number | null;
  attemptId?: number | null;
  initialContext: Record<string, unknown>;
  /** The provider's idempotency key (ARI `channelId`): one per call attempt. Default `run-<run id>`. */
  attemptKey?: string;
  machineDetection: boolean;
  /** The voice session acts on the carrier's AMD verdict (`PlaceCallRequest.asyncMachineDetection`). */
  asyncMachineDetection?: boolean;
  ringTimeoutSeconds: number;
  /**
   * Runs once the run exists and before the provider is called; false stops there (nothing is dialed). The
   * campaign engine attaches the run to its attempt here, so a crash after it never dials twice.
   */
  beforeDial?: (run: Run) => Promise<boolean>;
}

export type OutboundCallResult =
  | { kind: 'placed'; run: Run; providerCallId: string; alreadyPlaced: boolean }
  /** `beforeDial` said no: the run exists (queued), the provider was never called. */
  | { kind: 'stopped'; run: Run }
  /** The provider refused or could not be reached (`error`, a `ProviderApiError` as a rule): the caller ends the run. */
  | { kind: 'failed'; run: Run; error: Error };

/**
 * Places every outbound call (DESIGN.md "How a campaign call flows"): creates the run (`queued`, mode
 * `outbound`, with the configuration's provider), lets the caller attach it (`beforeDial`), then asks the
 * configuration's provider instance to dial with the URLs `CallUrls` builds (status, answer, and the media
 * WebSocket with the run's media token). Throws only what the run repository throws; a dial failure is a
 * result (`failed`), so the caller can end the run through the one status path.
 */
export class PlaceOutboundCall {
  constructor(
    private readonly runs: Pick<RunRepository, 'create'>,
    private readonly numbers: Pick<PhoneNumberRepository, 'getDefaultCaller' | 'list'>,
    private readonly providers: { forConfiguration(configuration: TelephonyConfiguration): TelephonyProvider },
    private readonly urls: Pick<CallUrls, 'forCall'>,
    private readonly clock: Clock,
  ) {}

  /**
   * The caller id a configuration dials from: its active default caller id, else its first active number, as
   * the normalized address (E.164 for PSTN), never the display form; null when it has none.
   */
  async callerNumber(organizationId: number, configurationId: number): Promise<string | null> {
    const preferred = await this.numbers.getDefaultCaller(organizationId, configurationId);
    if (preferred?.isActive) return preferred.addressNormalized;
    const any = (await this.numbers.list(organizationId, configurationId)).find((n) => n.isActive);
    return any?.addressNormalized ?? null;
  }

  async execute(input: OutboundCallInput): Promise<OutboundCallResult> {
    const { configuration } = input;
    const organizationId = configuration.organizationId;
    const run = await this.runs.create(organizationId, {
      workflowId: input.workflowId, definitionId: input.definitionId, name: input.name, mode: 'outbound',
      campaignId: input.campaignId ?? null, attemptId: input.attemptId ?? null, telephonyConfigurationId: configuration.id,
      provider: configuration.provider, callerNumber: input.from, calledNumber: input.to, initialContext: input.initialContext,
      now: this.clock.now(),
    });
    if (input.beforeDial && !(await input.beforeDial(run))) return { kind: 'stopped', run };
    try {
      const provider = this.providers.forConfiguration(configuration);
      const placed = await provider.placeCall({
        attemptKey: input.attemptKey ?? `run-${run.id}`, organizationId, runId: run.id, to: input.to, from: input.from,
        ...this.urls.forCall(configuration.provider, run.id),
        machineDetection: input.machineDetection, ringTimeoutSeconds: input.ringTimeoutSeconds,
        ...(input.asyncMachineDetection ? { asyncMachineDetection: true } : {}),
      });
      return { kind: 'placed', run, providerCallId: placed.providerCallId, alreadyPlaced: placed.alreadyPlaced };
    } catch (e) {
      return { kind: 'failed', run, error: e instanceof Error ? e : new Error(String(e)) };
    }
  }
}
