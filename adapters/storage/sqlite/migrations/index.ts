import { identityMigration } from './001-identity.js';
import { workflowsRunsMigration } from './002-workflows-runs.js';
import { telephonyMigration } from './003-telephony.js';
import { campaignsMigration } from './004-campaigns.js';
import { usageMigration } from './005-usage.js';
import { credentialsCheckMigration } from './006-credentials-check.js';
import { aiServicesMigration } from './007-ai-services.js';
import { phoneNumberExtensionMigration } from './008-phone-number-extension.js';
import { chatsMigration } from './009-chats.js';
import { webhooksMigration } from './010-webhooks.js';
import { webhookEventOutboxMigration } from './011-webhook-event-outbox.js';
import { webhookDuePendingOnlyMigration } from './012-webhook-due-pending-only.js';
import { webhookEndpointIndexDoneOnlyMigration } from './013-webhook-endpoint-index-done-only.js';
import type { Migration } from './migration.js';

export type { Migration };

/** Every schema step in order. Append only; never edit a released migration. */
export const migrations: readonly Migration[] = [identityMigration, workflowsRunsMigration, telephonyMigration, campaignsMigration, usageMigration, credentialsCheckMigration, aiServicesMigration, phoneNumberExtensionMigration, chatsMigration, webhooksMigration, webhookEventOutboxMigration, webhookDuePendingOnlyMigration, webhookEndpointIndexDoneOnlyMigration];
