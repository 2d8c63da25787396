import { ConflictError, InputError, NotFoundError, ValidationError } from '../errors.js';
import type { AiProviderCatalog } from '../ports/ai-service-provider-catalog.port.js';
import type { AiProviderPlugin } from '../ports/ai-service-provider.port.js';
import type { AiServiceRepository } from '../ports/ai-service.repository.port.js';
import type { Clock } from '../ports/clock.port.js';
import type { TokenService } from '../ports/crypto.port.js';
import type { ProviderConfig } from '../ports/telephony-provider.port.js';
import type { WorkflowRepository } from '../ports/workflow.repository.port.js';
import { presentCredentials, restoreMaskedSecrets } from '../telephony/credential-mask.js';
import type { CredentialVault } from '../telephony/credential-vault.js';
import { kindsOf } from '../telephony/provider-manifest.js';
import { aiServiceReferences } from '../workflows/workflow-configurations.js';
import type { AiService, AiServiceView } from './ai-service.js';

export const aiServiceNotFound = () => new NotFoundError('ai_service_not_found', 'AI service not found');

/** Reading side shared by the use cases and the language-model factory: lookup, masking, decrypting. */
export class AiServiceReader {
  constructor(
    private readonly repo: AiServiceRepository,
    private readonly catalog: AiProviderCatalog,
    private readonly vault: CredentialVault,
  ) {}

  /** The service or `NotFoundError('ai_service_not_found')` (absent or in another organization). */
  async require(organizationId: number, id: number): Promise<AiService> {
    const s = await this.repo.get(organizationId, id);
    if (!s) throw aiServiceNotFound();
    return s;
  }

  /** The service's plugin or `InputError('provider_not_registered')` when it is no longer loaded. */
  plugin(provider: string): AiProviderPlugin {
    const p = this.catalog.get(provider);
    if (!p) throw new InputError('provider_not_registered', `No AI provider plugin "${provider}" is loaded`);
    return p;
  }

  /** Decrypted credentials. Throws `InputError('provider_not_registered')`, or `Error` on a tampered ciphertext. */
  open(s: AiService): ProviderConfig {
    return this.vault.open(this.plugin(s.provider).manifest, s);
  }

  view(s: AiService): AiServiceView {
    const plugin = this.catalog.get(s.provider);
    // a service of a plugin that is no longer loaded still lists, with its clear settings only and no kinds
    if (!plugin) return { service: s, kinds: [], credentials: { ...s.settings } };
    return { service: s, kinds: kindsOf(plugin.manifest), credentials: presentCredentials(plugin.manifest, this.vault.open(plugin.manifest, s)) };
  }
}

function validated(catalog: AiProviderCatalog, config: Record<string, unknown>): ProviderConfig {
  const r = catalog.validateConfig(config);
  if (!r.ok) throw new ValidationError(r.issues.map((i) => ({ ...i, loc: ['body', 'config', ...i.loc] })));
  return r.config;
}

/** Creates a service (API.md 10). Throws ValidationError (422) on a bad config, `ConflictError('ai_service_name_taken')`. Not idempotent. */
export class CreateAiService {
  constructor(
    private readonly repo: AiServiceRepository,
    private readonly reader: AiServiceReader,
    private readonly catalog: AiProviderCatalog,
    private readonly vault: CredentialVault,
    private readonly tokens: TokenService,
    private readonly clock: Clock,
  ) {}

  async execute(organizationId: number, input: { name: string; config: Record<string, unknown> }): Promise<AiServiceView> {
    const provider = String(input.config?.provider ?? '');
    const plugin = this.catalog.get(provider);
    if (!plugin) {
      const ids = this.catalog.ids().map((i) => `'${i}'`).join(', ');
      throw new ValidationError([{ loc: ['body', 'config', 'provider'], msg: `Input should be one of ${ids}`, type: 'union_tag_invalid' }]);
    }
    const config = validated(this.catalog, input.config);
    const secretsKeyId = this.tokens.uuid();
    const sealed = this.vault.seal(plugin.manifest, organizationId, secretsKeyId, config);
    const s = await this.repo.create(organizationId, { name: input.name, provider, secretsKeyId, ...sealed, now: this.clock.now() });
    return this.reader.view(s);
  }
}

/**
 * Partial update: `name` and/or `config`. The sent config fields are merged over the stored ones (null unsets
 * an optional field); a sensitive value equal to the stored value's mask keeps the stored secret, any other
 * value replaces it. Throws NotFoundError, InputError('provider_immutable'), ValidationError,
 * ConflictError('ai_service_name_taken'). Idempotent.
 */
