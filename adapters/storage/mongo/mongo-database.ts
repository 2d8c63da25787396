/**
 * MongoDB storage foundation: connect, create collections and indexes (idempotent, safe when several
 * processes start at once), integer ids from the `counters` collection, duplicate-key detection, close.
 * Repository adapters (`*.mongo.ts`) take the driver's `Db`.
 *
 * The driver itself (about 7 MB of heap) is loaded by `mongoDriver()` when a client is first created, not when
 * this module is imported: the composition root imports the Mongo adapters whatever the storage, and a service
 * on the embedded SQLite default never loads it (docs/deployment.md, "Memory at start-up"). The adapters and
 * their document mappers use the driver's types only.
 */
import { createRequire } from 'node:module';
import type * as MongoDriverModule from 'mongodb';
import type { Collection, Db, Filter, MongoClient, UpdateFilter, WithId } from 'mongodb';
import { Collections, mongoCollections, type MongoCollectionSpec } from './mongo-schema.js';

export interface MongoStorage {
  client: MongoClient;
  db: Db;
  /**
   * Connects and creates the schema (collections + indexes), once: every call returns the same promise,
   * so a start hook and an early request can both wait for it. Rejects when the server is unreachable.
   */
  prepare(): Promise<void>;
  /** True when the server answers `ping`. Never throws. */
  ping(): Promise<boolean>;
  /** Closes the client. Idempotent. */
  close(): Promise<void>;
}

/** MongoDB's server codes the adapters react to. */
const DUPLICATE_KEY = 11000;
const NAMESPACE_EXISTS = 48;
/** A health probe answers within this, even with the server gone (instead of the server-selection timeout). */
const PING_TIMEOUT_MS = 2_000;

let driver: typeof MongoDriverModule | undefined;

/**
 * The `mongodb` package, loaded once (synchronously: the driver is CommonJS) on first use. Every value of the
 * driver this file needs (`MongoClient`, `MongoServerError`) comes from here, so `instanceof` checks see the same
 * classes as the client that raised the error. Throws an Error naming the package when it cannot be loaded.
 */
