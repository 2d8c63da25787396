/**
 * Test support for the MongoDB adapters (imported by `*.mongo.test.ts` only): runs a shared contract suite
 * on every Mongo target of test/fakes/mongo/mongo-target.ts. The in-process double always runs, labelled as
 * what it is; a real server runs when `MONGODB_URI` is set, otherwise a visible skip names the reason.
 */
import type { Db } from 'mongodb';
import { describeEachMongoTarget, type MongoTarget } from '../../../test/fakes/mongo/mongo-target.js';
import { organizationToDocument, type OrganizationDocument } from './identity.mongo.js';
import { ensureMongoSchema, nextId } from './mongo-database.js';
import { Collections } from './mongo-schema.js';

export const DOUBLE_LABEL = 'mongo test double (mingo), not a real mongod';
export const REAL_LABEL = 'real mongod (MONGODB_URI)';

/** The label a contract suite shows for this target. */
export const contractLabel = (target: MongoTarget): string => (target.isDouble ? DOUBLE_LABEL : REAL_LABEL);

/**
 * `make(target)` for a `runXRepositoryContract(label, make)`: a fresh, empty database with the schema
 * (collections + indexes) created, the repository built on it, and a cleanup dropping it.
 */
export function mongoHarness<R>(target: MongoTarget, build: (db: Db) => R): () => Promise<{ repo: R; db: Db; cleanup(): Promise<void> }> {
  return async () => {
    const conn = await target.connect();
    try {
      await ensureMongoSchema(conn.db);
    } catch (e) {
      await conn.close();
      throw e;
    }
    return { repo: build(conn.db), db: conn.db, cleanup: () => conn.close() };
  };
}

/** Runs `suite(label, make)` on every Mongo target (see the file comment). */
export function runContractOnMongo<R>(
  title: string,
  suite: (label: string, make: () => Promise<{ repo: R; cleanup(): Promise<void> }>) => void,
  build: (db: Db) => R,
): void {
  describeEachMongoTarget(title, (target) => suite(contractLabel(target), mongoHarness(target, build)));
}

/** Test helper: an organization document (workflows, runs and the rest belong to one). */
export async function insertOrganization(db: Db, name: string): Promise<number> {
  const id = await nextId(db, Collections.organizations);
  await db.collection<OrganizationDocument>(Collections.organizations).insertOne(organizationToDocument({ id, name, createdAt: new Date(0) }));
  return id;
}
