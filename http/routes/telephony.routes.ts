import type { ProviderSync, TelephonyConfigurationView } from '../../core/telephony/telephony-configuration.js';
import type {
  CreateTelephonyConfiguration,
  DeleteTelephonyConfiguration,
  GetTelephonyConfiguration,
  ListTelephonyConfigurations,
  SetDefaultOutboundConfiguration,
  UpdateTelephonyConfiguration,
} from '../../core/telephony/telephony-configurations.use-case.js';
import { defineRoutes, type JsonSchema } from '../routing/route.js';
import { anyObject, arr, bool, dateTime, id, int, nonBlank, nullable, obj, pathParams, str } from '../routing/schema-helpers.js';
import { partialCredentialsSchema, providerMetadataSchema } from './provider-config.schemas.js';

export interface TelephonyRouteDeps {
  create: CreateTelephonyConfiguration;
  update: UpdateTelephonyConfiguration;
  list: ListTelephonyConfigurations;
  get: GetTelephonyConfiguration;
  remove: DeleteTelephonyConfiguration;
  setDefaultOutbound: SetDefaultOutboundConfiguration;
  /** From the provider registry: the `config` union of the create body and the metadata response. */
  configSchema: JsonSchema;
  providerIds: string[];
  metadata(): unknown;
}

export const providerSyncSchema = obj({ ok: bool(), message: str() }, ['ok', 'message'], { description: 'Result of pushing the inbound webhook binding to the provider; ok false is a warning (the change is saved)' });
export const presentProviderSync = (s: ProviderSync) => ({ ok: s.ok, message: s.message });

export const presentConfiguration = (v: TelephonyConfigurationView) => ({
  id: v.configuration.id,
  name: v.configuration.name,
  provider: v.configuration.provider,
  is_default_outbound: v.configuration.isDefaultOutbound,
  credentials: v.credentials,
  phone_number_count: v.phoneNumberCount,
  credentials_check: v.configuration.credentialsCheck
    ? { ok: v.configuration.credentialsCheck.ok, message: v.configuration.credentialsCheck.message, checked_at: v.configuration.credentialsCheck.checkedAt.toISOString() }
    : null,
  created_at: v.configuration.createdAt.toISOString(),
  updated_at: v.configuration.updatedAt.toISOString(),
  ...(v.providerSync ? { provider_sync: presentProviderSync(v.providerSync) } : {}),
});

const configurationSchema = obj(
  {
    id: id(), name: str(), provider: str(), is_default_outbound: bool(),
    credentials: anyObject({ description: 'Every credential field of the provider but `provider` and `from_numbers` (null when unset); sensitive values masked: all but the last 4 characters become `*` (4 or fewer: all `*`)' }),
    phone_number_count: int({ minimum: 0 }),
    credentials_check: nullable(obj({ ok: bool(), message: str(), checked_at: dateTime() }, ['ok', 'message', 'checked_at'], {
      description: 'What the provider said when asked (an authenticated read, on create and whenever the credentials change) whether these credentials work; null until checked. ' +
        'The configuration is saved either way; only ok true lets its numbers outrank another organization\'s unproven claim on the same account',
    })),
    created_at: dateTime(), updated_at: dateTime(),
    provider_sync: providerSyncSchema,
  },
  ['id', 'name', 'provider', 'is_default_outbound', 'credentials', 'phone_number_count', 'credentials_check', 'created_at', 'updated_at'],
);

const metadataSchema = providerMetadataSchema();

const name = nonBlank({ maxLength: 64, description: '1 to 64 characters, unique in the organization (case-insensitive)' });
const tags = ['telephony'];
const configParam = pathParams('config_id');

