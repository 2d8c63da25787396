/**
 * TEST DOUBLE of the MongoDB driver 7 `Collection`, in process, built on mingo 7 (query, projection,
 * update operators, aggregation). It is NOT MongoDB: a real mongod stays the authority, and every behaviour
 * an adapter relies on must also be proven against one (see mongo-target.ts and MONGODB_URI).
 *
 * What the double adds to mingo: upserts (equality fields of the filter seed the new document, `$setOnInsert`
 * applies only on insert), findOneAndUpdate/Replace/Delete with the driver 7 return shapes, unique indexes
 * (compound, sparse, partialFilterExpression, multikey) raising the driver's `MongoServerError` code 11000,
 * `_id` generation with `ObjectId`, immutable `_id`, and BSON copies of every document in and out.
 *
 * Atomicity: every method does all its reading and writing synchronously before its promise settles (JS
 * runs one call at a time), so each operation is atomic with respect to every other one, as a single-document
 * operation is on the server. Multi-document operations (updateMany, insertMany, bulkWrite) are not
 * transactions: like the server, they stop at the first error and keep the writes done before it.
 *
 * Ignored options: session, writeConcern, readPreference, hint, collation, comment, maxTimeMS, bypassDocumentValidation.
 */
import { Aggregator, Query, update as mingoUpdate } from 'mingo';
import { ObjectId } from 'mongodb';
import type {
  DeleteResult, Document, InsertManyResult, InsertOneResult, ModifyResult, UpdateResult,
} from 'mongodb';
import {
  cloneDoc, cloneValue, hasOperatorKeys, isPlainObject, keyText, MISSING, normalizeSort, sameDocument, setPath,
  valuesAtPath,
} from './bson-utils.js';
import { DoubleAggregationCursor, DoubleFindCursor, type FindSpec } from './cursor.js';
import {
  bulkWriteError, DoubleBulkWriteResult, DoubleWriteError, duplicateKeyError, invalidArgument, serverError,
} from './errors.js';
import {
  buildIndexDescription, type DoubleIndexDescription, ID_INDEX, indexEntry, isUnique, sameIndex, storedIndexEntry,
} from './indexes.js';

/** The stored state of one collection. Stored documents are never mutated in place, only replaced. */
export interface CollectionStore {
  docs: Document[];
  indexes: DoubleIndexDescription[];
}

/** What a collection needs from its database. */
export interface CollectionHost {
  readonly databaseName: string;
  /** The store of `name`; created (collection implicitly created, as on the server) when `create` is true. */
  getStore(name: string, create: boolean): CollectionStore | undefined;
  /** Removes the store of `name`; false when there was none. */
  dropStore(name: string): boolean;
}

type AnyOptions = Document;

interface WriteOutcome {
  matched: number;
  modified: number;
  upsertedId: unknown;
}

function asError(err: unknown): never {
  if (err instanceof Error && err.name.startsWith('Mongo')) throw err;
  const message = err instanceof Error ? err.message : String(err);
  throw serverError(2, 'BadValue', message);
}

function compileQuery(filter: unknown): Query {
  if (filter === undefined || filter === null) return new Query({});
  if (typeof filter !== 'object' || Array.isArray(filter)) {
    throw invalidArgument('Query filter must be a plain object or ObjectId');
  }
  try {
    return new Query(filter as Document);
  } catch (err) {
    return asError(err);
  }
}

function projectDocs(docs: Document[], projection: Document | undefined): Document[] {
  if (!projection || Object.keys(projection).length === 0) return docs.map((d) => cloneDoc(d));
  try {
    return new Query({}).find<Document>(docs.map((d) => cloneDoc(d)), projection).all().map((d) => cloneDoc(d));
  } catch (err) {
    return asError(err);
  }
}

function projectOne(doc: Document | null, projection: Document | undefined): Document | null {
  return doc === null ? null : projectDocs([doc], projection)[0];
}

/** Fields of `filter` that an upsert copies into the new document (equality conditions, `$and` branches). */
function seedFromFilter(filter: Document | undefined): Document {
  const seed: Document = {};
  const visit = (f: Document) => {
    for (const [k, v] of Object.entries(f)) {
      if (k === '$and' && Array.isArray(v)) {
        for (const sub of v) if (isPlainObject(sub)) visit(sub);
      } else if (k.startsWith('$')) {
        continue;
      } else if (isPlainObject(v) && hasOperatorKeys(v)) {
        if ('$eq' in v) setPath(seed, k, cloneValue(v.$eq));
      } else if (!(v instanceof RegExp)) {
        setPath(seed, k, cloneValue(v));
      }
    }
  };
  if (filter) visit(filter);
  return seed;
}

