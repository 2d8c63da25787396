import type { Clock } from '../ports/clock.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { PhoneAddressNormalizer } from '../ports/phone-address-normalizer.port.js';
import type { PhoneNumberRepository } from '../ports/phone-number.repository.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import type { InboundRefusal } from '../ports/telephony-provider.port.js';
import { isWorkflowUnavailable, type EnsureWorkflowCanReceiveCalls } from '../workflows/ensure-workflow-can-receive-calls.use-case.js';
import type { Run } from '../runs/run.js';
import type { PhoneNumber } from '../telephony/phone-number.js';
import type { TelephonyConfiguration } from '../telephony/telephony-configuration.js';

export interface InboundCallInput {
  provider: string;
  /** The provider account the call arrived on; taken from the configuration when `configurationId` is given. */
  accountId: string | null;
  /** Event-driven providers (ARI) know the configuration the call arrived on. */
  configurationId?: number;
  providerCallId: string;
  from: string;
  to: string;
}

export type InboundCallResult =
  | { kind: 'accepted'; run: Run; number: PhoneNumber; configuration: TelephonyConfiguration; duplicate: boolean }
  | { kind: 'refused'; reason: InboundRefusal; number: PhoneNumber | null; configuration: TelephonyConfiguration | null };

/**
 * An inbound call: the number is found by (provider, account id, normalized `to`) across organizations;
 * it must be active and bound to an active workflow. Then a run is created (mode `inbound`, the workflow's
 * current definition, `initial_context` with `caller_number` and `called_number`). A repeated webhook for the
 * same provider call id returns the run already created. Otherwise the call is refused:
 * `phone_number_not_found` (unknown, inactive or unbound number, or its workflow is gone) or
 * `workflow_archived`; the caller answers with the provider's hang-up markup.
 */
export class ReceiveInboundCall {
  constructor(
    private readonly configurations: TelephonyConfigurationRepository,
    private readonly numbers: PhoneNumberRepository,
    private readonly ensureWorkflow: EnsureWorkflowCanReceiveCalls,
    private readonly runs: RunRepository,
    private readonly normalizer: PhoneAddressNormalizer,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Normalizes a dialed address; an address the normalizer refuses is matched as written, lower-cased. */
  normalizeDialed(to: string): string {
    try {
      return this.normalizer.normalize(to).addressNormalized;
    } catch {
      return to.trim().toLowerCase();
    }
  }

  /** The number a call to `to` is for, before any run exists (webhooks verify with its configuration first). */
  async findNumber(provider: string, accountId: string | null, to: string): Promise<PhoneNumber | null> {
    if (accountId === null || !to) return null;
    return this.numbers.findForInbound(provider, accountId, this.normalizeDialed(to));
  }

  async execute(input: InboundCallInput): Promise<InboundCallResult> {
    let accountId = input.accountId;
    if (input.configurationId !== undefined) {
      const c = await this.configurations.findForProviderEvent(input.configurationId);
      accountId = c && c.provider === input.provider ? c.accountId : null;
    }
    const number = await this.findNumber(input.provider, accountId, input.to);
    const refuse = (reason: InboundRefusal, configuration: TelephonyConfiguration | null = null): InboundCallResult => {
      this.log.info({ provider: input.provider, reason, phone_number_id: number?.id ?? null }, 'inbound call refused');
      return { kind: 'refused', reason, number, configuration };
    };
    if (!number || !number.isActive || number.inboundWorkflowId === null) return refuse('phone_number_not_found');
    const configuration = await this.configurations.get(number.organizationId, number.telephonyConfigurationId);
    if (!configuration) return refuse('phone_number_not_found');
    let target: Awaited<ReturnType<EnsureWorkflowCanReceiveCalls['execute']>>;
    try {
      target = await this.ensureWorkflow.execute(number.organizationId, number.inboundWorkflowId);
    } catch (e) {
      if (!isWorkflowUnavailable(e)) throw e;
      return refuse(e.code === 'workflow_archived' ? 'workflow_archived' : 'phone_number_not_found', configuration);
    }
    const { workflow, definition } = target;

    const existing = await this.runs.findByProviderCallId(input.provider, input.providerCallId);
    if (existing && existing.organizationId === number.organizationId) {
      return { kind: 'accepted', run: existing, number, configuration, duplicate: true };
    }
    const run = await this.runs.create(number.organizationId, {
      workflowId: workflow.id,
      definitionId: definition.id,
      name: `Inbound call from ${input.from || 'unknown'}`,
      mode: 'inbound',
      telephonyConfigurationId: configuration.id,
      provider: input.provider,
      providerCallId: input.providerCallId,
      callerNumber: input.from || null,
      calledNumber: input.to,
      initialContext: { caller_number: input.from || null, called_number: input.to },
      now: this.clock.now(),
    });
    this.log.info({ provider: input.provider, run_id: run.id, phone_number_id: number.id, workflow_id: workflow.id }, 'inbound call accepted');
    return { kind: 'accepted', run, number, configuration, duplicate: false };
  }
}
