/**
 * TEST DOUBLE of the MongoDB driver 7 `Db`, `MongoClient` and `ClientSession`, in process. NOT MongoDB: a real
 * mongod stays the authority (see mongo-target.ts).
 *
 * Sessions: `withTransaction` / `startTransaction`+`commitTransaction`/`abortTransaction` restore every
 * database of the client to its state at the start when the transaction aborts (or its callback throws). There
 * is NO isolation: other operations see uncommitted writes, and an abort also undoes writes made outside the
 * transaction meanwhile. Collection methods ignore the `session` option.
 */
import type { Document } from 'mongodb';
import { Query } from 'mingo';
import { DoubleCollection, type CollectionHost, type CollectionStore } from './collection.js';
import { invalidArgument, serverError } from './errors.js';
import { ID_INDEX } from './indexes.js';

function validateCollectionName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) throw invalidArgument('collection names must be non-empty strings');
  if (name.includes('$') && !name.startsWith('oplog.$main')) throw invalidArgument("collection names must not contain '$'");
  if (name.startsWith('.') || name.endsWith('.')) throw invalidArgument("collection names must not start or end with '.'");
}

type StoreSnapshot = Map<string, CollectionStore>;

export class DoubleDb implements CollectionHost {
  /** Marks this object as the in-process test double, never a real driver Db. */
  readonly isTestDouble = true as const;
  private stores = new Map<string, CollectionStore>();
  private handles = new Map<string, DoubleCollection>();

  constructor(readonly databaseName: string, readonly client: DoubleMongoClient) {}

  get namespace(): string {
    return this.databaseName;
  }

  get options(): Document {
    return { dbName: this.databaseName, testDouble: true };
  }

  getStore(name: string, create: boolean): CollectionStore | undefined {
    let store = this.stores.get(name);
    if (!store && create) {
      store = { docs: [], indexes: [{ ...ID_INDEX }] };
      this.stores.set(name, store);
    }
    return store;
  }

  dropStore(name: string): boolean {
    return this.stores.delete(name);
  }

  /** The collection handle (created on the server only when first written to, as with the driver). */
  collection<T extends Document = Document>(name: string, _options?: Document): DoubleCollection<T> {
    validateCollectionName(name);
    let handle = this.handles.get(name);
    if (!handle) {
      handle = new DoubleCollection(this, name);
      this.handles.set(name, handle);
    }
    return handle as unknown as DoubleCollection<T>;
  }

  /** Creates the collection; fails with code 48 NamespaceExists when it exists, like the server. */
  async createCollection<T extends Document = Document>(name: string, _options?: Document): Promise<DoubleCollection<T>> {
    validateCollectionName(name);
    if (this.stores.has(name)) {
      throw serverError(48, 'NamespaceExists', `Collection ${this.databaseName}.${name} already exists.`);
    }
    this.getStore(name, true);
    return this.collection<T>(name);
  }

  listCollections(filter: Document = {}, options: Document = {}): { toArray(): Promise<Document[]> } {
    return {
      toArray: async () => {
        const infos = [...this.stores.keys()].sort().map((name) => (options.nameOnly
          ? { name, type: 'collection' }
          : { name, type: 'collection', options: {}, info: { readOnly: false }, idIndex: { ...ID_INDEX } }));
        const query = new Query(filter);
        return infos.filter((i) => query.test(i));
      },
    };
  }

  async collections(): Promise<DoubleCollection[]> {
    return [...this.stores.keys()].sort().map((name) => this.collection(name));
  }

  /** Resolves false when the collection did not exist (the driver swallows NamespaceNotFound). */
  async dropCollection(name: string, _options?: Document): Promise<boolean> {
    return this.dropStore(name);
  }

  async dropDatabase(_options?: Document): Promise<boolean> {
    this.stores.clear();
    return true;
  }

