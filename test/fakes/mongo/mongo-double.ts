/**
 * TEST DOUBLE: an in-process stand-in for the official MongoDB driver 7 (`MongoClient` / `Db` / `Collection`),
 * built on mingo 7. It exists because no mongod can run on this machine or in CI. It is NOT MongoDB and
 * proves nothing about MongoDB itself: a real server stays the authority, and tests that matter run against
 * one too whenever `MONGODB_URI` is set (see mongo-target.ts).
 *
 * Usage:
 * ```ts
 * const mongo = createMongoDouble({ dbName: 'callplane' });
 * const repo = new MongoCampaignRepository(mongo.db);       // mongo.db is typed as the driver's Db
 * await mongo.fakeDb.collection('campaigns').countDocuments(); // the concrete double, for inspection
 * await mongo.close();
 * ```
 *
 * Covered (see mongo-double.test.ts): insertOne/insertMany, findOne, find cursors (sort/skip/limit/project/
 * map/toArray/next/hasNext/async iteration/close), countDocuments, estimatedDocumentCount, distinct,
 * updateOne/updateMany/replaceOne (upsert, $setOnInsert, mingo's update operators, pipeline updates),
 * findOneAndUpdate/Replace/Delete (driver 7 return shapes), deleteOne/deleteMany, aggregate, bulkWrite,
 * indexes (unique enforced: compound, sparse, partialFilterExpression; code 11000), Db collection management,
 * `command({ ping: 1 })`, sessions with roll-back-only transactions.
 * Not covered: change streams (`watch`), GridFS, `$out`/`$merge`, text/geo queries by index, TTL expiry,
 * collations, read/write concerns, isolation between concurrent transactions.
 */
import type { Db, MongoClient } from 'mongodb';
import { DoubleDb, DoubleMongoClient } from './db.js';

export interface MongoDouble {
  /** Always true: this is the in-process test double, not a MongoDB server. */
  readonly isTestDouble: true;
  /** The double's database, typed as the driver's `Db` so adapters take it unchanged. */
  readonly db: Db;
  /** The double's client, typed as the driver's `MongoClient` (db(name), close(), startSession()). */
  readonly client: MongoClient;
  /** The same database with the double's own type (for tests that inspect it). */
  readonly fakeDb: DoubleDb;
  /** The same client with the double's own type. */
  readonly fakeClient: DoubleMongoClient;
  /** Closes the client (data is kept until the object is dropped). */
  close(): Promise<void>;
}

export interface MongoDoubleOptions {
  /** Name of the default database (default 'test'). */
  dbName?: string;
}

/** Creates a fresh, empty in-process MongoDB double. Every call is independent (its own data). */
export function createMongoDouble(options: MongoDoubleOptions = {}): MongoDouble {
  const fakeClient = new DoubleMongoClient(options.dbName ?? 'test');
  const fakeDb = fakeClient.db();
  return {
    isTestDouble: true,
    db: fakeDb as unknown as Db,
    client: fakeClient as unknown as MongoClient,
    fakeDb,
    fakeClient,
    close: () => fakeClient.close(),
  };
}

/** Casts a double's database to the driver's `Db` type. */
export function asDriverDb(db: DoubleDb): Db {
  return db as unknown as Db;
}

/** True when `db` is the in-process double (every double object carries `isTestDouble: true`). */
export function isMongoDouble(db: unknown): boolean {
  return typeof db === 'object' && db !== null && (db as { isTestDouble?: unknown }).isTestDouble === true;
}

export { DoubleDb, DoubleMongoClient, DoubleClientSession } from './db.js';
export { DoubleCollection } from './collection.js';
export { DoubleFindCursor, DoubleAggregationCursor } from './cursor.js';
export { DoubleBulkWriteResult, DoubleWriteError, DUPLICATE_KEY } from './errors.js';
export type { DoubleIndexDescription } from './indexes.js';
