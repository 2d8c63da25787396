import type { Container } from 'inversify';
import { IdentityRepository } from '../../core/ports/identity.repository.port.js';
import { SqliteCampaignRepository } from '../../adapters/storage/sqlite/campaign.sqlite.js';
import { SqliteUploadRepository } from '../../adapters/storage/sqlite/upload.sqlite.js';
import type { SqliteDatabase } from '../../adapters/storage/sqlite/database.js';
import { SqliteIdentityRepository } from '../../adapters/storage/sqlite/identity.sqlite.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { SqliteRunRepository } from '../../adapters/storage/sqlite/run.sqlite.js';
import { UsageRepository } from '../../core/ports/usage.repository.port.js';
import { OrganizationSettingsRepository } from '../../core/ports/organization-settings.repository.port.js';
import { SqliteUsageRepository } from '../../adapters/storage/sqlite/usage.sqlite.js';
import { SqliteOrganizationSettingsRepository } from '../../adapters/storage/sqlite/organization-settings.sqlite.js';
import { SqliteWorkflowRepository } from '../../adapters/storage/sqlite/workflow.sqlite.js';
import { SqlitePhoneNumberRepository } from '../../adapters/storage/sqlite/phone-number.sqlite.js';
import { SqliteTelephonyConfigurationRepository } from '../../adapters/storage/sqlite/telephony-configuration.sqlite.js';
import { AiServiceRepository } from '../../core/ports/ai-service.repository.port.js';
import { SqliteAiServiceRepository } from '../../adapters/storage/sqlite/ai-service.sqlite.js';
import { MongoAiServiceRepository } from '../../adapters/storage/mongo/ai-service.mongo.js';
import { ChatRepository } from '../../core/ports/chat.repository.port.js';
import { SqliteChatRepository } from '../../adapters/storage/sqlite/chat.sqlite.js';
import { MongoChatRepository } from '../../adapters/storage/mongo/chat.mongo.js';
import { WebhookRepository } from '../../core/ports/webhook.repository.port.js';
import { SqliteWebhookRepository } from '../../adapters/storage/sqlite/webhook.sqlite.js';
import { MongoWebhookRepository } from '../../adapters/storage/mongo/webhook.mongo.js';
import type { Db } from 'mongodb';
import { createMongoStorage, type MongoStorage } from '../../adapters/storage/mongo/mongo-database.js';
import { MongoIdentityRepository } from '../../adapters/storage/mongo/identity.mongo.js';
import { MongoRunRepository } from '../../adapters/storage/mongo/run.mongo.js';
import { MongoWorkflowRepository } from '../../adapters/storage/mongo/workflow.mongo.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import { PhoneNumberRepository } from '../../core/ports/phone-number.repository.port.js';
import { MongoTelephonyConfigurationRepository } from '../../adapters/storage/mongo/telephony-configuration.mongo.js';
import { MongoPhoneNumberRepository } from '../../adapters/storage/mongo/phone-number.mongo.js';
import { CampaignRepository } from '../../core/ports/campaign.repository.port.js';
import { UploadRepository } from '../../core/ports/upload.repository.port.js';
import { MongoCampaignRepository } from '../../adapters/storage/mongo/campaign.mongo.js';
import { MongoUploadRepository } from '../../adapters/storage/mongo/upload.mongo.js';
import { MongoUsageRepository } from '../../adapters/storage/mongo/usage.mongo.js';
import { MongoOrganizationSettingsRepository } from '../../adapters/storage/mongo/organization-settings.mongo.js';
import type { Lifecycle } from '../lifecycle.js';
import type { Settings } from '../settings.js';
import { LifecycleToken, SqliteDatabaseToken, StorageProbeToken } from '../tokens.js';

/** The MongoDB client + database (CALLPLANE_STORAGE=mongodb); tests may rebind it to a double before resolving. */
export const MongoStorageToken = Symbol.for('callplane.MongoStorage');

