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
  workflows: 'workflows',
  workflowDefinitions: 'workflow_definitions',
  runs: 'runs',
  telephonyConfigurations: 'telephony_configurations',
  phoneNumbers: 'phone_numbers',
  uploads: 'uploads',
  campaigns: 'campaigns',
  campaignContacts: 'campaign_contacts',
  campaignAttempts: 'campaign_attempts',
  campaignLogs: 'campaign_logs',
  aiServices: 'ai_services',
  chats: 'chats',
  webhookEndpoints: 'webhook_endpoints',
  webhookDeliveries: 'webhook_deliveries',
} as const;

/** Index names the adapters refer to (duplicate-key checks). */
export const Indexes = {
  usersEmail: 'users_email_unique',
  sessionsDigest: 'sessions_token_digest_unique',
  apiKeysDigest: 'api_keys_key_digest_unique',
  workflowsUuid: 'workflows_uuid_unique',
  definitionsVersion: 'workflow_definitions_version_unique',
  runsProviderCall: 'runs_provider_call_unique',
  webhookDeliveriesEventKey: 'webhook_deliveries_event_key_unique',
  telephonyConfigurationsName: 'telephony_configurations_name_unique',
  telephonyConfigurationsDefault: 'telephony_configurations_default_unique',
  phoneNumbersOrgAddress: 'phone_numbers_org_address_unique',
  phoneNumbersDispatch: 'phone_numbers_dispatch_unique',
  phoneNumbersDefaultCaller: 'phone_numbers_default_caller_unique',
  uploadsFileKey: 'uploads_file_key_unique',
  contactsPhone: 'campaign_contacts_phone_unique',
  attemptsNumber: 'campaign_attempts_number_unique',
  aiServicesName: 'ai_services_name_unique',
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
  {
    name: Collections.workflows,
    indexes: [
      { name: Indexes.workflowsUuid, key: { workflowUuid: 1 }, unique: true },
      { name: 'workflows_org_created', key: { organizationId: 1, createdAt: -1, _id: -1 } },
    ],
  },
  {
    name: Collections.workflowDefinitions,
    indexes: [
      { name: Indexes.definitionsVersion, key: { workflowId: 1, versionNumber: 1 }, unique: true },
      { name: 'workflow_definitions_org_workflow', key: { organizationId: 1, workflowId: 1, versionNumber: -1 } },
    ],
  },
  {
    name: Collections.runs,
    indexes: [
      { name: 'runs_org_created', key: { organizationId: 1, createdAt: -1, _id: -1 } },
      // runs whose customer event marker is still pending (docs/webhooks.md "Guarantees")
      { name: 'runs_pending_events', key: { 'pendingEvents.at': 1 }, partialFilterExpression: { pendingEvents: { $exists: true } } },
      { name: 'runs_org_workflow', key: { organizationId: 1, workflowId: 1, createdAt: -1, _id: -1 } },
      {
        name: 'runs_org_campaign', key: { organizationId: 1, campaignId: 1, createdAt: -1, _id: -1 },
        partialFilterExpression: { campaignId: { $type: 'number' } },
      },
      {
        name: 'runs_org_wf_disposition', key: { organizationId: 1, workflowId: 1, disposition: 1 },
        partialFilterExpression: { disposition: { $type: 'string' } },
      },
      {
        // SQLite: UNIQUE (provider, provider_call_id) WHERE provider_call_id IS NOT NULL, NULLs distinct
        name: Indexes.runsProviderCall, key: { provider: 1, providerCallId: 1 }, unique: true,
        partialFilterExpression: { provider: { $type: 'string' }, providerCallId: { $type: 'string' } },
      },
    ],
  },
  {
    name: Collections.telephonyConfigurations,
    indexes: [
      { name: Indexes.telephonyConfigurationsName, key: { organizationId: 1, nameKey: 1 }, unique: true },
      {
        name: Indexes.telephonyConfigurationsDefault, key: { organizationId: 1 }, unique: true,
        partialFilterExpression: { isDefaultOutbound: true },
      },
      { name: 'telephony_configurations_org_created', key: { organizationId: 1, createdAt: 1, _id: 1 } },
      { name: 'telephony_configurations_provider', key: { provider: 1, accountId: 1 } },
    ],
  },
  {
    name: Collections.phoneNumbers,
    indexes: [
      { name: Indexes.phoneNumbersOrgAddress, key: { organizationId: 1, addressNormalized: 1 }, unique: true },
      { name: Indexes.phoneNumbersDispatch, key: { provider: 1, accountId: 1, addressNormalized: 1 }, unique: true },
      {
        name: Indexes.phoneNumbersDefaultCaller, key: { telephonyConfigurationId: 1 }, unique: true,
        partialFilterExpression: { isDefaultCallerId: true },
      },
      { name: 'phone_numbers_config', key: { organizationId: 1, telephonyConfigurationId: 1, createdAt: 1, _id: 1 } },
    ],
  },
  {
    name: Collections.uploads,
    indexes: [{ name: Indexes.uploadsFileKey, key: { fileKey: 1 }, unique: true }],
  },
  {
    name: Collections.campaigns,
    indexes: [
      { name: 'campaigns_org_created', key: { organizationId: 1, createdAt: -1, _id: -1 } },
      { name: 'campaigns_state', key: { state: 1 } },
      { name: 'campaigns_pending_events', key: { 'pendingEvents.at': 1 }, partialFilterExpression: { pendingEvents: { $exists: true } } },
      { name: 'campaigns_org_config', key: { organizationId: 1, telephonyConfigurationId: 1 } },
      { name: 'campaigns_slot_until', key: { 'inFlightSlots.until': 1 } },
    ],
  },
  {
    name: Collections.campaignContacts,
    indexes: [
      { name: Indexes.contactsPhone, key: { campaignId: 1, phoneNumber: 1 }, unique: true },
      { name: 'campaign_contacts_due', key: { campaignId: 1, status: 1, nextAttemptAt: 1, _id: 1 } },
      { name: 'campaign_contacts_rows', key: { organizationId: 1, campaignId: 1, row: 1, _id: 1 } },
      { name: 'campaign_contacts_lease', key: { status: 1, leaseUntil: 1 } },
    ],
  },
  {
    name: Collections.campaignAttempts,
    indexes: [
      { name: Indexes.attemptsNumber, key: { contactId: 1, attemptNumber: 1 }, unique: true },
      { name: 'campaign_attempts_check', key: { status: 1, checkAt: 1, _id: 1 } },
      { name: 'campaign_attempts_ended', key: { campaignId: 1, endedAt: 1 } },
      { name: 'campaign_attempts_campaign', key: { organizationId: 1, campaignId: 1, _id: 1 } },
    ],
  },
  {
    name: Collections.campaignLogs,
    indexes: [{ name: 'campaign_logs_campaign', key: { organizationId: 1, campaignId: 1, _id: 1 } }],
  },
  {
    name: Collections.aiServices,
    indexes: [
      { name: Indexes.aiServicesName, key: { organizationId: 1, nameKey: 1 }, unique: true },
      { name: 'ai_services_org_created', key: { organizationId: 1, createdAt: 1, _id: 1 } },
    ],
  },
  {
    name: Collections.chats,
    indexes: [{ name: 'chats_org_workflow_created', key: { organizationId: 1, workflowId: 1, createdAt: -1, _id: -1 } }],
  },
  {
    name: Collections.webhookEndpoints,
    indexes: [{ name: 'webhook_endpoints_org_events', key: { organizationId: 1, events: 1 } }],
  },
  {
    name: Collections.webhookDeliveries,
    indexes: [
      { name: 'webhook_deliveries_due', key: { status: 1, nextAttemptAt: 1, _id: 1 } },
      { name: 'webhook_deliveries_endpoint', key: { organizationId: 1, endpointId: 1, _id: -1 } },
      {
        name: Indexes.webhookDeliveriesEventKey, key: { endpointId: 1, eventKey: 1 }, unique: true,
        partialFilterExpression: { eventKey: { $type: 'string' } },
      },
    ],
  },
];
