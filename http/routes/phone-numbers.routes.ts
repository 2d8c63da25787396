import type { PhoneNumberView } from '../../core/telephony/phone-number.js';
import type {
  CreatePhoneNumber,
  DeletePhoneNumber,
  GetPhoneNumber,
  ListPhoneNumbers,
  SetDefaultCallerId,
  UpdatePhoneNumber,
} from '../../core/telephony/phone-numbers.use-case.js';
import { defineRoutes } from '../routing/route.js';
import { anyObject, arr, bool, dateTime, id, nonBlank, nullable, obj, pathParams, str } from '../routing/schema-helpers.js';
import { presentProviderSync, providerSyncSchema } from './telephony.routes.js';

export interface PhoneNumberRouteDeps {
  create: CreatePhoneNumber;
  get: GetPhoneNumber;
  list: ListPhoneNumbers;
  update: UpdatePhoneNumber;
  remove: DeletePhoneNumber;
  setDefaultCaller: SetDefaultCallerId;
}

export const presentPhoneNumber = (v: PhoneNumberView) => ({
  id: v.number.id,
  telephony_configuration_id: v.number.telephonyConfigurationId,
  address: v.number.address,
  address_normalized: v.number.addressNormalized,
  address_type: v.number.addressType,
  extension: v.number.extension,
  country_code: v.number.countryCode,
  label: v.number.label,
  is_active: v.number.isActive,
  is_default_caller_id: v.number.isDefaultCallerId,
  extra_metadata: v.number.extraMetadata,
  inbound_workflow_id: v.number.inboundWorkflowId,
  inbound_workflow_name: v.inboundWorkflowName,
  created_at: v.number.createdAt.toISOString(),
  updated_at: v.number.updatedAt.toISOString(),
  ...(v.providerSync ? { provider_sync: presentProviderSync(v.providerSync) } : {}),
});

const phoneNumberSchema = obj(
  {
    id: id(), telephony_configuration_id: id(), address: str(), address_normalized: str(),
    address_type: str({ enum: ['pstn', 'sip_uri', 'sip_extension'] }),
    extension: nullable(str({ description: 'digits of the extension a pstn address was written with (`ext. 1234`, `;ext=1234`); address_normalized is the E.164 number without it' })),
    country_code: nullable(str()), label: nullable(str()),
    is_active: bool(), is_default_caller_id: bool(), extra_metadata: anyObject(), inbound_workflow_id: nullable(id()),
    inbound_workflow_name: nullable(str()), created_at: dateTime(), updated_at: dateTime(), provider_sync: providerSyncSchema,
  },
  ['id', 'telephony_configuration_id', 'address', 'address_normalized', 'address_type', 'extension', 'country_code', 'label', 'is_active',
    'is_default_caller_id', 'extra_metadata', 'inbound_workflow_id', 'inbound_workflow_name', 'created_at', 'updated_at'],
);

const countryCode = str({ minLength: 2, maxLength: 2, pattern: '^[A-Za-z]{2}$', description: 'an ISO 3166-1 alpha-2 country code' });
const label = str({ maxLength: 64 });
const tags = ['phone numbers'];
const base = '/organizations/telephony-configs/{config_id}/phone-numbers';
const one = `${base}/{phone_number_id}`;

