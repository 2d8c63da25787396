import type { Migration } from './migration.js';

/**
 * Uploads, campaigns, their contacts, contact attempts and logs.
 *
 * The dispatcher's hot paths each have an index:
 * - campaign_contacts_due   next due pending contact of a campaign (status, next_attempt_at, id)
 * - campaign_attempts_check open attempts whose check time passed (reconciliation sweep; partial: not ended)
 * - campaign_attempts_ended attempts ended in the breaker window of a campaign
 * `in_flight` on campaigns is the slot counter, changed only together with the claim or the end of an attempt.
 */
export const campaignsMigration: Migration = {
  version: 4,
  name: 'uploads-campaigns',
  up(db) {
    db.exec(`
      CREATE TABLE uploads (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        file_key TEXT NOT NULL UNIQUE,
        file_name TEXT NOT NULL,
        declared_size INTEGER NOT NULL,
        content_type TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        uploaded_at INTEGER,
        size INTEGER
      );

      CREATE TABLE campaigns (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        name TEXT NOT NULL,
        workflow_id INTEGER NOT NULL,
        telephony_configuration_id INTEGER,
        state TEXT NOT NULL CHECK (state IN ('draft', 'running', 'paused', 'completed', 'failed', 'cancelled')),
        source_type TEXT NOT NULL,
        source_id TEXT NOT NULL,
        total_rows INTEGER NOT NULL DEFAULT 0,
        processed_rows INTEGER NOT NULL DEFAULT 0,
        failed_rows INTEGER NOT NULL DEFAULT 0,
        executed_count INTEGER NOT NULL DEFAULT 0,
        total_queued_count INTEGER NOT NULL DEFAULT 0,
        in_flight INTEGER NOT NULL DEFAULT 0 CHECK (in_flight >= 0),
        retry_config TEXT NOT NULL,
        max_concurrency INTEGER NOT NULL CHECK (max_concurrency >= 1),
        schedule_config TEXT,
        circuit_breaker TEXT NOT NULL,
        parent_campaign_id INTEGER,
        redialed_campaign_id INTEGER,
        breaker_reset_at INTEGER,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        completed_at INTEGER,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX campaigns_org_created ON campaigns (organization_id, created_at DESC, id DESC);
      CREATE INDEX campaigns_state ON campaigns (state);
      CREATE INDEX campaigns_org_config ON campaigns (organization_id, telephony_configuration_id);

      CREATE TABLE campaign_logs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        ts INTEGER NOT NULL,
        level TEXT NOT NULL,
        event TEXT NOT NULL,
        message TEXT NOT NULL,
        details TEXT NOT NULL DEFAULT '{}'
      );
      CREATE INDEX campaign_logs_campaign ON campaign_logs (campaign_id, id);

      CREATE TABLE campaign_contacts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        row_number INTEGER NOT NULL,
        phone_number TEXT NOT NULL,
        context TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL CHECK (status IN ('pending', 'active', 'done', 'dropped')),
        attempts_made INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        current_attempt_id INTEGER,
        last_outcome TEXT,
        final_outcome TEXT,
        updated_at INTEGER NOT NULL,
        UNIQUE (campaign_id, phone_number)
      );
      CREATE INDEX campaign_contacts_due ON campaign_contacts (campaign_id, status, next_attempt_at, id);

      CREATE TABLE campaign_attempts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        contact_id INTEGER NOT NULL REFERENCES campaign_contacts(id),
        attempt_number INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('claimed', 'dialing', 'placed', 'ended')),
        run_id INTEGER,
        provider_call_id TEXT,
        outcome TEXT,
        claimed_at INTEGER NOT NULL,
        check_at INTEGER NOT NULL,
        placed_at INTEGER,
        ended_at INTEGER,
        UNIQUE (contact_id, attempt_number)
      );
      CREATE INDEX campaign_attempts_check ON campaign_attempts (check_at) WHERE status <> 'ended';
      CREATE INDEX campaign_attempts_ended ON campaign_attempts (campaign_id, ended_at) WHERE ended_at IS NOT NULL;
      CREATE INDEX campaign_attempts_campaign ON campaign_attempts (campaign_id, id);
    `);
  },
};
