import type { EventPublisher } from '../ports/event-publisher.port.js';
import { ConflictError, DomainError, NotFoundError, ValidationError } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { NormalizedAddress, PhoneAddressNormalizer } from '../ports/phone-address-normalizer.port.js';
import type { PhoneNumberPatch, PhoneNumberRepository } from '../ports/phone-number.repository.port.js';
import type { WorkflowRepository } from '../ports/workflow.repository.port.js';
import type { EnsureWorkflowCanReceiveCalls } from '../workflows/ensure-workflow-can-receive-calls.use-case.js';
import type { PhoneNumber, PhoneNumberView } from './phone-number.js';
import type { ProviderInstances } from './provider-instances.js';
import { credentialsProven, type TelephonyConfiguration } from './telephony-configuration.js';
import type { TelephonyConfigurationReader } from './telephony-configurations.use-case.js';
import { inboundWebhookUrl } from './telephony-configuration.js';

export const phoneNumberNotFound = () => new NotFoundError('phone_number_not_found', 'Phone number not found');


/** What the phone-number use cases share: lookups, workflow checks, normalization, provider sync. */
export class PhoneNumberService {
  constructor(
    readonly repo: PhoneNumberRepository,
    readonly configurations: TelephonyConfigurationReader,
    private readonly workflows: WorkflowRepository,
    private readonly ensureWorkflow: EnsureWorkflowCanReceiveCalls,
    private readonly normalizer: PhoneAddressNormalizer,
    private readonly instances: ProviderInstances,
    private readonly log: Logger,
    private readonly publicUrl: string,
    /** Customer webhooks: a failed sync publishes `phone_number.sync_failed`. */
    private readonly events?: EventPublisher,
  ) {}

  async require(organizationId: number, configurationId: number, id: number): Promise<{ configuration: TelephonyConfiguration; number: PhoneNumber }> {
    const configuration = await this.configurations.require(organizationId, configurationId);
    const number = await this.repo.get(organizationId, configurationId, id);
    if (!number) throw phoneNumberNotFound();
    return { configuration, number };
  }

  /** 422 on `body.address` when the normalizer refuses it. */
  normalize(address: string, countryCode: string | null): NormalizedAddress {
    try {
      return this.normalizer.normalize(address, countryCode);
    } catch (e) {
      if (e instanceof DomainError) throw new ValidationError([{ loc: ['body', 'address'], msg: e.detail, type: 'value_error' }]);
      throw e;
    }
  }

  /** `InputError('workflow_not_found' | 'workflow_archived')` unless the workflow is active in the organization. */
  async requireBindableWorkflow(organizationId: number, workflowId: number): Promise<void> {
    await this.ensureWorkflow.execute(organizationId, workflowId);
  }

  /**
   * Number ownership (API.md section 5, docs/security.md): `claimant` ran into another organization's claim on
   * the same (provider, account id, normalized address). When the claimant's credentials checked ok and the
   * holder's configuration never did, the holder's claim is unproven (anyone can type a public account id):
   * it is detached (the number is removed from that configuration, logged) and true is returned so the
   * claimant may take the number. Between two unproven or two proven claims the first one stands (false).
   */
  async detachUnprovenClaim(claimant: TelephonyConfiguration, addressNormalized: string): Promise<boolean> {
    if (!credentialsProven(claimant)) return false;
    const holder = await this.repo.findForInbound(claimant.provider, claimant.accountId, addressNormalized);
    if (!holder || holder.organizationId === claimant.organizationId) return false;
    const holderConfiguration = await this.configurations.findAnywhere(holder.telephonyConfigurationId);
    if (holderConfiguration && credentialsProven(holderConfiguration)) return false;
    const detached = await this.repo.delete(holder.organizationId, holder.telephonyConfigurationId, holder.id);
    if (detached) {
      this.log.warn({
        phone_number_id: holder.id, organization_id: holder.organizationId, telephony_configuration_id: holder.telephonyConfigurationId,
        claimed_by_organization_id: claimant.organizationId, claimed_by_telephony_configuration_id: claimant.id,
        provider: claimant.provider, address_normalized: addressNormalized,
      }, 'unproven phone number claim detached: another organization proved the provider account');
    }
    return true;
  }

