import type { Migration } from './migration.js';

/**
 * Workflows (agents), their definition versions, and runs (calls).
 *
 * The runs table is shaped for the usage report (GET /organizations/usage/runs, issue 6) as much as for the
 * per-workflow pages: every attribute the report filters or sums on is a real column (organization, created_at,
 * workflow, campaign, caller/called number, disposition, duration, tokens, charge), never a JSON path, and the
 * main access paths have an index whose order is the report's order (created_at DESC, id DESC):
 * - runs_org_created      organization + date range, newest first (the report's base scan; run id filter hits the PK)
 * - runs_org_workflow     a workflow's runs, newest first; its count (total_runs)
 * - runs_org_campaign     a campaign's runs, newest first (partial: only runs that came from a campaign)
 * - runs_org_wf_disposition  distinct dispositions of a workflow (call_disposition_codes)
 * - runs_provider_call    a provider callback that carries only the provider's call id; unique per provider
 * `status_rank` mirrors RUN_STATUS_RANK so that "never move a run backwards" is a column comparison.
 */
export const workflowsRunsMigration: Migration = {
  version: 2,
  name: 'workflows-runs',
  up(db) {
    db.exec(`
      CREATE TABLE workflows (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('active', 'archived')),
        workflow_uuid TEXT NOT NULL UNIQUE,
        template_context_variables TEXT NOT NULL DEFAULT '{}',
        workflow_configurations TEXT NOT NULL DEFAULT '{}',
        current_definition_id INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX workflows_org_created ON workflows (organization_id, created_at DESC, id DESC);

      CREATE TABLE workflow_definitions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        workflow_id INTEGER NOT NULL REFERENCES workflows(id),
        version_number INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('published', 'superseded')),
        definition TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (workflow_id, version_number)
      );

      CREATE TABLE runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        workflow_id INTEGER NOT NULL REFERENCES workflows(id),
        definition_id INTEGER NOT NULL REFERENCES workflow_definitions(id),
        name TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('inbound', 'outbound')),
        status TEXT NOT NULL CHECK (status IN ('queued', 'ringing', 'in_progress', 'completed', 'failed')),
        status_rank INTEGER NOT NULL,
        disposition TEXT,
        campaign_id INTEGER,
        attempt_id INTEGER,
        telephony_configuration_id INTEGER,
        provider TEXT,
        provider_call_id TEXT,
        caller_number TEXT,
        called_number TEXT,
        initial_context TEXT NOT NULL DEFAULT '{}',
        gathered_context TEXT NOT NULL DEFAULT '{}',
        logs TEXT NOT NULL DEFAULT '[]',
        annotations TEXT NOT NULL DEFAULT '{}',
        cost_info TEXT NOT NULL DEFAULT '{}',
        duration_seconds REAL,
        service_token_usage REAL NOT NULL DEFAULT 0,
        charge_usd REAL NOT NULL DEFAULT 0,
        transcript_key TEXT,
        recording_key TEXT,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        ended_at INTEGER,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX runs_org_created ON runs (organization_id, created_at DESC, id DESC);
      CREATE INDEX runs_org_workflow ON runs (organization_id, workflow_id, created_at DESC, id DESC);
      CREATE INDEX runs_org_campaign ON runs (organization_id, campaign_id, created_at DESC, id DESC)
        WHERE campaign_id IS NOT NULL;
      CREATE INDEX runs_org_wf_disposition ON runs (organization_id, workflow_id, disposition)
        WHERE disposition IS NOT NULL;
      CREATE UNIQUE INDEX runs_provider_call ON runs (provider, provider_call_id)
        WHERE provider_call_id IS NOT NULL;
    `);
  },
};