function withIdFirst(doc: Document, id: unknown): Document {
  const { _id: _ignored, ...rest } = doc;
  return { _id: id, ...rest };
}

function validateUpdate(update: unknown): void {
  if (Array.isArray(update)) {
    if (update.length === 0) throw invalidArgument('Update pipeline must not be empty');
    return;
  }
  if (!isPlainObject(update)) throw invalidArgument('Update document requires atomic operators');
  const keys = Object.keys(update);
  if (keys.length === 0 || !keys[0].startsWith('$')) throw invalidArgument('Update document requires atomic operators');
  const bad = keys.find((k) => !k.startsWith('$'));
  if (bad) throw serverError(9, 'FailedToParse', `Unknown modifier: ${bad}. Expected a valid update modifier or pipeline-style update specified as an array`);
}

function validateReplacement(replacement: unknown): void {
  if (!isPlainObject(replacement)) throw invalidArgument('Replacement document must be an object');
  if (hasOperatorKeys(replacement)) throw invalidArgument('Replacement document must not contain atomic operators');
}

export class DoubleCollection<TSchema extends Document = Document> {
  /** Marks this object as the in-process test double, never a real driver collection. */
  readonly isTestDouble = true as const;

  constructor(private readonly host: CollectionHost, readonly collectionName: string) {}

  get dbName(): string {
    return this.host.databaseName;
  }

  get namespace(): string {
    return `${this.host.databaseName}.${this.collectionName}`;
  }

  // ---------------------------------------------------------------- internals

  private store(create: boolean): CollectionStore | undefined {
    return this.host.getStore(this.collectionName, create);
  }

  private docs(): Document[] {
    return this.store(false)?.docs ?? [];
  }

  /** Stored documents (references) matching `filter`, sorted, skipped and limited. */
  private select(filter: unknown, spec: { sort?: unknown; skip?: number; limit?: number } = {}): Document[] {
    const query = compileQuery(filter);
    try {
      let cursor = query.find<Document>(this.docs());
      const sort = normalizeSort(spec.sort);
      if (sort) cursor = cursor.sort(sort);
      if (spec.skip && spec.skip > 0) cursor = cursor.skip(spec.skip);
      if (spec.limit) cursor = cursor.limit(Math.abs(spec.limit));
      return cursor.all();
    } catch (err) {
      return asError(err);
    }
  }

  /**
   * The stored documents (references) a pipeline's leading `$match` keeps, or all of them. Only those are copied
   * into the pipeline, which still runs that `$match` itself: the result is the same, and a query on a few runs of a
   * collection of thousands no longer copies the thousands through BSON first.
   */
  private firstMatch(stages: Document[]): Document[] {
    const first = stages[0];
    if (!first || Object.keys(first).length !== 1 || !isPlainObject(first.$match)) return this.docs();
    let query: Query;
    try {
      query = new Query(first.$match as Document);
    } catch {
      return this.docs(); // the pipeline reports it
    }
    return this.docs().filter((d) => query.test(d));
  }

  private positionOf(doc: Document): number {
    return this.docs().indexOf(doc);
  }

  /** Throws the server's duplicate-key error if `candidate` (at `position`, or -1 when new) breaks a unique index. */
  private checkUnique(store: CollectionStore, candidate: Document, position: number): void {
    for (const index of store.indexes) {
      if (!isUnique(index)) continue;
      const entry = indexEntry(index, candidate);
      if (!entry) continue;
      const mine = new Set(entry.texts);
      for (let i = 0; i < store.docs.length; i++) {
        if (i === position) continue;
        const other = storedIndexEntry(index, store.docs[i]);
        if (other && other.texts.some((t) => mine.has(t))) {
          throw duplicateKeyError(this.namespace, index.name, index.key, entry.keyValue);
        }
      }
    }
  }