export class UpdateAiService {
  constructor(
    private readonly repo: AiServiceRepository,
    private readonly reader: AiServiceReader,
    private readonly catalog: AiProviderCatalog,
    private readonly vault: CredentialVault,
    private readonly clock: Clock,
  ) {}

  async execute(organizationId: number, id: number, patch: { name?: string; config?: Record<string, unknown> }): Promise<AiServiceView> {
    const stored = await this.reader.require(organizationId, id);
    const change: { name?: string; settings?: Record<string, unknown>; secrets?: Record<string, string>; now: Date } = { now: this.clock.now() };
    if (patch.name !== undefined) change.name = patch.name;
    if (patch.config !== undefined) {
      const sent = patch.config.provider;
      if (sent !== undefined && sent !== stored.provider) {
        throw new InputError('provider_immutable', `The provider of an AI service cannot change (it is "${stored.provider}"); create a new service instead`);
      }
      const plugin = this.reader.plugin(stored.provider);
      const current = this.vault.open(plugin.manifest, stored);
      const { provider: _p, ...fields } = patch.config;
      const submitted = restoreMaskedSecrets(plugin.manifest, current, fields);
      const merged: Record<string, unknown> = { ...current };
      for (const [k, v] of Object.entries(submitted)) {
        if (v === null) delete merged[k];
        else merged[k] = v;
      }
      const config = validated(this.catalog, { ...merged, provider: stored.provider });
      Object.assign(change, this.vault.seal(plugin.manifest, organizationId, stored.secretsKeyId, config));
    }
    const updated = await this.repo.update(organizationId, id, change);
    if (!updated) throw aiServiceNotFound();
    return this.reader.view(updated);
  }
}

/** The organization's services, oldest first; empty when none. */
export class ListAiServices {
  constructor(private readonly repo: AiServiceRepository, private readonly reader: AiServiceReader) {}
  async execute(organizationId: number): Promise<AiServiceView[]> {
    return (await this.repo.list(organizationId)).map((s) => this.reader.view(s));
  }
}

/** One service; 404 `ai_service_not_found` when absent or in another organization. */
export class GetAiService {
  constructor(private readonly reader: AiServiceReader) {}
  async execute(organizationId: number, id: number): Promise<AiServiceView> {
    return this.reader.view(await this.reader.require(organizationId, id));
  }
}

/**
 * Deletes a service. Refused with `ConflictError('ai_service_in_use')` while any workflow of the organization
 * (archived ones included) names it in `workflow_configurations` (llm/stt/tts `service_id`); 404 when absent.
 */
export class DeleteAiService {
  constructor(
    private readonly repo: AiServiceRepository,
    private readonly reader: AiServiceReader,
    private readonly workflows: WorkflowRepository,
  ) {}

  async execute(organizationId: number, id: number): Promise<{ id: number; deleted: true }> {
    await this.reader.require(organizationId, id);
    const users = (await this.workflows.list(organizationId)).filter((w) => aiServiceReferences(w.workflowConfigurations).some((r) => r.serviceId === id));
    if (users.length > 0) {
      const names = users.slice(0, 5).map((w) => `"${w.name}" (${w.id})`).join(', ');
      throw new ConflictError('ai_service_in_use', `The AI service is used by ${users.length} workflow(s): ${names}${users.length > 5 ? ', ...' : ''}`);
    }
    if (!(await this.repo.delete(organizationId, id))) throw aiServiceNotFound();
    return { id, deleted: true };
  }
}

/**
 * Checks the AI services a `workflow_configurations` names (API.md 11): each `service_id` must be a service of
 * the organization (400 `ai_service_not_found`) whose provider offers the block's kind (400
 * `ai_service_kind_mismatch`). Read-only; the configuration's shape is checked before (validateWorkflowConfigurations).
 */
export class AiServiceReferences {
  constructor(private readonly repo: AiServiceRepository, private readonly catalog: AiProviderCatalog) {}

  async assertUsable(organizationId: number, config: Record<string, unknown>): Promise<void> {
    for (const ref of aiServiceReferences(config)) {
      const s = await this.repo.get(organizationId, ref.serviceId);
      if (!s) throw new InputError('ai_service_not_found', `workflow_configurations.${ref.block}.service_id: no AI service ${ref.serviceId} in this organization`);
      const plugin = this.catalog.get(s.provider);
      const kinds = plugin ? kindsOf(plugin.manifest) : [];
      if (!kinds.includes(ref.block)) {
        throw new InputError(
          'ai_service_kind_mismatch',
          `workflow_configurations.${ref.block}.service_id: AI service ${ref.serviceId} ("${s.name}", ${s.provider}) offers ${kinds.join(', ') || 'nothing loaded'}, not ${ref.block}`,
        );
      }
    }
  }
}