/**
 * Every repository port bound to the adapter of the configured storage. Feature modules bind use cases
 * and routes only, so switching storage touches this file alone.
 */
export function storageModule(c: Container, settings: Settings): void {
  if (settings.storage === 'sqlite') {
    const bindSqlite = <T>(token: symbol, make: (db: SqliteDatabase) => T) =>
      c.bind<T>(token).toResolvedValue(make, [SqliteDatabaseToken]).inSingletonScope();
    bindSqlite(IdentityRepository, (db) => new SqliteIdentityRepository(db));
    bindSqlite(WorkflowRepository, (db) => new SqliteWorkflowRepository(db));
    bindSqlite(RunRepository, (db) => new SqliteRunRepository(db));
    bindSqlite(TelephonyConfigurationRepository, (db) => new SqliteTelephonyConfigurationRepository(db));
    bindSqlite(PhoneNumberRepository, (db) => new SqlitePhoneNumberRepository(db));
    bindSqlite(CampaignRepository, (db) => new SqliteCampaignRepository(db));
    bindSqlite(UploadRepository, (db) => new SqliteUploadRepository(db));
    bindSqlite(UsageRepository, (db) => new SqliteUsageRepository(db));
    bindSqlite(OrganizationSettingsRepository, (db) => new SqliteOrganizationSettingsRepository(db));
    bindSqlite(AiServiceRepository, (db) => new SqliteAiServiceRepository(db));
    bindSqlite(ChatRepository, (db) => new SqliteChatRepository(db));
    bindSqlite(WebhookRepository, (db) => new SqliteWebhookRepository(db));
    return;
  }
  if (settings.storage === 'mongodb') {
    // Connect + create collections/indexes as soon as storage is first resolved; the start hook waits for it.
    c.bind<MongoStorage>(MongoStorageToken).toResolvedValue((lifecycle: Lifecycle) => {
      const storage = createMongoStorage(settings.mongodbUri!);
      const ready = storage.prepare();
      ready.catch(() => undefined); // reported by the start hook
      lifecycle.onStart('mongodb', () => ready);
      lifecycle.onStop('mongodb', () => storage.close());
      return storage;
    }, [LifecycleToken]).inSingletonScope();
    // the schema exists before any other start hook (campaign sweep, jobs) touches the database; prepare is memoized
    c.get<Lifecycle>(LifecycleToken).onStart('mongodb-schema', () => c.get<MongoStorage>(MongoStorageToken).prepare());
    const bindMongo = <T>(token: symbol, make: (db: Db) => T) =>
      c.bind<T>(token).toResolvedValue((s: MongoStorage) => make(s.db), [MongoStorageToken]).inSingletonScope();
    bindMongo(IdentityRepository, (db) => new MongoIdentityRepository(db));
    bindMongo(WorkflowRepository, (db) => new MongoWorkflowRepository(db));
    bindMongo(RunRepository, (db) => new MongoRunRepository(db));
    bindMongo(TelephonyConfigurationRepository, (db) => new MongoTelephonyConfigurationRepository(db));
    bindMongo(PhoneNumberRepository, (db) => new MongoPhoneNumberRepository(db));
    bindMongo(CampaignRepository, (db) => new MongoCampaignRepository(db));
    bindMongo(UploadRepository, (db) => new MongoUploadRepository(db));
    bindMongo(UsageRepository, (db) => new MongoUsageRepository(db));
    bindMongo(OrganizationSettingsRepository, (db) => new MongoOrganizationSettingsRepository(db));
    bindMongo(AiServiceRepository, (db) => new MongoAiServiceRepository(db));
    bindMongo(ChatRepository, (db) => new MongoChatRepository(db));
    bindMongo(WebhookRepository, (db) => new MongoWebhookRepository(db));
    c.rebind(StorageProbeToken).toResolvedValue((s: MongoStorage) => () => s.ping(), [MongoStorageToken]);
    return;
  }
  throw new Error(`CALLPLANE_STORAGE=${settings.storage}: no repository adapters are registered for it yet`);
}