  private checkId(doc: Document): void {
    if (Array.isArray(doc._id)) throw serverError(53, 'InvalidIdField', `The '_id' value cannot be of type array`);
    if (doc._id instanceof RegExp) throw serverError(53, 'InvalidIdField', `The '_id' value cannot be of type regex`);
  }

  private insertPrepared(input: Document): unknown {
    if (!isPlainObject(input) && (input === null || typeof input !== 'object' || Array.isArray(input))) {
      throw invalidArgument('Document must be an object');
    }
    // The driver adds the generated _id to the caller's object; so does the double.
    if (input._id === undefined) input._id = new ObjectId();
    const doc = withIdFirst(cloneDoc(input), cloneValue(input._id));
    this.checkId(doc);
    const store = this.store(true)!;
    this.checkUnique(store, doc, -1);
    store.docs.push(doc);
    return input._id;
  }

  /** The document `original` becomes under `update`; `inserting` marks the insert half of an upsert. */
  private updatedDoc(original: Document, update: Document | Document[], filter: Document, arrayFilters: Document[] | undefined, inserting: boolean): Document {
    let result: Document;
    try {
      if (Array.isArray(update)) {
        result = new Aggregator(cloneValue(update)).run([cloneDoc(original)])[0] as Document;
      } else {
        const { $setOnInsert, ...ops } = update;
        const modifier = cloneValue(ops) as Document;
        if (inserting && $setOnInsert) modifier.$set = { ...(modifier.$set ?? {}), ...cloneValue($setOnInsert) };
        result = cloneDoc(original);
        if (Object.keys(modifier).length > 0) {
          // mingo refuses any write to _id (even the same value, even on insert); the double checks _id itself below.
          mingoUpdate(result, modifier, arrayFilters ? cloneValue(arrayFilters) : undefined, inserting ? undefined : filter, {
            cloneMode: 'none', queryOptions: { idKey: '\u0000no-id-protection' },
          });
        }
      }
    } catch (err) {
      return asError(err);
    }
    if (!inserting && keyText(result._id) !== keyText(original._id)) {
      throw serverError(66, 'ImmutableField', `Performing an update on the path '_id' would modify the immutable field '_id'`);
    }
    return cloneDoc(result);
  }

  private replacedDoc(original: Document, replacement: Document): Document {
    if (replacement._id !== undefined && keyText(replacement._id) !== keyText(original._id)) {
      throw serverError(66, 'ImmutableField',
        `After applying the update, the (immutable) field '_id' was found to have been altered`);
    }
    return withIdFirst(cloneDoc(replacement), cloneValue(original._id));
  }

  /** Replaces the stored document at `position` after checking unique indexes. Returns whether bytes changed. */
  private commit(position: number, next: Document): boolean {
    const store = this.store(true)!;
    const before = store.docs[position];
    if (sameDocument(before, next)) return false;
    this.checkId(next);
    this.checkUnique(store, next, position);
    store.docs[position] = next;
    return true;
  }

  private upsertInsert(filter: Document, update: Document | Document[] | null, replacement: Document | null, arrayFilters?: Document[]): Document {
    const seed = seedFromFilter(filter);
    let doc: Document;
    if (replacement) {
      doc = cloneDoc(replacement);
      if (seed._id !== undefined && doc._id === undefined) doc._id = seed._id;
    } else {
      doc = this.updatedDoc(seed, update!, filter, arrayFilters, true);
    }
    doc = withIdFirst(doc, doc._id === undefined ? new ObjectId() : doc._id);
    this.checkId(doc);
    const store = this.store(true)!;
    this.checkUnique(store, doc, -1);
    store.docs.push(doc);
    return doc;
  }

  private writeUpdate(filter: Document, update: Document | Document[], options: AnyOptions, many: boolean): WriteOutcome {
    validateUpdate(update);
    const targets = this.select(filter, many ? {} : { sort: options.sort, limit: 1 });
    if (targets.length === 0) {
      if (options.upsert) {
        const doc = this.upsertInsert(filter, update, null, options.arrayFilters);
        return { matched: 0, modified: 0, upsertedId: doc._id };
      }
      return { matched: 0, modified: 0, upsertedId: null };
    }
    let modified = 0;
    for (const target of targets) {
      const position = this.positionOf(target);
      const next = this.updatedDoc(target, update, filter, options.arrayFilters, false);
      if (this.commit(position, next)) modified++;
    }
    return { matched: targets.length, modified, upsertedId: null };
  }