  /** Supports ping, hello/isMaster, buildInfo, dropDatabase; any other command fails with code 59 CommandNotFound. */
  async command(command: Document, _options?: Document): Promise<Document> {
    const name = Object.keys(command)[0];
    switch (name) {
      case 'ping':
        return { ok: 1 };
      case 'hello':
      case 'isMaster':
      case 'ismaster':
        return { ok: 1, isWritablePrimary: true, ismaster: true, maxWireVersion: 25, testDouble: true };
      case 'buildInfo':
      case 'buildinfo':
        return { ok: 1, version: '0.0.0-test-double', versionArray: [0, 0, 0, 0], testDouble: true };
      case 'dropDatabase':
        this.stores.clear();
        return { ok: 1 };
      default:
        throw serverError(59, 'CommandNotFound', `no such command: '${name}' (Mongo test double)`);
    }
  }

  /** @internal used by sessions */
  snapshot(): StoreSnapshot {
    const copy: StoreSnapshot = new Map();
    for (const [name, store] of this.stores) copy.set(name, { docs: [...store.docs], indexes: [...store.indexes] });
    return copy;
  }

  /** @internal used by sessions */
  restore(snapshot: StoreSnapshot): void {
    this.stores = new Map();
    for (const [name, store] of snapshot) this.stores.set(name, { docs: [...store.docs], indexes: [...store.indexes] });
  }
}

/** A session whose transactions roll back on abort (no isolation, see the file comment). */
export class DoubleClientSession {
  readonly isTestDouble = true as const;
  private saved: Map<DoubleDb, StoreSnapshot> | undefined;
  hasEnded = false;

  constructor(private readonly client: DoubleMongoClient) {}

  inTransaction(): boolean {
    return this.saved !== undefined;
  }

  startTransaction(_options?: Document): void {
    if (this.saved) throw invalidArgument('Transaction already in progress');
    this.saved = new Map(this.client.databases().map((db) => [db, db.snapshot()]));
  }

  async commitTransaction(): Promise<void> {
    if (!this.saved) throw invalidArgument('No transaction started');
    this.saved = undefined;
  }

  async abortTransaction(): Promise<void> {
    if (!this.saved) throw invalidArgument('No transaction started');
    for (const db of this.client.databases()) db.restore(this.saved.get(db) ?? new Map());
    this.saved = undefined;
  }

  /** Runs `fn` in a transaction: committed when it resolves, rolled back (and rethrown) when it rejects. */
  async withTransaction<T>(fn: (session: DoubleClientSession) => Promise<T>, options?: Document): Promise<T> {
    this.startTransaction(options);
    try {
      const result = await fn(this);
      if (this.inTransaction()) await this.commitTransaction();
      return result;
    } catch (err) {
      if (this.inTransaction()) await this.abortTransaction();
      throw err;
    }
  }

  async endSession(): Promise<void> {
    if (this.inTransaction()) await this.abortTransaction();
    this.hasEnded = true;
  }
}

export class DoubleMongoClient {
  readonly isTestDouble = true as const;
  private dbs = new Map<string, DoubleDb>();
  private closed = false;

  constructor(private readonly defaultDbName = 'test') {}

  get isClosed(): boolean {
    return this.closed;
  }

  /** The database `name` (default: the client's default database). Same object for the same name. */
  db(name?: string): DoubleDb {
    const dbName = name ?? this.defaultDbName;
    let db = this.dbs.get(dbName);
    if (!db) {
      db = new DoubleDb(dbName, this);
      this.dbs.set(dbName, db);
    }
    return db;
  }

  /** @internal */
  databases(): DoubleDb[] {
    return [...this.dbs.values()];
  }

  async connect(): Promise<this> {
    this.closed = false;
    return this;
  }

  /** Marks the client closed. Data is kept (like a server outliving its clients); nothing else changes. */
  async close(_force?: boolean): Promise<void> {
    this.closed = true;
  }

  startSession(_options?: Document): DoubleClientSession {
    return new DoubleClientSession(this);
  }

  async withSession<T>(fn: (session: DoubleClientSession) => Promise<T>): Promise<T>;
  async withSession<T>(options: Document, fn: (session: DoubleClientSession) => Promise<T>): Promise<T>;
  async withSession<T>(a: Document | ((s: DoubleClientSession) => Promise<T>), b?: (s: DoubleClientSession) => Promise<T>): Promise<T> {
    const fn = typeof a === 'function' ? a : b!;
    const session = this.startSession();
    try {
      return await fn(session);
    } finally {
      await session.endSession();
    }
  }
}
