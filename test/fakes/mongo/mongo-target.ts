/**
 * Where MongoDB-facing tests run: always on the in-process TEST DOUBLE (no mongod exists on this machine or in
 * CI), and also on a real server when the environment variable `MONGODB_URI` is set (e.g.
 * `MONGODB_URI=mongodb://localhost:27017 npm run test:jest -- mongo`). The real server is the authority; the
 * double only lets the code paths run everywhere.
 *
 * ```ts
 * describeEachMongoTarget('campaign repository', (target) => {
 *   let conn: MongoConnection;
 *   beforeAll(async () => { conn = await target.connect(); });
 *   afterAll(async () => { await conn.close(); });
 *   it('...', async () => { ... conn.db ... });
 * });
 * ```
 * Without `MONGODB_URI`, the real-server variant shows up in the test output as a skipped suite whose name
 * says why (`realMongoSkipReason`), never as a silent pass.
 */
import { describe, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import type { Db } from 'mongodb';
import { createMongoDouble } from './mongo-double.js';

export interface MongoConnection {
  /** The database to hand to adapters (the driver's Db, or the double cast to it). */
  db: Db;
  /** The client (the double's is cast to the driver's MongoClient). */
  client: MongoClient;
  /** Real server: drops the test database, then closes the client. Double: closes it. */
  close(): Promise<void>;
}

export interface MongoTarget {
  /** 'mongo double (in-process, mingo)' or 'real MongoDB (MONGODB_URI)'. */
  label: string;
  /** True for the in-process double. */
  isDouble: boolean;
  /** A fresh, empty database on this target (a new double, or a uniquely named database on the server). */
  connect(): Promise<MongoConnection>;
}

export const realMongoSkipReason = 'skipped: MONGODB_URI not set, no mongod on this machine';

/** The real server's URI, or undefined when `MONGODB_URI` is unset or empty. */
export function realMongoUri(): string | undefined {
  const uri = process.env.MONGODB_URI;
  return uri && uri.trim() !== '' ? uri.trim() : undefined;
}

export const doubleTarget: MongoTarget = {
  label: 'mongo double (in-process, mingo)',
  isDouble: true,
  async connect() {
    const mongo = createMongoDouble({ dbName: `callplane_test_${randomUUID().slice(0, 8)}` });
    return { db: mongo.db, client: mongo.client, close: () => mongo.close() };
  },
};

function realTarget(uri: string): MongoTarget {
  return {
    label: 'real MongoDB (MONGODB_URI)',
    isDouble: false,
    async connect() {
      const client = await MongoClient.connect(uri, { serverSelectionTimeoutMS: 5000 });
      const db = client.db(`callplane_test_${randomUUID().replace(/-/g, '').slice(0, 16)}`);
      return {
        db,
        client,
        async close() {
          try {
            await db.dropDatabase();
          } finally {
            await client.close();
          }
        },
      };
    },
  };
}

/** The double always; the real server too when `MONGODB_URI` is set. */
export function mongoTargets(): MongoTarget[] {
  const uri = realMongoUri();
  return uri ? [doubleTarget, realTarget(uri)] : [doubleTarget];
}

/**
 * Declares `describe(`${title} [${target.label}]`)` for every target. Without `MONGODB_URI`, also declares a
 * skipped `describe` named after the real-server variant and `realMongoSkipReason`, so the skip is visible.
 */
export function describeEachMongoTarget(title: string, body: (target: MongoTarget) => void): void {
  for (const target of mongoTargets()) {
    describe(`${title} [${target.label}]`, () => body(target));
  }
  if (!realMongoUri()) {
    describe.skip(`${title} [real MongoDB] (${realMongoSkipReason})`, () => {
      it(`runs against a real mongod only when MONGODB_URI is set (${realMongoSkipReason})`, () => undefined);
    });
  }
}