  /** Pushes the number's binding (null: detach). A warning on failure, never an exception. */
  async sync(configuration: TelephonyConfiguration, number: PhoneNumber, bound: boolean): Promise<{ ok: boolean; message: string }> {
    let result: { ok: boolean; message: string };
    try {
      result = await this.instances.forConfiguration(configuration).syncInboundWebhook({
        address: number.address,
        addressNormalized: number.addressNormalized,
        inboundUrl: bound ? inboundWebhookUrl(this.publicUrl, configuration.provider) : null,
      });
    } catch (e) {
      result = { ok: false, message: (e as DomainError)?.detail ?? (e as Error)?.message ?? 'provider unavailable' };
    }
    if (!result.ok) {
      this.log.warn({ phone_number_id: number.id, telephony_configuration_id: configuration.id, message: result.message }, 'inbound webhook sync failed');
      await this.events?.publish({
        type: 'phone_number.sync_failed', organizationId: number.organizationId, operation: bound ? 'bind' : 'detach', message: String(result.message ?? ''),
        phoneNumber: { id: number.id, address: number.address, telephonyConfigurationId: number.telephonyConfigurationId },
      });
    }
    return { ok: Boolean(result.ok), message: String(result.message ?? '') };
  }

  async views(organizationId: number, numbers: PhoneNumber[]): Promise<PhoneNumberView[]> {
    const ids = [...new Set(numbers.map((n) => n.inboundWorkflowId).filter((x): x is number => x !== null))];
    const names = new Map((ids.length ? await this.workflows.getMany(organizationId, ids) : []).map((w) => [w.id, w.name]));
    return numbers.map((n) => ({ number: n, inboundWorkflowName: n.inboundWorkflowId === null ? null : names.get(n.inboundWorkflowId) ?? null }));
  }

  async view(organizationId: number, number: PhoneNumber, providerSync?: { ok: boolean; message: string }): Promise<PhoneNumberView> {
    const [v] = await this.views(organizationId, [number]);
    return providerSync ? { ...v!, providerSync } : v!;
  }
}

export interface CreatePhoneNumberInput {
  address: string;
  countryCode?: string | null;
  label?: string | null;
  inboundWorkflowId?: number | null;
  isActive?: boolean;
  isDefaultCallerId?: boolean;
  extraMetadata?: Record<string, unknown>;
}

export class CreatePhoneNumber {
  constructor(private readonly s: PhoneNumberService, private readonly clock: Clock) {}

  /**
   * Rule 1-2 of spec 4.6; conflicts 409 `phone_number_exists` / `phone_number_conflict`. Another
   * organization's claim made with credentials that never checked ok gives way to a configuration whose
   * credentials did (`PhoneNumberService.detachUnprovenClaim`).
   */
  async execute(organizationId: number, configurationId: number, input: CreatePhoneNumberInput): Promise<PhoneNumberView> {
    const configuration = await this.s.configurations.require(organizationId, configurationId);
    const countryCode = input.countryCode ? input.countryCode.toUpperCase() : null;
    const normalized = this.s.normalize(input.address, countryCode);
    const inboundWorkflowId = input.inboundWorkflowId ?? null;
    if (inboundWorkflowId !== null) await this.s.requireBindableWorkflow(organizationId, inboundWorkflowId);
    const create = () => this.s.repo.create(organizationId, {
      telephonyConfigurationId: configuration.id,
      provider: configuration.provider,
      accountId: configuration.accountId,
      address: input.address,
      ...normalized,
      countryCode,
      label: input.label ?? null,
      isActive: input.isActive ?? true,
      isDefaultCallerId: input.isDefaultCallerId ?? false,
      extraMetadata: input.extraMetadata ?? {},
      inboundWorkflowId,
      now: this.clock.now(),
    });
    let number: PhoneNumber;
    try {
      number = await create();
    } catch (e) {
      if (!(e instanceof ConflictError && e.code === 'phone_number_conflict')) throw e;
      if (!(await this.s.detachUnprovenClaim(configuration, normalized.addressNormalized))) throw e;
      // a proven claim that raced us to the same number wins: the conflict of this retry stands
      number = await create();
    }
    const providerSync = inboundWorkflowId !== null ? await this.s.sync(configuration, number, true) : undefined;
    return this.s.view(organizationId, number, providerSync);
  }
}

