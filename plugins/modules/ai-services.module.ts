import type { Container } from 'inversify';
import {
  AiServiceReader, AiServiceReferences, CreateAiService, DeleteAiService, GetAiService, ListAiServices, UpdateAiService,
} from '../../core/ai-services/ai-services.use-case.js';
import { AiProviderCatalog } from '../../core/ports/ai-service-provider-catalog.port.js';
import { AiServiceRepository } from '../../core/ports/ai-service.repository.port.js';
import { Clock } from '../../core/ports/clock.port.js';
import { SecretCipher, TokenService } from '../../core/ports/crypto.port.js';
import { LanguageModelFactory } from '../../core/ports/language-model-factory.port.js';
import { SpeechServices } from '../../core/ports/speech-factory.port.js';
import { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { CredentialVault } from '../../core/telephony/credential-vault.js';
import { aiServiceRoutes } from '../../http/routes/ai-services.routes.js';
import type { RouteDefinition } from '../../http/routing/route.js';
import { aiPolicyFetch, PluginLanguageModelFactory } from '../ai-language-model-factory.js';
import { PluginSpeechServices, speechProviderDeps } from '../ai-speech-services.js';
import type { AiProviderRegistry } from '../provider-registry.js';
import type { Settings } from '../settings.js';
import { HttpRoutesToken, SettingsToken } from '../tokens.js';
import { port, provide } from './wire.js';

/** The ports this module reads, typed once (wire.ts): a map entry naming the wrong port does not compile. */
const Ports = {
  repo: port<AiServiceRepository>(AiServiceRepository),
  catalog: port<AiProviderCatalog>(AiProviderCatalog),
  workflows: port<WorkflowRepository>(WorkflowRepository),
  clock: port<Clock>(Clock),
  tokens: port<TokenService>(TokenService),
  cipher: port<SecretCipher>(SecretCipher),
  settings: port<Settings>(SettingsToken),
  factory: port<LanguageModelFactory>(LanguageModelFactory),
  speech: port<SpeechServices>(SpeechServices),
  routes: port<RouteDefinition[]>(HttpRoutesToken),
};

/**
 * AI services (API.md 10): the model-provider catalog (the registry's AI side), the use cases, the
 * `workflow_configurations` reference check the workflows module uses, the LanguageModelFactory the
 * conversation engine's callers use, and the routes. Wired by name (typed dependency maps). Without an
 * AiServiceRepository (a storage whose adapter has not landed) only the metadata route is served.
 */
export function aiServicesModule(c: Container, catalog: AiProviderRegistry): void {
  c.bind(AiProviderCatalog).toConstantValue(catalog);
  const metadataOnly = () => aiServiceRoutes({ configSchema: catalog.configSchema(), providerIds: catalog.ids(), metadata: () => catalog.metadata() } as never)
    .filter((r) => r.operationId === 'getAiServiceProviderMetadata');
  if (!c.isBound(AiServiceRepository) || !c.isBound(WorkflowRepository)) {
    c.bind(HttpRoutesToken).toConstantValue(metadataOnly());
    return;
  }
  // the telephony module binds the vault too (same cipher, same class); AI services do not depend on its order
  if (!c.isBound(CredentialVault)) provide(c, CredentialVault, { deps: { cipher: Ports.cipher }, init: ({ cipher }) => new CredentialVault(cipher) });

  provide(c, AiServiceReader, {
    deps: { repo: Ports.repo, catalog: Ports.catalog, vault: CredentialVault },
    init: ({ repo, catalog: cat, vault }) => new AiServiceReader(repo, cat, vault),
  });
  provide(c, AiServiceReferences, {
    deps: { repo: Ports.repo, catalog: Ports.catalog },
    init: ({ repo, catalog: cat }) => new AiServiceReferences(repo, cat),
  });
  provide(c, CreateAiService, {
    deps: { repo: Ports.repo, reader: AiServiceReader, catalog: Ports.catalog, vault: CredentialVault, tokens: Ports.tokens, clock: Ports.clock },
    init: (d) => new CreateAiService(d.repo, d.reader, d.catalog, d.vault, d.tokens, d.clock),
  });
  provide(c, UpdateAiService, {
    deps: { repo: Ports.repo, reader: AiServiceReader, catalog: Ports.catalog, vault: CredentialVault, clock: Ports.clock },
    init: (d) => new UpdateAiService(d.repo, d.reader, d.catalog, d.vault, d.clock),
  });
  provide(c, ListAiServices, { deps: { repo: Ports.repo, reader: AiServiceReader }, init: (d) => new ListAiServices(d.repo, d.reader) });
  provide(c, GetAiService, { deps: { reader: AiServiceReader }, init: (d) => new GetAiService(d.reader) });
  provide(c, DeleteAiService, {
    deps: { repo: Ports.repo, reader: AiServiceReader, workflows: Ports.workflows },
    init: (d) => new DeleteAiService(d.repo, d.reader, d.workflows),
  });
  provide(c, Ports.factory, {
    deps: { reader: AiServiceReader, settings: Ports.settings },
    init: (d) => new PluginLanguageModelFactory(d.reader, aiPolicyFetch(d.settings.allowPrivateNetwork)),
  });
  provide(c, Ports.speech, {
    deps: { reader: AiServiceReader, settings: Ports.settings },
    init: (d) => new PluginSpeechServices(d.reader, speechProviderDeps(d.settings.allowPrivateNetwork)),
  });
  provide(c, Ports.routes, {
    deps: { create: CreateAiService, update: UpdateAiService, list: ListAiServices, get: GetAiService, remove: DeleteAiService },
    init: (d) => aiServiceRoutes({ ...d, configSchema: catalog.configSchema(), providerIds: catalog.ids(), metadata: () => catalog.metadata() }),
  });
}