  private writeReplace(filter: Document, replacement: Document, options: AnyOptions): WriteOutcome {
    validateReplacement(replacement);
    const [target] = this.select(filter, { sort: options.sort, limit: 1 });
    if (!target) {
      if (options.upsert) {
        const doc = this.upsertInsert(filter, null, replacement);
        return { matched: 0, modified: 0, upsertedId: doc._id };
      }
      return { matched: 0, modified: 0, upsertedId: null };
    }
    const modified = this.commit(this.positionOf(target), this.replacedDoc(target, replacement)) ? 1 : 0;
    return { matched: 1, modified, upsertedId: null };
  }

  private writeDelete(filter: Document, many: boolean, options: AnyOptions = {}): number {
    const targets = this.select(filter, many ? {} : { sort: options.sort, limit: 1 });
    const store = this.store(false);
    if (!store || targets.length === 0) return 0;
    const doomed = new Set(targets);
    store.docs = store.docs.filter((d) => !doomed.has(d));
    return targets.length;
  }

  private toUpdateResult(o: WriteOutcome): UpdateResult<TSchema> {
    return {
      acknowledged: true,
      matchedCount: o.matched,
      modifiedCount: o.modified,
      upsertedCount: o.upsertedId === null ? 0 : 1,
      upsertedId: (o.upsertedId === null ? null : cloneValue(o.upsertedId)) as UpdateResult<TSchema>['upsertedId'],
    };
  }

  // ---------------------------------------------------------------- inserts

  async insertOne(doc: Document, _options?: AnyOptions): Promise<InsertOneResult<TSchema>> {
    const id = this.insertPrepared(doc);
    return { acknowledged: true, insertedId: cloneValue(id) as InsertOneResult<TSchema>['insertedId'] };
  }

  async insertMany(docs: Document[], options: AnyOptions = {}): Promise<InsertManyResult<TSchema>> {
    if (!Array.isArray(docs)) throw invalidArgument('Argument "docs" must be an array of documents');
    const result = this.runBulk(docs.map((document) => ({ insertOne: { document } })), options);
    return { acknowledged: true, insertedCount: result.insertedCount, insertedIds: result.insertedIds as InsertManyResult<TSchema>['insertedIds'] };
  }

  // ---------------------------------------------------------------- reads

  find<T = TSchema>(filter: Document = {}, options: AnyOptions = {}): DoubleFindCursor<T> {
    compileQuery(filter);
    const spec: FindSpec = {
      sort: normalizeSort(options.sort),
      skip: options.skip,
      limit: options.limit,
      projection: options.projection,
    };
    return new DoubleFindCursor<T>(
      (f, s) => projectDocs(this.select(f, { sort: s.sort, skip: s.skip, limit: s.limit }), s.projection),
      filter,
      spec,
    );
  }

  async findOne<T = TSchema>(filter: Document = {}, options: AnyOptions = {}): Promise<T | null> {
    const [doc] = this.select(filter, { sort: options.sort, skip: options.skip, limit: 1 });
    return (doc ? projectOne(doc, options.projection) : null) as T | null;
  }

  async countDocuments(filter: Document = {}, options: AnyOptions = {}): Promise<number> {
    return this.select(filter, { skip: options.skip, limit: options.limit }).length;
  }

  async estimatedDocumentCount(_options?: AnyOptions): Promise<number> {
    return this.docs().length;
  }

  async distinct(key: string, filter: Document = {}, _options?: AnyOptions): Promise<any[]> {
    const seen = new Set<string>();
    const out: unknown[] = [];
    for (const doc of this.select(filter)) {
      for (const v of valuesAtPath(doc, key)) {
        if (v === MISSING || v === undefined) continue;
        const t = keyText(v);
        if (!seen.has(t)) {
          seen.add(t);
          out.push(cloneValue(v));
        }
      }
    }
    return out;
  }

