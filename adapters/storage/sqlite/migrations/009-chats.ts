import type { Migration } from './migration.js';

/**
 * Chats (API.md 12): one row per chat; `state` is the conversation engine's JSON state (the whole record of the
 * conversation). `revision` grows by one per save: a save names the revision it read (optimistic concurrency).
 * `status` copies the state's for listing without parsing it.
 */
export const chatsMigration: Migration = {
  version: 9,
  name: 'chats',
  up(db) {
    db.exec(`
      CREATE TABLE chats (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        organization_id INTEGER NOT NULL REFERENCES organizations(id),
        workflow_id INTEGER NOT NULL REFERENCES workflows(id),
        definition_id INTEGER NOT NULL REFERENCES workflow_definitions(id),
        status TEXT NOT NULL CHECK (status IN ('active', 'ended')),
        state TEXT NOT NULL,
        revision INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX chats_org_workflow_created ON chats (organization_id, workflow_id, created_at DESC, id DESC);
    `);
  },
};
