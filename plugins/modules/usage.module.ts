import type { Container } from 'inversify';
import { Clock } from '../../core/ports/clock.port.js';
import { OrganizationSettingsRepository } from '../../core/ports/organization-settings.repository.port.js';
import { UsageRepository } from '../../core/ports/usage.repository.port.js';
import { ObjectStore } from '../../core/ports/object-store.port.js';
import { RunViews } from '../../core/runs/runs.use-case.js';
import { GetOrganizationSettings, UpdateOrganizationSettings } from '../../core/usage/organization-settings.use-case.js';
import { ExportUsageCsv, GetUsageReport, UsageEntries } from '../../core/usage/usage-report.use-case.js';
import { organizationSettingsRoutes } from '../../http/routes/organization-settings.routes.js';
import { usageRoutes } from '../../http/routes/usage.routes.js';
import { HttpRoutesToken } from '../tokens.js';

/**
 * Usage reporting and organization settings: use cases and routes (repositories come from the storage module;
 * storage without these adapters yet serves the rest of the API without them).
 */
export function usageModule(c: Container): void {
  if (c.isBound(OrganizationSettingsRepository)) {
    c.bind(GetOrganizationSettings).toResolvedValue((s: OrganizationSettingsRepository) => new GetOrganizationSettings(s), [OrganizationSettingsRepository]).inSingletonScope();
    c.bind(UpdateOrganizationSettings).toResolvedValue(
      (s: OrganizationSettingsRepository, clock: Clock) => new UpdateOrganizationSettings(s, clock), [OrganizationSettingsRepository, Clock],
    ).inSingletonScope();
    c.bind(HttpRoutesToken).toResolvedValue(
      (getOrganizationSettings: GetOrganizationSettings, updateOrganizationSettings: UpdateOrganizationSettings) =>
        organizationSettingsRoutes({ getOrganizationSettings, updateOrganizationSettings }),
      [GetOrganizationSettings, UpdateOrganizationSettings],
    );
  }
  if (!c.isBound(UsageRepository)) return;
  c.bind(UsageEntries).toResolvedValue((s: ObjectStore) => new UsageEntries(new RunViews(s)), [ObjectStore]).inSingletonScope();
  c.bind(GetUsageReport).toResolvedValue((u: UsageRepository, e: UsageEntries) => new GetUsageReport(u, e), [UsageRepository, UsageEntries]).inSingletonScope();
  c.bind(ExportUsageCsv).toResolvedValue((u: UsageRepository, e: UsageEntries) => new ExportUsageCsv(u, e), [UsageRepository, UsageEntries]).inSingletonScope();
  c.bind(HttpRoutesToken).toResolvedValue(
    (getUsageReport: GetUsageReport, exportUsageCsv: ExportUsageCsv) => usageRoutes({ getUsageReport, exportUsageCsv }),
    [GetUsageReport, ExportUsageCsv],
  );
}