  aggregate<T extends Document = Document>(pipeline: Document[] = [], _options?: AnyOptions): DoubleAggregationCursor<T> {
    if (!Array.isArray(pipeline)) throw invalidArgument('Aggregation pipeline must be an array');
    return new DoubleAggregationCursor<T>((stages) => {
      for (const stage of stages) {
        const op = Object.keys(stage)[0];
        if (op === '$out' || op === '$merge') {
          throw serverError(40324, 'Location40324', `Mongo test double: ${op} is not supported`);
        }
      }
      try {
        const aggregator = new Aggregator(cloneValue(stages), {
          collectionResolver: (name: string) => (this.host.getStore(name, false)?.docs ?? []).map((d) => cloneDoc(d)),
        });
        return (aggregator.run(this.firstMatch(stages).map((d) => cloneDoc(d))) as Document[]).map((d) => cloneDoc(d));
      } catch (err) {
        return asError(err);
      }
    }, [...pipeline]);
  }

  // ---------------------------------------------------------------- updates

  async updateOne(filter: Document, update: Document | Document[], options: AnyOptions = {}): Promise<UpdateResult<TSchema>> {
    return this.toUpdateResult(this.writeUpdate(filter, update, options, false));
  }

  async updateMany(filter: Document, update: Document | Document[], options: AnyOptions = {}): Promise<UpdateResult<TSchema>> {
    return this.toUpdateResult(this.writeUpdate(filter, update, options, true));
  }

  async replaceOne(filter: Document, replacement: Document, options: AnyOptions = {}): Promise<UpdateResult<TSchema>> {
    return this.toUpdateResult(this.writeReplace(filter, replacement, options));
  }

  /**
   * Driver 7 semantics: resolves to the document (before the update unless `returnDocument: 'after'`) or
   * null; with `includeResultMetadata: true`, to a `ModifyResult` `{ value, ok: 1, lastErrorObject }`.
   */
  async findOneAndUpdate(filter: Document, update: Document | Document[], options: AnyOptions = {}): Promise<any> {
    validateUpdate(update);
    return this.findOneAndModify(filter, options,
      () => this.upsertInsert(filter, update, null, options.arrayFilters),
      (target) => this.updatedDoc(target, update, filter, options.arrayFilters, false));
  }

  async findOneAndReplace(filter: Document, replacement: Document, options: AnyOptions = {}): Promise<any> {
    validateReplacement(replacement);
    return this.findOneAndModify(filter, options,
      () => this.upsertInsert(filter, null, replacement),
      (target) => this.replacedDoc(target, replacement));
  }

  /**
   * The shared part of findOneAndUpdate/Replace: the first match (by `sort`) becomes `next(target)`, or with
   * `upsert` and no match `insert()` runs; the result follows `returnDocument` and `includeResultMetadata`.
   */
  private findOneAndModify(filter: Document, options: AnyOptions, insert: () => Document, next: (target: Document) => Document): any {
    const [target] = this.select(filter, { sort: options.sort, limit: 1 });
    let value: Document | null;
    let lastErrorObject: Document;
    if (!target) {
      if (options.upsert) {
        const doc = insert();
        value = options.returnDocument === 'after' ? doc : null;
        lastErrorObject = { n: 1, updatedExisting: false, upserted: cloneValue(doc._id) };
      } else {
        value = null;
        lastErrorObject = { n: 0, updatedExisting: false };
      }
    } else {
      const replacement = next(target);
      const position = this.positionOf(target);
      this.commit(position, replacement);
      value = options.returnDocument === 'after' ? this.docs()[position] : target;
      lastErrorObject = { n: 1, updatedExisting: true };
    }
    return this.modifyResult(value, lastErrorObject, options);
  }

  async findOneAndDelete(filter: Document, options: AnyOptions = {}): Promise<any> {
    const [target] = this.select(filter, { sort: options.sort, limit: 1 });
    if (target) {
      const store = this.store(false)!;
      store.docs = store.docs.filter((d) => d !== target);
    }
    return this.modifyResult(target ?? null, { n: target ? 1 : 0 }, options);
  }

  private modifyResult(value: Document | null, lastErrorObject: Document, options: AnyOptions): Document | null | ModifyResult<TSchema> {
    const projected = projectOne(value, options.projection);
    if (options.includeResultMetadata) {
      return { value: projected as ModifyResult<TSchema>['value'], ok: 1, lastErrorObject };
    }
    return projected;
  }

  // ---------------------------------------------------------------- deletes

  async deleteOne(filter: Document = {}, options: AnyOptions = {}): Promise<DeleteResult> {
    return { acknowledged: true, deletedCount: this.writeDelete(filter, false, options) };
  }

