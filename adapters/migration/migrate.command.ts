import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Db } from 'mongodb';
import { openMigratedSqlite } from '../storage/sqlite/database.js';
import { connectMongo } from '../storage/mongo/mongo-database.js';
import { formatMigrationReport, migrateSqliteToMongo, TargetNotEmptyError } from './sqlite-to-mongo.js';

export const MIGRATE_USAGE = 'callplane migrate --from sqlite --to mongodb [--sqlite PATH] [--mongodb-uri URI] [--force]';

/** How the command reaches MongoDB (tests inject the in-process double). */
export interface MigrateCommandDeps {
  openMongo?: (uri: string) => Promise<{ db: Db; close(): Promise<void> }>;
}

/**
 * `callplane migrate --from sqlite --to mongodb`: the source is `--sqlite PATH`, else `<CALLPLANE_DATA_DIR>/callplane.db`
 * (default data dir `./data`); the target is `--mongodb-uri`, else MONGODB_URI. Prints a line per table while
 * copying, then the counts per table. Exit codes: 0 every count matches, 1 a count differs or the copy failed or
 * the target is not empty without `--force`, 2 bad arguments.
 */
export async function runMigrateCommand(
  args: string[], env: NodeJS.ProcessEnv, out: (s: string) => void, err: (s: string) => void, deps: MigrateCommandDeps = {},
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { from: { type: 'string' }, to: { type: 'string' }, sqlite: { type: 'string' }, 'mongodb-uri': { type: 'string' }, force: { type: 'boolean' } },
    strict: true,
  });
  if (values.from !== 'sqlite' || values.to !== 'mongodb') {
    err(`callplane: migrate supports --from sqlite --to mongodb only\nusage: ${MIGRATE_USAGE}\n`);
    return 2;
  }
  const sqlitePath = resolve(values.sqlite ?? join(env.CALLPLANE_DATA_DIR?.trim() || './data', 'callplane.db'));
  if (!existsSync(sqlitePath)) {
    err(`callplane: no SQLite database at ${sqlitePath} (give --sqlite PATH or CALLPLANE_DATA_DIR)\n`);
    return 1;
  }
  const uri = values['mongodb-uri']?.trim() || env.MONGODB_URI?.trim();
  if (!uri) {
    err(`callplane: the target needs --mongodb-uri or MONGODB_URI\nusage: ${MIGRATE_USAGE}\n`);
    return 2;
  }
  if (!/^mongodb(\+srv)?:\/\//.test(uri)) {
    err('callplane: the MongoDB URI must start with mongodb:// or mongodb+srv://\n');
    return 2;
  }
  const openMongo = deps.openMongo ?? (async (u: string) => {
    const storage = await connectMongo(u);
    return { db: storage.db, close: () => storage.close() };
  });
  const sqlite = openMigratedSqlite(sqlitePath);
  try {
    const mongo = await openMongo(uri);
    try {
      out(`copying ${sqlitePath} to MongoDB database "${mongo.db.databaseName}"\n`);
      const report = await migrateSqliteToMongo(sqlite, mongo.db, { force: values.force === true, progress: (line) => out(`  ${line}\n`) });
      out(formatMigrationReport(report));
      return report.ok ? 0 : 1;
    } catch (e) {
      if (e instanceof TargetNotEmptyError) {
        err(`callplane: ${e.message}\n`);
        return 1;
      }
      throw e;
    } finally {
      await mongo.close();
    }
  } finally {
    sqlite.close();
  }
}