export function telephonyRoutes(d: TelephonyRouteDeps) {
  const configUpdateSchema = partialCredentialsSchema('/organizations/telephony-providers/metadata', d.providerIds);
  return defineRoutes([
    {
      method: 'get', path: '/organizations/telephony-providers/metadata', operationId: 'getTelephonyProviderMetadata', summary: 'Credential fields of every registered telephony provider', tags, auth: 'any',
      response: metadataSchema,
      handler: () => d.metadata(),
    },
    {
      method: 'post', path: '/organizations/telephony-configs', operationId: 'createTelephonyConfiguration', summary: 'Create a telephony configuration', tags, auth: 'any',
      description: 'The name is unique in the organization, case-insensitively (409 `telephony_configuration_name_taken`). `is_default_outbound: true` unsets the previous default. `config.from_numbers` is ignored. Secrets are encrypted at rest and masked in every response.',
      body: obj({ name, config: d.configSchema, is_default_outbound: bool({ default: false }) }, ['name', 'config'], { additionalProperties: false }),
      response: configurationSchema, errors: [409],
      handler: async ({ body, principal }) =>
        presentConfiguration(await d.create.execute(principal.organizationId, { name: body.name, config: body.config, isDefaultOutbound: body.is_default_outbound })),
    },
    {
      method: 'get', path: '/organizations/telephony-configs', operationId: 'listTelephonyConfigurations', summary: 'The organization\'s telephony configurations, oldest first', tags, auth: 'any',
      response: obj({ configurations: arr(configurationSchema) }, ['configurations']),
      handler: async ({ principal }) => ({ configurations: (await d.list.execute(principal.organizationId)).map(presentConfiguration) }),
    },
    {
      method: 'get', path: '/organizations/telephony-configs/{config_id}', operationId: 'getTelephonyConfiguration', summary: 'A telephony configuration', tags, auth: 'any',
      params: configParam, response: configurationSchema, errors: [404],
      handler: async ({ params, principal }) => presentConfiguration(await d.get.execute(principal.organizationId, params.config_id)),
    },
    {
      method: 'put', path: '/organizations/telephony-configs/{config_id}', operationId: 'updateTelephonyConfiguration', summary: 'Change a telephony configuration\'s name and/or credentials', tags, auth: 'any',
      description: 'Partial: send `name` and/or `config`. The provider cannot change (400 `provider_immutable`). A retrieved configuration can be sent back unchanged: masked values keep the stored secrets.',
      params: configParam,
      body: obj({ name, config: configUpdateSchema }, [], { additionalProperties: false }),
      response: configurationSchema, errors: [400, 404, 409],
      handler: async ({ params, body, principal }) =>
        presentConfiguration(await d.update.execute(principal.organizationId, params.config_id, { name: body.name, config: body.config })),
    },
    {
      method: 'delete', path: '/organizations/telephony-configs/{config_id}', operationId: 'deleteTelephonyConfiguration', summary: 'Delete a telephony configuration and its numbers', tags, auth: 'any',
      description: 'Refused with 409 `telephony_configuration_in_use` while a draft, running or paused campaign uses it. Inbound webhooks of its bound numbers are detached best-effort (`provider_sync`).',
      params: configParam,
      response: obj({ id: id(), deleted: { const: true }, provider_sync: providerSyncSchema }, ['id', 'deleted']), errors: [404, 409],
      handler: async ({ params, principal }) => {
        const r = await d.remove.execute(principal.organizationId, params.config_id);
        return { id: r.id, deleted: true, ...(r.providerSync ? { provider_sync: presentProviderSync(r.providerSync) } : {}) };
      },
    },
    {
      method: 'post', path: '/organizations/telephony-configs/{config_id}/set-default-outbound', operationId: 'setDefaultOutboundTelephonyConfiguration', summary: 'Make it the default configuration for outbound calls', tags, auth: 'any',
      params: configParam, bodyOptional: true, response: configurationSchema, errors: [404],
      handler: async ({ params, principal }) => presentConfiguration(await d.setDefaultOutbound.execute(principal.organizationId, params.config_id)),
    },
  ]);
}