  async deleteMany(filter: Document = {}, _options?: AnyOptions): Promise<DeleteResult> {
    return { acknowledged: true, deletedCount: this.writeDelete(filter, true) };
  }

  // ---------------------------------------------------------------- bulk

  /**
   * Operation kinds: insertOne, updateOne, updateMany, replaceOne, deleteOne, deleteMany. Resolves to an object
   * with the public surface of the driver's `BulkWriteResult`; write errors reject with the driver's
   * `MongoBulkWriteError` (ordered: stop at the first; `ordered: false`: run the rest, then reject).
   */
  async bulkWrite(operations: Document[], options: AnyOptions = {}): Promise<DoubleBulkWriteResult> {
    if (!Array.isArray(operations)) throw invalidArgument('operations must be an array of documents');
    return this.runBulk(operations, options);
  }

  private runBulk(operations: Document[], options: AnyOptions): DoubleBulkWriteResult {
    const ordered = options.ordered !== false;
    const raw = {
      insertedIds: {} as Record<number, unknown>, upsertedIds: {} as Record<number, unknown>,
      nInserted: 0, nMatched: 0, nModified: 0, nRemoved: 0, writeErrors: [] as DoubleWriteError[],
    };
    // Like the driver, every insert gets its _id before anything is sent.
    for (const op of operations) {
      if (!isPlainObject(op) || Object.keys(op).length !== 1) throw invalidArgument('Operation must be an object with an operation key');
      if ((op as Document).insertOne) {
        const insert = (op as Document).insertOne as Document;
        const document = (insert.document ?? insert) as Document;
        if (document._id === undefined) document._id = new ObjectId();
      }
    }
    operations.forEach((op, index) => {
      if (!ordered || raw.writeErrors.length === 0) {
        try {
          this.runBulkOp(op, index, raw);
        } catch (err) {
          const e = err as { code?: number; errmsg?: string; message?: string; keyPattern?: Document; keyValue?: Document };
          if (typeof e?.code !== 'number' || !(err instanceof Error) || !err.name.startsWith('MongoServer')) throw err;
          raw.writeErrors.push(new DoubleWriteError({
            code: e.code, index, errmsg: e.errmsg ?? e.message ?? '', op, keyPattern: e.keyPattern, keyValue: e.keyValue,
          }));
        }
      }
    });
    const result = new DoubleBulkWriteResult(raw);
    if (raw.writeErrors.length > 0) throw bulkWriteError(raw.writeErrors, result);
    return result;
  }

  private runBulkOp(op: Document, index: number, raw: {
    insertedIds: Record<number, unknown>; upsertedIds: Record<number, unknown>;
    nInserted: number; nMatched: number; nModified: number; nRemoved: number;
  }): void {
    const [kind] = Object.keys(op);
    const spec = op[kind] as Document;
    const account = (o: WriteOutcome) => {
      raw.nMatched += o.matched;
      raw.nModified += o.modified;
      if (o.upsertedId !== null) raw.upsertedIds[index] = cloneValue(o.upsertedId);
    };
    switch (kind) {
      case 'insertOne': {
        const id = this.insertPrepared(spec.document ?? spec);
        raw.insertedIds[index] = cloneValue(id);
        raw.nInserted++;
        return;
      }
      case 'updateOne':
      case 'updateMany':
        account(this.writeUpdate(spec.filter, spec.update, spec, kind === 'updateMany'));
        return;
      case 'replaceOne':
        account(this.writeReplace(spec.filter, spec.replacement, spec));
        return;
      case 'deleteOne':
      case 'deleteMany':
        raw.nRemoved += this.writeDelete(spec.filter, kind === 'deleteMany', spec);
        return;
      default:
        throw invalidArgument(`Mongo test double: unsupported bulkWrite operation ${kind}`);
    }
  }

  // ---------------------------------------------------------------- indexes

  /** Creates an index (unique ones are enforced; creating one over existing duplicates fails with 11000). */
  async createIndex(keySpec: unknown, options: AnyOptions = {}): Promise<string> {
    return this.addIndex(buildIndexDescription(keySpec, options));
  }

  async createIndexes(specs: Document[], _options?: AnyOptions): Promise<string[]> {
    const descs = specs.map((s) => buildIndexDescription(s.key, s));
    return descs.map((d) => this.addIndex(d));
  }

