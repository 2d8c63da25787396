import type { Container } from 'inversify';
import { Clock, systemClock } from '../../core/ports/clock.port.js';
import { PasswordHasher, SecretCipher, TokenService, UrlSigner } from '../../core/ports/crypto.port.js';
import { Logger } from '../../core/ports/logger.port.js';
import { ObjectStore } from '../../core/ports/object-store.port.js';
import { LocalObjectStore } from '../../adapters/files/local/local-object-store.js';
import { AesGcmSecretCipher, HmacUrlSigner, NodeTokenService, ScryptPasswordHasher } from '../../adapters/crypto/node-crypto.js';
import { openMigratedSqlite, type SqliteDatabase } from '../../adapters/storage/sqlite/database.js';
import { SqliteWalCheckpointer } from '../../adapters/storage/sqlite/wal-checkpointer.js';
import { join } from 'node:path';
import { Lifecycle } from '../lifecycle.js';
import type { Settings } from '../settings.js';
import { LifecycleToken, SecretKeyToken, SettingsToken, SqliteDatabaseToken, StorageProbeToken } from '../tokens.js';

export interface FoundationOptions {
  settings: Settings;
  secretKey: string;
  logger: Logger;
  clock?: Clock;
  /** An already open database (tests share one); otherwise `<dataDir>/callplane.db` is opened and migrated. */
  sqlite?: SqliteDatabase;
}

/** Settings, logging, clock, crypto, rate limiting, the lifecycle and the embedded database. */
export function foundationModule(c: Container, o: FoundationOptions): void {
  c.bind(SettingsToken).toConstantValue(o.settings);
  c.bind(SecretKeyToken).toConstantValue(o.secretKey);
  c.bind(Logger).toConstantValue(o.logger);
  c.bind(Clock).toConstantValue(o.clock ?? systemClock);
  c.bind(LifecycleToken).toConstantValue(new Lifecycle());
  c.bind(PasswordHasher).toConstantValue(new ScryptPasswordHasher());
  c.bind(TokenService).toConstantValue(new NodeTokenService());
  c.bind(SecretCipher).toConstantValue(new AesGcmSecretCipher(o.secretKey));
  c.bind(UrlSigner).toConstantValue(new HmacUrlSigner(o.secretKey));

  c.bind<SqliteDatabase>(SqliteDatabaseToken)
    .toResolvedValue(
      (lifecycle: Lifecycle) => {
        const db = o.sqlite ?? openMigratedSqlite(join(o.settings.dataDir, 'callplane.db'));
        lifecycle.onStop('sqlite', () => {
          if (db.open && !o.sqlite) db.close();
        });
        if (!o.sqlite) {
          // WAL checkpoints (the only fsyncs with synchronous = NORMAL) on a worker thread, not inside a commit
          let checkpointer: SqliteWalCheckpointer | null = null;
          lifecycle.onStart('sqlite-checkpoints', async () => {
            checkpointer = await SqliteWalCheckpointer.start(db, { onFailure: (message) => o.logger.warn({ message }, 'sqlite checkpoints') });
            if (checkpointer) o.logger.info({}, 'sqlite checkpoints run on a worker thread');
          });
          // (stop hooks run in reverse: this one before the database closes)
          lifecycle.onStop('sqlite-checkpoints', () => checkpointer?.stop());
        }
        return db;
      },
      [LifecycleToken],
    )
    .inSingletonScope();
  c.bind(ObjectStore).toResolvedValue(
    (signer: UrlSigner, clock: Clock) => new LocalObjectStore(join(o.settings.dataDir, 'files'), o.settings.publicUrl, signer, clock),
    [UrlSigner, Clock],
  ).inSingletonScope();
  c.bind(StorageProbeToken).toResolvedValue(
    (db: SqliteDatabase) => async () => db.open && db.prepare('SELECT 1 AS ok').get() !== undefined,
    [SqliteDatabaseToken],
  );
}
