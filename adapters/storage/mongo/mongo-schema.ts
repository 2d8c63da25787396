/**
 * The MongoDB schema of Callplane as data: every collection and its indexes. `ensureMongoSchema`
 * (mongo-database.ts) creates them at start, idempotently. Unique indexes mirror SQLite's UNIQUE constraints;
 * adapters check duplicate-key errors by the index NAME given here. docs/deployment.md shows the same table.
 *
 * Id scheme: every record's `_id` is the integer id the API shows, taken from the `counters` collection
 * (`{_id: <collection name>, seq: <last id>}`, incremented atomically with `$inc`), so ids are the same
 * integers as with SQLite and survive a copy between the two.
 */
import type { IndexDirection } from 'mongodb';

export interface MongoIndexSpec {
  name: string;
  key: Record<string, IndexDirection>;
  unique?: boolean;
  partialFilterExpression?: Record<string, unknown>;
}

export interface MongoCollectionSpec {
  name: string;
  indexes: MongoIndexSpec[];
}

/** Collection names, one place. */
export const Collections = {
  counters: 'counters',
  organizations: 'organizations',
  users: 'users',
  sessions: 'sessions',
  apiKeys: 'api_keys',
} as const;

/** Index names the adapters refer to (duplicate-key checks). */
export const Indexes = {
  usersEmail: 'users_email_unique',
  sessionsDigest: 'sessions_token_digest_unique',
  apiKeysDigest: 'api_keys_key_digest_unique',
} as const;

export const mongoCollections: readonly MongoCollectionSpec[] = [
  { name: Collections.counters, indexes: [] },
  {
    name: Collections.organizations,
    indexes: [{ name: 'organizations_name_key', key: { nameKey: 1, _id: 1 } }],
  },
  {
    name: Collections.users,
    indexes: [
      { name: Indexes.usersEmail, key: { email: 1 }, unique: true },
      { name: 'users_org', key: { organizationId: 1, _id: 1 } },
    ],
  },
  {
    name: Collections.sessions,
    indexes: [{ name: Indexes.sessionsDigest, key: { tokenDigest: 1 }, unique: true }],
  },
  {
    name: Collections.apiKeys,
    indexes: [
      { name: Indexes.apiKeysDigest, key: { keyDigest: 1 }, unique: true },
      { name: 'api_keys_org', key: { organizationId: 1, _id: 1 } },
    ],
  },
];