  private addIndex(desc: DoubleIndexDescription): string {
    const store = this.store(true)!;
    if (store.indexes.length === 0) store.indexes.push({ ...ID_INDEX });
    const byName = store.indexes.find((i) => i.name === desc.name);
    if (byName) {
      if (sameIndex(byName, desc)) return desc.name;
      if (keyText(byName.key) !== keyText(desc.key)) {
        throw serverError(86, 'IndexKeySpecsConflict', `An existing index has the same name as the requested index but different key: ${desc.name}`);
      }
      throw serverError(85, 'IndexOptionsConflict', `An existing index has the same name as the requested index but different options: ${desc.name}`);
    }
    const byKey = store.indexes.find((i) => keyText(i.key) === keyText(desc.key)
      && keyText(i.partialFilterExpression ?? null) === keyText(desc.partialFilterExpression ?? null));
    if (byKey) {
      if (sameIndex(byKey, desc)) {
        throw serverError(85, 'IndexOptionsConflict', `Index already exists with a different name: ${byKey.name}`);
      }
      throw serverError(85, 'IndexOptionsConflict', `An equivalent index already exists with the same name but different options. Requested index: ${desc.name}, existing index: ${byKey.name}`);
    }
    if (isUnique(desc)) {
      const seen = new Map<string, Document>();
      for (const doc of store.docs) {
        const entry = indexEntry(desc, doc);
        if (!entry) continue;
        for (const t of entry.texts) {
          if (seen.has(t)) throw duplicateKeyError(this.namespace, desc.name, desc.key, entry.keyValue);
        }
        for (const t of entry.texts) seen.set(t, doc);
      }
    }
    store.indexes.push(desc);
    return desc.name;
  }

  /** Index descriptions, `_id_` first, like `listIndexes`. A missing collection fails with code 26, as on the server. */
  async indexes(_options?: AnyOptions): Promise<DoubleIndexDescription[]> {
    const store = this.store(false);
    if (!store) throw serverError(26, 'NamespaceNotFound', `ns does not exist: ${this.namespace}`);
    const list = store.indexes.length ? store.indexes : [ID_INDEX];
    return list.map((i) => cloneDoc(i));
  }

  listIndexes(options?: AnyOptions): { toArray(): Promise<DoubleIndexDescription[]> } {
    return { toArray: () => this.indexes(options) };
  }

  async indexExists(names: string | string[]): Promise<boolean> {
    const wanted = Array.isArray(names) ? names : [names];
    const have = new Set((this.store(false)?.indexes ?? []).map((i) => i.name));
    return wanted.every((n) => have.has(n));
  }

  /** `{ name: [[field, dir], ...] }`, the driver's default indexInformation shape. */
  async indexInformation(): Promise<Record<string, Array<[string, number | string]>>> {
    const out: Record<string, Array<[string, number | string]>> = {};
    for (const i of await this.indexes()) out[i.name] = Object.entries(i.key);
    return out;
  }

  async dropIndex(name: string, _options?: AnyOptions): Promise<Document> {
    const store = this.store(false);
    if (!store) throw serverError(26, 'NamespaceNotFound', `ns not found ${this.namespace}`);
    if (name === '_id_') throw serverError(72, 'InvalidOptions', 'cannot drop _id index');
    const idx = store.indexes.findIndex((i) => i.name === name);
    if (idx < 0) throw serverError(27, 'IndexNotFound', `index not found with name [${name}]`);
    store.indexes.splice(idx, 1);
    return { nIndexesWas: store.indexes.length + 1, ok: 1 };
  }

  async dropIndexes(_options?: AnyOptions): Promise<boolean> {
    const store = this.store(false);
    if (store) store.indexes = store.indexes.filter((i) => i.name === '_id_');
    return true;
  }

  // ---------------------------------------------------------------- collection

  /** Change streams need a replica set; the double has none and says so instead of never emitting. */
  watch(): never {
    throw serverError(40573, 'Location40573', 'Mongo test double: change streams (watch) are not supported');
  }

  /** Drops this collection (documents and indexes). Resolves false when it did not exist, like the driver. */
  async drop(_options?: AnyOptions): Promise<boolean> {
    return this.host.dropStore(this.collectionName);
  }
}