export interface UpdatePhoneNumberInput {
  label?: string | null;
  inboundWorkflowId?: number | null;
  clearInboundWorkflow?: boolean;
  isActive?: boolean | null;
  countryCode?: string | null;
  extraMetadata?: Record<string, unknown> | null;
}

export class UpdatePhoneNumber {
  constructor(private readonly s: PhoneNumberService, private readonly clock: Clock) {}

  /**
   * A null field means "no change" (spec 4.6 rule 4); `clear_inbound_workflow: true` removes the binding
   * (and wins over an `inbound_workflow_id` sent with it). Setting, changing or clearing a binding pushes it
   * to the provider (`provider_sync`). A new `country_code` recomputes `address_normalized`.
   */
  async execute(organizationId: number, configurationId: number, id: number, input: UpdatePhoneNumberInput): Promise<PhoneNumberView> {
    const { configuration, number } = await this.s.require(organizationId, configurationId, id);
    const patch: PhoneNumberPatch = { now: this.clock.now() };
    if (input.label != null) patch.label = input.label;
    if (input.isActive != null) patch.isActive = input.isActive;
    if (input.extraMetadata != null) patch.extraMetadata = input.extraMetadata;
    if (input.countryCode != null) {
      patch.countryCode = input.countryCode.toUpperCase();
      const n = this.s.normalize(number.address, patch.countryCode);
      if (n.addressNormalized !== number.addressNormalized) patch.addressNormalized = n.addressNormalized;
      if (n.addressType !== number.addressType) patch.addressType = n.addressType;
      if (n.extension !== number.extension) patch.extension = n.extension;
    }
    let sync: 'bind' | 'unbind' | null = null;
    if (input.clearInboundWorkflow) {
      if (number.inboundWorkflowId !== null) {
        patch.inboundWorkflowId = null;
        sync = 'unbind';
      }
    } else if (input.inboundWorkflowId != null) {
      await this.s.requireBindableWorkflow(organizationId, input.inboundWorkflowId);
      patch.inboundWorkflowId = input.inboundWorkflowId;
      sync = 'bind';
    }
    const updated = await this.s.repo.update(organizationId, configurationId, id, patch);
    if (!updated) throw phoneNumberNotFound();
    // an address that moved while bound is re-pushed too
    if (sync === null && patch.addressNormalized !== undefined && updated.inboundWorkflowId !== null) sync = 'bind';
    const providerSync = sync ? await this.s.sync(configuration, updated, sync === 'bind') : undefined;
    return this.s.view(organizationId, updated, providerSync);
  }
}

export class GetPhoneNumber {
  constructor(private readonly s: PhoneNumberService) {}
  async execute(organizationId: number, configurationId: number, id: number): Promise<PhoneNumberView> {
    const { number } = await this.s.require(organizationId, configurationId, id);
    return this.s.view(organizationId, number);
  }
}

export class ListPhoneNumbers {
  constructor(private readonly s: PhoneNumberService) {}
  async execute(organizationId: number, configurationId: number): Promise<PhoneNumberView[]> {
    await this.s.configurations.require(organizationId, configurationId);
    return this.s.views(organizationId, await this.s.repo.list(organizationId, configurationId));
  }
}

export class DeletePhoneNumber {
  constructor(private readonly s: PhoneNumberService) {}
  /** A bound number's webhook is detached first (best-effort, reported as `provider_sync`). */
  async execute(organizationId: number, configurationId: number, id: number): Promise<{ id: number; deleted: true; providerSync?: { ok: boolean; message: string } }> {
    const { configuration, number } = await this.s.require(organizationId, configurationId, id);
    const providerSync = number.inboundWorkflowId !== null ? await this.s.sync(configuration, number, false) : undefined;
    if (!(await this.s.repo.delete(organizationId, configurationId, id))) throw phoneNumberNotFound();
    return { id, deleted: true, ...(providerSync ? { providerSync } : {}) };
  }
}

export class SetDefaultCallerId {
  constructor(private readonly s: PhoneNumberService, private readonly clock: Clock) {}
  async execute(organizationId: number, configurationId: number, id: number): Promise<PhoneNumberView> {
    await this.s.require(organizationId, configurationId, id);
    const n = await this.s.repo.setDefaultCaller(organizationId, configurationId, id, this.clock.now());
    if (!n) throw phoneNumberNotFound();
    return this.s.view(organizationId, n);
  }
}
