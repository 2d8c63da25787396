import type { OrganizationSettings } from '../../core/usage/organization-settings.js';
import type { GetOrganizationSettings, UpdateOrganizationSettings } from '../../core/usage/organization-settings.use-case.js';
import { defineRoutes } from '../routing/route.js';
import { dateTime, nullable, num, obj } from '../routing/schema-helpers.js';

export interface OrganizationSettingsRouteDeps {
  getOrganizationSettings: GetOrganizationSettings;
  updateOrganizationSettings: UpdateOrganizationSettings;
}

export const presentOrganizationSettings = (s: OrganizationSettings) => ({
  price_per_minute_usd: s.pricePerMinuteUsd,
  updated_at: s.updatedAt ? s.updatedAt.toISOString() : null,
});

const settingsSchema = obj({ price_per_minute_usd: num({ minimum: 0 }), updated_at: nullable(dateTime()) }, ['price_per_minute_usd', 'updated_at']);

export function organizationSettingsRoutes(d: OrganizationSettingsRouteDeps) {
  return defineRoutes([
    {
      method: 'get', path: '/organizations/settings', operationId: 'getOrganizationSettings', summary: 'The organization\'s settings', tags: ['usage'], auth: 'any',
      description: '`price_per_minute_usd` (default 0) prices every call when it finishes: `charge_usd` = duration in minutes × price. `updated_at` is null until written.',
      response: settingsSchema,
      handler: async ({ principal }) => presentOrganizationSettings(await d.getOrganizationSettings.execute(principal.organizationId)),
    },
    {
      method: 'put', path: '/organizations/settings', operationId: 'updateOrganizationSettings', summary: 'Set the organization\'s settings', tags: ['usage'], auth: 'any',
      description: 'Sets `price_per_minute_usd` (US dollars, ≥ 0). Calls finishing from now on are charged at the new price; finished calls keep their charge.',
      body: obj({ price_per_minute_usd: num({ minimum: 0 }) }, ['price_per_minute_usd'], { additionalProperties: false }),
      response: settingsSchema,
      handler: async ({ principal, body }) =>
        presentOrganizationSettings(await d.updateOrganizationSettings.execute(principal.organizationId, { pricePerMinuteUsd: body.price_per_minute_usd })),
    },
  ]);
}
