import type { Container } from 'inversify';
import { IdentityRepository } from '../../core/ports/identity.repository.port.js';
import type { SqliteDatabase } from '../../adapters/storage/sqlite/database.js';
import { SqliteIdentityRepository } from '../../adapters/storage/sqlite/identity.sqlite.js';
import type { Settings } from '../settings.js';
import { SqliteDatabaseToken } from '../tokens.js';

/**
 * Every repository port bound to the adapter of the configured storage. Feature modules bind use cases
 * and routes only, so switching storage touches this file alone.
 */
export function storageModule(c: Container, settings: Settings): void {
  if (settings.storage === 'sqlite') {
    const bindSqlite = <T>(token: symbol, make: (db: SqliteDatabase) => T) =>
      c.bind<T>(token).toResolvedValue(make, [SqliteDatabaseToken]).inSingletonScope();
    bindSqlite(IdentityRepository, (db) => new SqliteIdentityRepository(db));
    return;
  }
  throw new Error(`CALLPLANE_STORAGE=${settings.storage}: no repository adapters are registered for it yet`);
}
