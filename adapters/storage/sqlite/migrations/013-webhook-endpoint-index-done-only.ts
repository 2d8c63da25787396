import type { Migration } from './migration.js';

/**
 * The per-endpoint delivery index holds finished deliveries only (docs/benchmarks.md section 8). Every published
 * event inserts a pending delivery, and a full (organization, endpoint, id) index made each of those inserts write
 * one more index page to the WAL; now an insert touches the table and the due index only, and a delivery enters
 * the endpoint index when its result is recorded, which is one write for the results of many sends. The delivery
 * log pages an endpoint's finished deliveries through this index and its pending ones (the backlog: in flight or
 * waiting for a retry) through the due index, which now carries the organization and endpoint so that part
 * never reads the table. Existing databases get both rebuilt once, here.
 */
export const webhookEndpointIndexDoneOnlyMigration: Migration = {
  version: 13,
  name: 'webhook-endpoint-index-done-only',
  up(db) {
    db.exec(`
      DROP INDEX webhook_deliveries_endpoint;
      CREATE INDEX webhook_deliveries_endpoint_done ON webhook_deliveries (organization_id, endpoint_id, id) WHERE status <> 'pending';
      DROP INDEX webhook_deliveries_due;
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id, organization_id, endpoint_id) WHERE status = 'pending';
    `);
  },
};