export function mongoDriver(): typeof MongoDriverModule {
  if (driver) return driver;
  try {
    driver = createRequire(import.meta.url)('mongodb') as typeof MongoDriverModule;
  } catch (err) {
    throw new Error(`MongoDB storage needs the mongodb package, which could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
  }
  return driver;
}

/**
 * Wraps an existing client and database (the composition root, the tests, the double) without connecting.
 * `close` closes the client.
 */
export function mongoStorage(client: MongoClient, db: Db): MongoStorage {
  let closed = false;
  let prepared: Promise<void> | undefined;
  return {
    client,
    db,
    prepare() {
      prepared ??= (async () => {
        await client.connect();
        await ensureMongoSchema(db);
      })();
      return prepared;
    },
    async ping() {
      try {
        const r = await db.command({ ping: 1 }, { timeoutMS: PING_TIMEOUT_MS });
        return r?.ok === 1;
      } catch {
        return false;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
}

/**
 * A client for `uri` whose database is the one named in the URI path (`mongodb://host/callplane`), or
 * `callplane` when the URI names none. Nothing is sent before the first operation (the driver connects
 * lazily), so this is synchronous and can run inside a container binding; call `connectMongo` to connect
 * and prepare the schema eagerly.
 */
export function createMongoStorage(uri: string, options: { dbName?: string; serverSelectionTimeoutMS?: number } = {}): MongoStorage {
  const client = new (mongoDriver().MongoClient)(uri, { serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000 });
  const db = client.db(options.dbName ?? (databaseNameFromUri(uri) || 'callplane'));
  return mongoStorage(client, db);
}

/** Connects, creates the schema (idempotent) and returns the storage. Closes the client if any step fails. */
export async function connectMongo(uri: string, options: { dbName?: string; serverSelectionTimeoutMS?: number } = {}): Promise<MongoStorage> {
  const storage = createMongoStorage(uri, options);
  try {
    await storage.prepare();
    return storage;
  } catch (e) {
    await storage.close();
    throw e;
  }
}

/** The database name in a MongoDB URI's path, or '' when absent. */
export function databaseNameFromUri(uri: string): string {
  const m = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]*)/.exec(uri);
  return m ? decodeURIComponent(m[1]!) : '';
}

/**
 * Creates every collection and index of `specs` that does not exist yet. Idempotent: existing collections
 * and identical indexes are left alone; a collection created meanwhile by another process is fine.
 * An existing index with the same name but other options fails loudly (the server's IndexOptionsConflict),
 * since silently keeping an old uniqueness rule would be worse. Returns the collections it created.
 */
export async function ensureMongoSchema(db: Db, specs: readonly MongoCollectionSpec[] = mongoCollections): Promise<string[]> {
  const existing = new Set((await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name as string));
  const created: string[] = [];
  for (const spec of specs) {
    if (!existing.has(spec.name)) {
      try {
        await db.createCollection(spec.name);
        created.push(spec.name);
      } catch (e) {
        if (!(e instanceof mongoDriver().MongoServerError && e.code === NAMESPACE_EXISTS)) throw e;
      }
    }
    if (spec.indexes.length > 0) {
      await db.collection(spec.name).createIndexes(spec.indexes.map((i) => ({
        name: i.name,
        key: i.key,
        ...(i.unique ? { unique: true } : {}),
        ...(i.partialFilterExpression ? { partialFilterExpression: i.partialFilterExpression } : {}),
      })));
    }
  }
  return created;
}

interface CounterDoc {
  _id: string;
  seq: number;
}

/**
 * The next integer id of `sequence` (1, 2, 3, ...), from one atomic `$inc` upsert on `counters`. Ids are
 * never reused; a failed insert leaves a gap, as SQLite's AUTOINCREMENT does. Two first-ever calls racing
 * may make one upsert fail with a duplicate `_id` on servers that do not retry it themselves: retried.
 */
export async function nextId(db: Db, sequence: string): Promise<number> {
  const counters = db.collection<CounterDoc>(Collections.counters);
  for (let attempt = 0; ; attempt++) {
    try {
      const doc = await counters.findOneAndUpdate({ _id: sequence }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after' });
      if (!doc) throw new Error(`counter ${sequence} returned no document`);
      return doc.seq;
    } catch (e) {
      if (attempt < 3 && isDuplicateKey(e)) continue;
      throw e;
    }
  }
}

/** Reserves `count` consecutive ids of `sequence` with one `$inc`; returns the first (count >= 1). */
export async function reserveIds(db: Db, sequence: string, count: number): Promise<number> {
  if (count < 1) throw new Error('reserveIds: count must be at least 1');
  const counters = db.collection<CounterDoc>(Collections.counters);
  for (let attempt = 0; ; attempt++) {
    try {
      const doc = await counters.findOneAndUpdate({ _id: sequence }, { $inc: { seq: count } }, { upsert: true, returnDocument: 'after' });
      if (!doc) throw new Error(`counter ${sequence} returned no document`);
      return doc.seq - count + 1;
    } catch (e) {
      if (attempt < 3 && isDuplicateKey(e)) continue;
      throw e;
    }
  }
}

/**
 * Makes sure the next id of `sequence` is above `atLeast` (used when records are copied in with their ids).
 * Idempotent; never lowers a counter.
 */
export async function advanceCounter(db: Db, sequence: string, atLeast: number): Promise<void> {
  const counters = db.collection<CounterDoc>(Collections.counters);
  for (let attempt = 0; ; attempt++) {
    try {
      await counters.updateOne({ _id: sequence }, { $max: { seq: atLeast } }, { upsert: true });
      return;
    } catch (e) {
      if (attempt < 3 && isDuplicateKey(e)) continue;
      throw e;
    }
  }
}

/** True when `e` is a duplicate-key error (code 11000), optionally on the index named `indexName`. */
export function isDuplicateKey(e: unknown, indexName?: string): boolean {
  const err = e as { code?: unknown; message?: unknown; errmsg?: unknown };
  if (!err || err.code !== DUPLICATE_KEY) return false;
  if (!indexName) return true;
  const text = `${String(err.errmsg ?? '')} ${String(err.message ?? '')}`;
  return text.includes(`index: ${indexName} `);
}

/** Dates as the driver returns them; null stays null. */
export const dateOrNull = (d: Date | null | undefined): Date | null => (d ? new Date(d) : null);

/**
 * Free-form JSON chosen by users (template variables, workflow definitions, gathered context, annotations,
 * log details) is stored as JSON text, like SQLite's TEXT columns: MongoDB field names must not start with `$`
 * (nor be matched as paths when they contain `.`), and user keys may do both. Nothing queries inside them.
 */
export const toJsonText = (value: unknown): string => JSON.stringify(value ?? null);
/** The parsed JSON text; `fallback` when the field is missing (a document written by hand or an older version). */
export function fromJsonText<T>(text: string | null | undefined, fallback: T): T {
  return text == null ? fallback : (JSON.parse(text) as T);
}

/**
 * Makes document `id` the only one within `scope` whose boolean `flag` is true (a default configuration, a
 * default caller id), without a transaction: a unique partial index on the scope (`{flag: true}`) guarantees
 * there are never two. The others are unset first, then this one is set; when a concurrent call set another
 * one in between, the set fails on that index and the two steps repeat. Between the steps the scope briefly
 * has no flagged document. Returns the document, or null when it is not in the scope. An already flagged
 * document is returned unchanged (idempotent).
 */
export async function flagOnly<D extends { _id: number; updatedAt: Date }>(
  collection: Collection<D>,
  scope: Filter<D>,
  id: number,
  flag: keyof D & string,
  indexName: string,
  now: Date,
): Promise<WithId<D> | null> {
  const self = { ...scope, _id: id } as Filter<D>;
  for (let attempt = 0; attempt < 20; attempt++) {
    const current = await collection.findOne(self);
    if (!current) return null;
    if ((current as Record<string, unknown>)[flag] === true) return current;
    await collection.updateMany(
      { ...scope, [flag]: true, _id: { $ne: id } } as Filter<D>,
      { $set: { [flag]: false, updatedAt: now } } as unknown as UpdateFilter<D>,
    );
    try {
      return await collection.findOneAndUpdate(self, { $set: { [flag]: true, updatedAt: now } } as unknown as UpdateFilter<D>, { returnDocument: 'after' });
    } catch (e) {
      if (!isDuplicateKey(e, indexName)) throw e;
    }
  }
  throw new Error(`could not set ${flag} on ${collection.collectionName} ${id}: too many concurrent changes`);
}