export function phoneNumberRoutes(d: PhoneNumberRouteDeps) {
  return defineRoutes([
    {
      method: 'post', path: base, operationId: 'createPhoneNumber', summary: 'Add a number to a telephony configuration', tags, auth: 'any',
      description: 'address is normalized (pstn → E.164 using country_code for numbers without `+`; sip_uri; sip_extension). 409 `phone_number_exists` (same normalized address in this organization) or `phone_number_conflict` (same provider, account and address in another organization). With inbound_workflow_id the binding is pushed to the provider (`provider_sync`).',
      params: pathParams('config_id'),
      body: obj({
        address: nonBlank({ maxLength: 256 }), country_code: nullable(countryCode), label: nullable(label), inbound_workflow_id: nullable(id()),
        is_active: bool({ default: true }), is_default_caller_id: bool({ default: false }), extra_metadata: anyObject({ default: {} }),
      }, ['address'], { additionalProperties: false }),
      response: phoneNumberSchema, errors: [400, 404, 409],
      handler: async ({ params, body, principal }) =>
        presentPhoneNumber(await d.create.execute(principal.organizationId, params.config_id, {
          address: body.address, countryCode: body.country_code, label: body.label, inboundWorkflowId: body.inbound_workflow_id,
          isActive: body.is_active, isDefaultCallerId: body.is_default_caller_id, extraMetadata: body.extra_metadata,
        })),
    },
    {
      method: 'get', path: base, operationId: 'listPhoneNumbers', summary: 'The configuration\'s numbers, oldest first', tags, auth: 'any',
      params: pathParams('config_id'), response: obj({ phone_numbers: arr(phoneNumberSchema) }, ['phone_numbers']), errors: [404],
      handler: async ({ params, principal }) => ({ phone_numbers: (await d.list.execute(principal.organizationId, params.config_id)).map(presentPhoneNumber) }),
    },
    {
      method: 'get', path: one, operationId: 'getPhoneNumber', summary: 'A phone number', tags, auth: 'any',
      params: pathParams('config_id', 'phone_number_id'), response: phoneNumberSchema, errors: [404],
      handler: async ({ params, principal }) => presentPhoneNumber(await d.get.execute(principal.organizationId, params.config_id, params.phone_number_id)),
    },
    {
      method: 'put', path: one, operationId: 'updatePhoneNumber', summary: 'Change a phone number', tags, auth: 'any',
      description: 'A null value means "no change". `clear_inbound_workflow: true` removes the inbound binding (and wins over inbound_workflow_id). Setting, changing or clearing the binding pushes it to the provider (`provider_sync`). A new country_code recomputes address_normalized. address cannot change.',
      params: pathParams('config_id', 'phone_number_id'),
      body: obj({
        label: nullable(label), inbound_workflow_id: nullable(id()), clear_inbound_workflow: bool({ default: false }),
        is_active: nullable(bool()), country_code: nullable(countryCode), extra_metadata: nullable(anyObject()),
      }, [], { additionalProperties: false }),
      response: phoneNumberSchema, errors: [400, 404, 409],
      handler: async ({ params, body, principal }) =>
        presentPhoneNumber(await d.update.execute(principal.organizationId, params.config_id, params.phone_number_id, {
          label: body.label, inboundWorkflowId: body.inbound_workflow_id, clearInboundWorkflow: body.clear_inbound_workflow,
          isActive: body.is_active, countryCode: body.country_code, extraMetadata: body.extra_metadata,
        })),
    },
    {
      method: 'delete', path: one, operationId: 'deletePhoneNumber', summary: 'Delete a phone number', tags, auth: 'any',
      description: 'A bound number\'s inbound webhook is detached first (`provider_sync`, best-effort).',
      params: pathParams('config_id', 'phone_number_id'),
      response: obj({ id: id(), deleted: { const: true }, provider_sync: providerSyncSchema }, ['id', 'deleted']), errors: [404],
      handler: async ({ params, principal }) => {
        const r = await d.remove.execute(principal.organizationId, params.config_id, params.phone_number_id);
        return { id: r.id, deleted: true, ...(r.providerSync ? { provider_sync: presentProviderSync(r.providerSync) } : {}) };
      },
    },
    {
      method: 'post', path: `${one}/set-default-caller`, operationId: 'setDefaultCallerId', summary: 'Make it the configuration\'s default caller id', tags, auth: 'any',
      params: pathParams('config_id', 'phone_number_id'), bodyOptional: true, response: phoneNumberSchema, errors: [404],
      handler: async ({ params, principal }) => presentPhoneNumber(await d.setDefaultCaller.execute(principal.organizationId, params.config_id, params.phone_number_id)),
    },
  ]);
}
