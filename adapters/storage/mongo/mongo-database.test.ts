import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MongoServerError } from 'mongodb';
import { describeEachMongoTarget, type MongoConnection } from '../../../test/fakes/mongo/mongo-target.js';
import { createMongoDouble } from '../../../test/fakes/mongo/mongo-double.js';
import { advanceCounter, createMongoStorage, databaseNameFromUri, ensureMongoSchema, isDuplicateKey, mongoStorage, nextId } from './mongo-database.js';
import { Indexes, mongoCollections } from './mongo-schema.js';
import { contractLabel } from './mongo-test-support.js';

describeEachMongoTarget('mongo-database', (target) => {
  describe(contractLabel(target), () => {
    let conn: MongoConnection;
    beforeEach(async () => {
      conn = await target.connect();
    });
    afterEach(async () => {
      await conn.close();
    });

    it('creates every collection and index once; a second run changes nothing', async () => {
      const created = await ensureMongoSchema(conn.db);
      expect(created.sort()).toEqual(mongoCollections.map((c) => c.name).sort());
      expect(await ensureMongoSchema(conn.db)).toEqual([]);
      for (const spec of mongoCollections) {
        const indexes = await conn.db.collection(spec.name).indexes();
        for (const i of spec.indexes) {
          expect(indexes.find((x) => x.name === i.name)).toMatchObject({ key: i.key, ...(i.unique ? { unique: true } : {}) });
        }
      }
    });

    it('enforces the unique indexes, recognisable by index name', async () => {
      await ensureMongoSchema(conn.db);
      const users = conn.db.collection('users');
      await users.insertOne({ _id: 1 as never, email: 'a@x', organizationId: 1 });
      const err = await users.insertOne({ _id: 2 as never, email: 'a@x', organizationId: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MongoServerError);
      expect(isDuplicateKey(err)).toBe(true);
      expect(isDuplicateKey(err, Indexes.usersEmail)).toBe(true);
      expect(isDuplicateKey(err, Indexes.sessionsDigest)).toBe(false);
    });

    it('hands out increasing integer ids per sequence, also under concurrency', async () => {
      await ensureMongoSchema(conn.db);
      expect(await nextId(conn.db, 'a')).toBe(1);
      expect(await nextId(conn.db, 'a')).toBe(2);
      expect(await nextId(conn.db, 'b')).toBe(1);
      const ids = await Promise.all(Array.from({ length: 20 }, () => nextId(conn.db, 'c')));
      expect([...ids].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    });

    it('advances a counter past copied-in ids without ever lowering it', async () => {
      await advanceCounter(conn.db, 'orgs', 41);
      expect(await nextId(conn.db, 'orgs')).toBe(42);
      await advanceCounter(conn.db, 'orgs', 10);
      expect(await nextId(conn.db, 'orgs')).toBe(43);
    });

    it('pings', async () => {
      expect(await mongoStorage(conn.client, conn.db).ping()).toBe(true);
    });
  });
});

describe('mongo-database helpers', () => {
  it('reads the database name from the URI path', () => {
    expect(databaseNameFromUri('mongodb://db:27017/callplane')).toBe('callplane');
    expect(databaseNameFromUri('mongodb+srv://u:p@cluster.example.net/prod?retryWrites=true')).toBe('prod');
    expect(databaseNameFromUri('mongodb://a:1,b:2/?replicaSet=rs')).toBe('');
    expect(databaseNameFromUri('mongodb://localhost')).toBe('');
  });

  it('builds a client without connecting and names the database after the URI (default callplane)', async () => {
    const s = createMongoStorage('mongodb://127.0.0.1:1/mine');
    expect(s.db.databaseName).toBe('mine');
    await s.close();
    await s.close(); // idempotent
    const d = createMongoStorage('mongodb://127.0.0.1:1');
    expect(d.db.databaseName).toBe('callplane');
    await d.close();
  });

  it('ping answers false instead of throwing when the server is gone', async () => {
    const mongo = createMongoDouble();
    const failing = { command: async () => { throw new Error('down'); } } as unknown as typeof mongo.db;
    expect(await mongoStorage(mongo.client, failing).ping()).toBe(false);
  });

  it('is not a duplicate key for other errors', () => {
    expect(isDuplicateKey(new Error('x'))).toBe(false);
    expect(isDuplicateKey(null)).toBe(false);
  });
});
