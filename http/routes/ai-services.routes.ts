import type { AiServiceView } from '../../core/ai-services/ai-service.js';
import { AI_SERVICE_NAME_MAX_LENGTH } from '../../core/ai-services/ai-service.js';
import type { CreateAiService, DeleteAiService, GetAiService, ListAiServices, UpdateAiService } from '../../core/ai-services/ai-services.use-case.js';
import { defineRoutes, type JsonSchema } from '../routing/route.js';
import { anyObject, arr, dateTime, id, nonBlank, obj, pathParams, str } from '../routing/schema-helpers.js';
import { partialCredentialsSchema, providerMetadataSchema } from './provider-config.schemas.js';

export interface AiServiceRouteDeps {
  create: CreateAiService;
  update: UpdateAiService;
  list: ListAiServices;
  get: GetAiService;
  remove: DeleteAiService;
  /** From the provider registry's AI side: the `config` union of the create body (oneOf, sensitive fields writeOnly). */
  configSchema: JsonSchema;
  providerIds: string[];
  metadata(): unknown;
}

const kindEnum = { type: 'string', enum: ['llm', 'stt', 'tts'] };

/** An AI service as API.md 10 defines it. */
export const presentAiService = (v: AiServiceView) => ({
  id: v.service.id,
  name: v.service.name,
  provider: v.service.provider,
  kinds: v.kinds,
  credentials: v.credentials,
  created_at: v.service.createdAt.toISOString(),
  updated_at: v.service.updatedAt.toISOString(),
});

const serviceSchema = obj(
  {
    id: id(), name: str(), provider: str(), kinds: arr(kindEnum, { description: 'What the provider offers (from its manifest)' }),
    credentials: anyObject({ description: 'Every credential field of the provider (null when unset); sensitive values masked: all but the last 4 characters become `*` (4 or fewer: all `*`)' }),
    created_at: dateTime(), updated_at: dateTime(),
  },
  ['id', 'name', 'provider', 'kinds', 'credentials', 'created_at', 'updated_at'],
);

const metadataSchema = providerMetadataSchema({ kinds: arr(kindEnum) });

const name = nonBlank({ maxLength: AI_SERVICE_NAME_MAX_LENGTH, description: '1 to 64 characters, unique in the organization (case-insensitive)' });
const tags = ['ai-services'];
const serviceParam = pathParams('service_id');

export function aiServiceRoutes(d: AiServiceRouteDeps) {
  const configUpdateSchema = partialCredentialsSchema('/organizations/ai-services/metadata', d.providerIds);
  return defineRoutes([
    {
      method: 'get', path: '/organizations/ai-services/metadata', operationId: 'getAiServiceProviderMetadata', summary: 'Kinds and credential fields of every registered AI provider', tags, auth: 'any',
      response: metadataSchema,
      handler: () => d.metadata(),
    },
    {
      method: 'post', path: '/organizations/ai-services', operationId: 'createAiService', summary: 'Create an AI service (a model-provider account)', tags, auth: 'any',
      description: 'The name is unique in the organization, case-insensitively (409 `ai_service_name_taken`). Secrets are encrypted at rest and masked in every response. ' +
        'A `base_url` must pass the outbound network policy (cloud metadata never, private addresses only where CALLPLANE_ALLOW_PRIVATE_NETWORK allows).',
      body: obj({ name, config: d.configSchema }, ['name', 'config'], { additionalProperties: false }),
      response: serviceSchema, errors: [409],
      handler: async ({ body, principal }) => presentAiService(await d.create.execute(principal.organizationId, { name: body.name, config: body.config })),
    },
    {
      method: 'get', path: '/organizations/ai-services', operationId: 'listAiServices', summary: 'The organization\'s AI services, oldest first', tags, auth: 'any',
      response: obj({ ai_services: arr(serviceSchema) }, ['ai_services']),
      handler: async ({ principal }) => ({ ai_services: (await d.list.execute(principal.organizationId)).map(presentAiService) }),
    },
    {
      method: 'get', path: '/organizations/ai-services/{service_id}', operationId: 'getAiService', summary: 'An AI service', tags, auth: 'any',
      params: serviceParam, response: serviceSchema, errors: [404],
      handler: async ({ params, principal }) => presentAiService(await d.get.execute(principal.organizationId, params.service_id)),
    },
    {
      method: 'put', path: '/organizations/ai-services/{service_id}', operationId: 'updateAiService', summary: 'Change an AI service\'s name and/or credentials', tags, auth: 'any',
      description: 'Partial: send `name` and/or `config`. The provider cannot change (400 `provider_immutable`). A retrieved service can be sent back unchanged: masked values keep the stored secrets.',
      params: serviceParam,
      body: obj({ name, config: configUpdateSchema }, [], { additionalProperties: false }),
      response: serviceSchema, errors: [400, 404, 409],
      handler: async ({ params, body, principal }) =>
        presentAiService(await d.update.execute(principal.organizationId, params.service_id, { name: body.name, config: body.config })),
    },
    {
      method: 'delete', path: '/organizations/ai-services/{service_id}', operationId: 'deleteAiService', summary: 'Delete an AI service', tags, auth: 'any',
      description: 'Refused with 409 `ai_service_in_use` while any workflow\'s workflow_configurations names it (llm, stt or tts service_id).',
      params: serviceParam,
      response: obj({ id: id(), deleted: { const: true } }, ['id', 'deleted']), errors: [404, 409],
      handler: async ({ params, principal }) => d.remove.execute(principal.organizationId, params.service_id),
    },
  ]);
}
