import { ValidationError } from '../errors.js';
import type { Clock } from '../ports/clock.port.js';
import type { OrganizationSettingsRepository } from '../ports/organization-settings.repository.port.js';
import type { OrganizationSettings } from './organization-settings.js';

/** `GET /organizations/settings`: the caller's organization settings (defaults until written). */
export class GetOrganizationSettings {
  constructor(private readonly settings: OrganizationSettingsRepository) {}

  execute(organizationId: number): Promise<OrganizationSettings> {
    return this.settings.get(organizationId);
  }
}

/**
 * `PUT /organizations/settings`: writes the per-minute price (US dollars, a finite number ≥ 0; else
 * ValidationError on `["body","price_per_minute_usd"]`). Runs finishing afterwards are charged at the new price;
 * runs already finished keep the charge they were recorded with.
 */
export class UpdateOrganizationSettings {
  constructor(
    private readonly settings: OrganizationSettingsRepository,
    private readonly clock: Clock,
  ) {}

  execute(organizationId: number, patch: { pricePerMinuteUsd?: number }): Promise<OrganizationSettings> {
    const p = patch.pricePerMinuteUsd;
    if (p !== undefined && !(typeof p === 'number' && Number.isFinite(p) && p >= 0)) {
      throw new ValidationError([{ loc: ['body', 'price_per_minute_usd'], msg: 'Input should be a number greater than or equal to 0', type: 'greater_than_equal' }]);
    }
    return this.settings.update(organizationId, patch, this.clock.now());
  }
}
