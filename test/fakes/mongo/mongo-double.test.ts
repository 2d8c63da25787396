/**
 * Tests of the in-process MongoDB TEST DOUBLE (not of MongoDB). Each expectation states what the real driver 7
 * against mongod does; where the double departs from it, the double is wrong.
 */
import { describe, it, expect, beforeEach } from '@jest/globals';
import { MongoBulkWriteError, MongoInvalidArgumentError, MongoServerError, ObjectId } from 'mongodb';
import type { Db, Document } from 'mongodb';
import { createMongoDouble, isMongoDouble, type MongoDouble } from './mongo-double.js';

let mongo: MongoDouble;
let db: Db;
/** Loose schema: tests use string _ids and arbitrary fields. */
type AnyDoc = { _id?: ObjectId | string; [key: string]: any };
const coll = (name: string) => db.collection<AnyDoc>(name);

beforeEach(() => {
  mongo = createMongoDouble({ dbName: 'unit' });
  db = mongo.db;
});

async function expectDuplicate(p: Promise<unknown>, index?: string): Promise<MongoServerError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(MongoServerError);
  const e = err as MongoServerError;
  expect(e.code).toBe(11000);
  expect(e.message).toMatch(/^E11000 duplicate key error collection: unit\./);
  if (index) expect(e.message).toContain(`index: ${index} `);
  return e;
}

describe('createMongoDouble', () => {
  it('is labelled as a test double and answers ping', async () => {
    expect(mongo.isTestDouble).toBe(true);
    expect(isMongoDouble(db)).toBe(true);
    expect(db.databaseName).toBe('unit');
    await expect(db.command({ ping: 1 })).resolves.toEqual({ ok: 1 });
    await expect(db.command({ serverStatus: 1 })).rejects.toMatchObject({ code: 59 });
    expect(mongo.client.db('unit')).toBe(db);
    expect(mongo.client.db('other')).not.toBe(db);
    await mongo.close();
  });
});

describe('inserts and _id', () => {
  it('insertOne generates an ObjectId, adds it to the caller object and stores a BSON copy', async () => {
    const input: Document = { name: 'a', at: new Date(1_700_000_000_000), nested: { n: 1 }, u: undefined };
    const res = await coll('c').insertOne(input);
    expect(res.acknowledged).toBe(true);
    expect(res.insertedId).toBeInstanceOf(ObjectId);
    expect(input._id).toBeInstanceOf(ObjectId);
    expect(input._id.equals(res.insertedId)).toBe(true);
    input.nested.n = 99; // the stored copy must not change
    const stored = await coll('c').findOne({ _id: new ObjectId(String(res.insertedId)) });
    expect(stored).not.toBeNull();
    expect(Object.keys(stored!)[0]).toBe('_id');
    expect(stored!.at).toBeInstanceOf(Date);
    expect(stored!.at.getTime()).toBe(1_700_000_000_000);
    expect(stored!.nested).toEqual({ n: 1 });
    expect(stored!.u).toBeNull(); // driver default ignoreUndefined: false
    stored!.nested.n = 5; // mutating a read copy does not touch the store
    expect((await coll('c').findOne({}))!.nested).toEqual({ n: 1 });
  });

  it('keeps a caller-chosen _id and rejects a duplicate _id with 11000', async () => {
    await coll('c').insertOne({ _id: 'k1', v: 1 });
    const err = await expectDuplicate(coll('c').insertOne({ _id: 'k1', v: 2 }), '_id_');
    expect(err.keyValue).toEqual({ _id: 'k1' });
    expect(await coll('c').countDocuments()).toBe(1);
  });

  it('insertMany returns insertedIds by index; ordered stops at the first duplicate, unordered continues', async () => {
    const c = coll('m');
    const res = await c.insertMany([{ a: 1 }, { a: 2 }]);
    expect(res.insertedCount).toBe(2);
    expect(res.insertedIds[0]).toBeInstanceOf(ObjectId);
    expect(res.insertedIds[1]).toBeInstanceOf(ObjectId);

    await c.createIndex({ a: 1 }, { unique: true });
    const ordered = await c.insertMany([{ a: 3 }, { a: 1 }, { a: 4 }]).catch((e: unknown) => e);
    expect(ordered).toBeInstanceOf(MongoBulkWriteError);
    expect((ordered as MongoBulkWriteError).code).toBe(11000);
    expect((ordered as MongoBulkWriteError).writeErrors).toHaveLength(1);
    expect((ordered as MongoBulkWriteError).insertedCount).toBe(1);
    expect(await c.distinct('a')).toEqual([1, 2, 3]);

    const unordered = await c.insertMany([{ a: 5 }, { a: 1 }, { a: 6 }], { ordered: false }).catch((e: unknown) => e);
    expect(unordered).toBeInstanceOf(MongoBulkWriteError);
    expect((unordered as MongoBulkWriteError).insertedCount).toBe(2);
    expect((await c.distinct('a')).sort()).toEqual([1, 2, 3, 5, 6]);
  });
});

describe('reads', () => {
  beforeEach(async () => {
    await coll('p').insertMany([
      { n: 3, name: 'c', tags: ['x', 'y'], at: new Date(3000) },
      { n: 1, name: 'a', tags: ['y'], at: new Date(1000) },
      { n: 2, name: 'b', tags: [], at: new Date(2000) },
      { n: 4, name: 'd', at: new Date(4000) },
    ]);
  });

  it('findOne with filter, sort, projection; null when nothing matches', async () => {
    const c = coll('p');
    expect(await c.findOne({ n: { $gt: 10 } })).toBeNull();
    const top = await c.findOne({ tags: 'y' }, { sort: { n: -1 }, projection: { _id: 0, name: 1 } });
    expect(top).toEqual({ name: 'c' });
    const first = await c.findOne({}, { sort: { at: 'asc' } });
    expect(first!.name).toBe('a');
  });

  it('find cursor: sort before skip/limit whatever the call order, project, map, toArray', async () => {
    const c = coll('p');
    const names = await c.find({}).limit(2).skip(1).sort({ n: 'desc' }).project<{ name: string }>({ name: 1, _id: 0 })
      .map((d) => d.name.toUpperCase()).toArray();
    expect(names).toEqual(['C', 'B']);
    expect(await c.find({}, { sort: [['n', -1]], limit: 1 }).toArray()).toMatchObject([{ n: 4 }]);
    expect((await c.find({}).sort('n', -1).toArray()).map((d) => d.n)).toEqual([4, 3, 2, 1]);
    expect(await c.find({ n: { $gt: 1 } }).skip(1).count()).toBe(2);
    expect((await c.find({ at: { $gte: new Date(2000) } }).sort({ at: 1 }).toArray()).map((d) => d.n)).toEqual([2, 3, 4]);
  });

  it('find cursor: next/hasNext, async iteration, close, and no builder calls after reading began', async () => {
    const c = coll('p');
    const cursor = c.find({}).sort({ n: 1 });
    expect(await cursor.hasNext()).toBe(true);
    expect((await cursor.next())!.n).toBe(1);
    expect(() => cursor.limit(1)).toThrow(/already initialized/);
    const rest: number[] = [];
    for await (const doc of cursor) rest.push(doc.n);
    expect(rest).toEqual([2, 3, 4]);
    expect(await cursor.next()).toBeNull();
    expect(await cursor.hasNext()).toBe(false);

    const closed = c.find({});
    await closed.close();
    expect(await closed.toArray()).toEqual([]);
  });

  it('a cursor reads the data as it is at its first read', async () => {
    const c = coll('p');
    const cursor = c.find({ n: { $gte: 4 } });
    await c.insertOne({ n: 5 });
    expect((await cursor.toArray()).map((d) => d.n)).toEqual([4, 5]);
  });

  it('countDocuments, estimatedDocumentCount, distinct (arrays flattened)', async () => {
    const c = coll('p');
    expect(await c.countDocuments({ n: { $lte: 2 } })).toBe(2);
    expect(await c.countDocuments({}, { skip: 1, limit: 2 })).toBe(2);
    expect(await c.estimatedDocumentCount()).toBe(4);
    expect(await c.distinct('tags')).toEqual(['x', 'y']);
    expect(await c.distinct('name', { n: { $gt: 2 } })).toEqual(['c', 'd']);
    expect(await coll('nothing').countDocuments()).toBe(0);
  });

  it('aggregate: $match/$group/$sort/$skip/$limit/$project/$count/$facet/$lookup', async () => {
    const c = coll('p');
    const grouped = await c.aggregate([
      { $match: { n: { $gte: 2 } } },
      { $group: { _id: { $gt: ['$n', 2] }, total: { $sum: '$n' } } },
      { $sort: { total: -1 } },
    ]).toArray();
    expect(grouped).toEqual([{ _id: true, total: 7 }, { _id: false, total: 2 }]);

    const faceted = await c.aggregate([
      { $sort: { n: 1 } },
      { $facet: { page: [{ $skip: 1 }, { $limit: 2 }, { $project: { _id: 0, n: 1 } }], total: [{ $count: 'count' }] } },
    ]).toArray();
    expect(faceted).toEqual([{ page: [{ n: 2 }, { n: 3 }], total: [{ count: 4 }] }]);

    await coll('owners').insertOne({ name: 'a', owner: 'ann' });
    const joined = await c.aggregate([
      { $match: { name: 'a' } },
      { $lookup: { from: 'owners', localField: 'name', foreignField: 'name', as: 'o' } },
      { $project: { _id: 0, owner: { $arrayElemAt: ['$o.owner', 0] } } },
    ]).toArray();
    expect(joined).toEqual([{ owner: 'ann' }]);

    const cursor = c.aggregate<{ n: number }>([{ $sort: { n: 1 } }]);
    expect((await cursor.next())!.n).toBe(1);
    const seen: number[] = [];
    for await (const d of cursor) seen.push(d.n);
    expect(seen).toEqual([2, 3, 4]);
    await expect(c.aggregate([{ $out: 'x' }]).toArray()).rejects.toThrow(/not supported/);
  });
});

describe('updates', () => {
  it('updateOne applies $set/$inc/$unset/$push/$addToSet/$min/$max/$currentDate and reports counts', async () => {
    const c = coll('u');
    const { insertedId } = await c.insertOne({ k: 1, n: 5, gone: true, list: [1], set: ['a'], lo: 10, hi: 10 });
    const before = Date.now();
    const res = await c.updateOne({ _id: insertedId }, {
      $set: { s: 'x', 'deep.path': 1 }, $inc: { n: 2 }, $unset: { gone: true }, $push: { list: { $each: [2, 3] } } as Document,
      $addToSet: { set: { $each: ['a', 'b'] } }, $min: { lo: 3 }, $max: { hi: 30 }, $currentDate: { touched: true },
    });
    expect(res).toEqual({ acknowledged: true, matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null });
    const doc = (await c.findOne({ _id: insertedId }))!;
    expect(doc).toMatchObject({ k: 1, n: 7, s: 'x', deep: { path: 1 }, list: [1, 2, 3], set: ['a', 'b'], lo: 3, hi: 30 });
    expect(doc).not.toHaveProperty('gone');
    expect(doc.touched).toBeInstanceOf(Date);
    expect(doc.touched.getTime()).toBeGreaterThanOrEqual(before - 1000);

    const same = await c.updateOne({ k: 1 }, { $set: { s: 'x' } });
    expect(same).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
    const none = await c.updateOne({ k: 2 }, { $set: { s: 'y' } });
    expect(none).toMatchObject({ matchedCount: 0, modifiedCount: 0, upsertedId: null });
  });

  it('updateOne with sort picks the first in sort order; updateMany updates all matches', async () => {
    const c = coll('u');
    await c.insertMany([{ g: 1, p: 1 }, { g: 1, p: 3 }, { g: 1, p: 2 }, { g: 2, p: 9 }]);
    await c.updateOne({ g: 1 }, { $set: { top: true } }, { sort: { p: 'desc' } });
    expect((await c.findOne({ top: true }))!.p).toBe(3);
    const many = await c.updateMany({ g: 1 }, { $inc: { p: 10 } });
    expect(many).toMatchObject({ matchedCount: 3, modifiedCount: 3, upsertedCount: 0 });
    expect((await c.find({ g: 1 }).sort({ p: 1 }).toArray()).map((d) => d.p)).toEqual([11, 12, 13]);
  });

  it('upsert seeds from filter equalities, applies $setOnInsert only on insert, returns upsertedId', async () => {
    const c = coll('u');
    const first = await c.updateOne(
      { key: 'k', kind: { $eq: 'x' }, n: { $gt: 0 } },
      { $set: { v: 1 }, $setOnInsert: { createdAt: new Date(5) } },
      { upsert: true },
    );
    expect(first.upsertedCount).toBe(1);
    expect(first.upsertedId).toBeInstanceOf(ObjectId);
    const doc = (await c.findOne({ key: 'k' }))!;
    expect(doc).toEqual({ _id: first.upsertedId, key: 'k', kind: 'x', v: 1, createdAt: new Date(5) });

    const second = await c.updateOne({ key: 'k' }, { $set: { v: 2 }, $setOnInsert: { createdAt: new Date(9) } }, { upsert: true });
    expect(second).toMatchObject({ matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null });
    expect((await c.findOne({ key: 'k' }))!).toMatchObject({ v: 2, createdAt: new Date(5) });

    const byId = await c.updateOne({ _id: 'custom' }, { $inc: { n: 1 } }, { upsert: true });
    expect(byId.upsertedId).toBe('custom');
  });

  it('rejects updates without operators, replacements with operators, and changing _id', async () => {
    const c = coll('u');
    await c.insertOne({ _id: 'a', v: 1 });
    await expect(c.updateOne({}, { v: 2 } as Document)).rejects.toBeInstanceOf(MongoInvalidArgumentError);
    await expect(c.replaceOne({}, { $set: { v: 2 } })).rejects.toBeInstanceOf(MongoInvalidArgumentError);
    await expect(c.updateOne({}, { $set: { _id: 'b' } })).rejects.toMatchObject({ code: 66 });
    await expect(c.updateOne({}, { $bogus: { v: 1 } } as Document)).rejects.toBeInstanceOf(MongoServerError);
    expect(await c.findOne({})).toEqual({ _id: 'a', v: 1 });
    // setting _id to its current value is allowed, as on the server
    await expect(c.updateOne({ _id: 'a' }, { $set: { _id: 'a', v: 3 } })).resolves.toMatchObject({ modifiedCount: 1 });
    expect(() => c.watch()).toThrow(/not supported/);
  });

  it('pipeline updates and arrayFilters/positional updates go through mingo', async () => {
    const c = coll('u');
    await c.insertOne({ _id: 'p', a: 2, items: [{ k: 1, v: 0 }, { k: 2, v: 0 }] });
    await c.updateOne({ _id: 'p' }, [{ $set: { b: { $multiply: ['$a', 10] } } }]);
    await c.updateOne({ _id: 'p', 'items.k': 2 }, { $set: { 'items.$.v': 7 } });
    await c.updateOne({ _id: 'p' }, { $set: { 'items.$[e].w': true } }, { arrayFilters: [{ 'e.k': 1 }] });
    expect(await c.findOne({ _id: 'p' })).toEqual({ _id: 'p', a: 2, b: 20, items: [{ k: 1, v: 0, w: true }, { k: 2, v: 7 }] });
  });

  it('replaceOne keeps _id, upserts with the filter _id', async () => {
    const c = coll('u');
    const { insertedId } = await c.insertOne({ a: 1, b: 2 });
    const res = await c.replaceOne({ a: 1 }, { c: 3 });
    expect(res).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
    expect(await c.findOne({})).toEqual({ _id: insertedId, c: 3 });
    const up = await c.replaceOne({ _id: 'r', ignored: 1 }, { d: 4 }, { upsert: true });
    expect(up.upsertedId).toBe('r');
    expect(await c.findOne({ _id: 'r' })).toEqual({ _id: 'r', d: 4 });
  });
});

describe('findOneAnd*', () => {
  beforeEach(async () => {
    await coll('f').insertMany([{ q: 1, pr: 1, v: 'a' }, { q: 1, pr: 5, v: 'b' }, { q: 2, pr: 3, v: 'c' }]);
  });

  it('findOneAndUpdate returns the document before by default, after on request, null when none (driver 7)', async () => {
    const c = coll('f');
    const before = await c.findOneAndUpdate({ q: 1 }, { $set: { v: 'B' } }, { sort: { pr: 'desc' } });
    expect(before).toMatchObject({ pr: 5, v: 'b' });
    const after = await c.findOneAndUpdate({ q: 1 }, { $inc: { pr: 1 } }, { sort: { pr: -1 }, returnDocument: 'after', projection: { _id: 0, pr: 1, v: 1 } });
    expect(after).toEqual({ pr: 6, v: 'B' });
    expect(await c.findOneAndUpdate({ q: 99 }, { $set: { v: 'z' } })).toBeNull();
  });

  it('findOneAndUpdate upsert, and ModifyResult when includeResultMetadata', async () => {
    const c = coll('f');
    const up = await c.findOneAndUpdate({ name: 'single', type: 'single' }, { $set: { x: 1 }, $setOnInsert: { first: true } },
      { upsert: true, returnDocument: 'after' });
    expect(up).toMatchObject({ name: 'single', type: 'single', x: 1, first: true });
    expect(up!._id).toBeInstanceOf(ObjectId);
    const again = await c.findOneAndUpdate({ name: 'single', type: 'single' }, { $set: { x: 2 }, $setOnInsert: { first: false } },
      { upsert: true, returnDocument: 'after' });
    expect(again).toMatchObject({ x: 2, first: true });
    expect(String(again!._id)).toBe(String(up!._id));
    expect(await c.countDocuments({ name: 'single' })).toBe(1);

    const upBefore = await c.findOneAndUpdate({ name: 'other' }, { $set: { x: 1 } }, { upsert: true, includeResultMetadata: true });
    expect(upBefore.ok).toBe(1);
    expect(upBefore.value).toBeNull();
    expect(upBefore.lastErrorObject).toMatchObject({ n: 1, updatedExisting: false });
    expect(upBefore.lastErrorObject!.upserted).toBeInstanceOf(ObjectId);

    const meta = await c.findOneAndUpdate({ q: 2 }, { $set: { v: 'C' } }, { includeResultMetadata: true, returnDocument: 'after' });
    expect(meta).toMatchObject({ ok: 1, value: { q: 2, v: 'C' }, lastErrorObject: { n: 1, updatedExisting: true } });
    const miss = await c.findOneAndUpdate({ q: 42 }, { $set: { v: 1 } }, { includeResultMetadata: true });
    expect(miss).toEqual({ ok: 1, value: null, lastErrorObject: { n: 0, updatedExisting: false } });
  });

  it('findOneAndReplace and findOneAndDelete', async () => {
    const c = coll('f');
    const replaced = await c.findOneAndReplace({ q: 2 }, { q: 2, v: 'new' }, { returnDocument: 'after' });
    expect(replaced).toMatchObject({ q: 2, v: 'new' });
    expect(replaced).not.toHaveProperty('pr');
    const deleted = await c.findOneAndDelete({ q: 1 }, { sort: { pr: 1 } });
    expect(deleted).toMatchObject({ pr: 1, v: 'a' });
    expect(await c.countDocuments()).toBe(2);
    expect(await c.findOneAndDelete({ q: 99 })).toBeNull();
    const meta = await c.findOneAndDelete({ q: 2 }, { includeResultMetadata: true });
    expect(meta).toMatchObject({ ok: 1, value: { v: 'new' }, lastErrorObject: { n: 1 } });
  });

  it('concurrent findOneAndUpdate claims never hand out the same document twice', async () => {
    const c = coll('claims');
    await c.insertMany(Array.from({ length: 20 }, (_, i) => ({ i, lockedAt: null })));
    const claims = await Promise.all(Array.from({ length: 25 }, () =>
      c.findOneAndUpdate({ lockedAt: null }, { $set: { lockedAt: new Date() } }, { sort: { i: 1 }, returnDocument: 'after' })));
    const got = claims.filter((d) => d !== null).map((d) => d!.i);
    expect(got).toHaveLength(20);
    expect(new Set(got).size).toBe(20);
  });
});

describe('deletes', () => {
  it('deleteOne removes the first match, deleteMany all matches', async () => {
    const c = coll('d');
    await c.insertMany([{ a: 1 }, { a: 1 }, { a: 2 }]);
    expect(await c.deleteOne({ a: 1 })).toEqual({ acknowledged: true, deletedCount: 1 });
    expect(await c.deleteMany({ a: { $in: [1, 2] } })).toEqual({ acknowledged: true, deletedCount: 2 });
    expect(await c.deleteOne({ a: 1 })).toEqual({ acknowledged: true, deletedCount: 0 });
  });
});

describe('bulkWrite', () => {
  it('runs every op kind and reports the counts', async () => {
    const c = coll('b');
    await c.insertMany([{ k: 'u1', v: 0 }, { k: 'u2', v: 0 }, { k: 'del', v: 0 }, { k: 'delmany', v: 0 }, { k: 'delmany', v: 1 }]);
    const res = await c.bulkWrite([
      { insertOne: { document: { k: 'new' } } },
      { updateOne: { filter: { k: 'u1' }, update: { $set: { v: 1 } } } },
      { updateMany: { filter: { k: { $in: ['u1', 'u2'] } }, update: { $inc: { v: 1 } } } },
      { updateOne: { filter: { k: 'ups' }, update: { $set: { v: 1 } }, upsert: true } },
      { replaceOne: { filter: { k: 'u2' }, replacement: { k: 'u2', replaced: true } } },
      { deleteOne: { filter: { k: 'del' } } },
      { deleteMany: { filter: { k: 'delmany' } } },
    ]);
    expect(res.insertedCount).toBe(1);
    expect(res.insertedIds[0]).toBeInstanceOf(ObjectId);
    expect(res.matchedCount).toBe(4);
    expect(res.modifiedCount).toBe(4);
    expect(res.upsertedCount).toBe(1);
    expect(res.upsertedIds[3]).toBeInstanceOf(ObjectId);
    expect(res.deletedCount).toBe(3);
    expect(res.isOk()).toBe(true);
    expect((await c.find({}, { projection: { _id: 0 } }).sort({ k: 1 }).toArray())).toEqual([
      { k: 'new' }, { k: 'u1', v: 2 }, { k: 'u2', replaced: true }, { k: 'ups', v: 1 },
    ]);
  });

  it('a duplicate key rejects with MongoBulkWriteError carrying the write errors', async () => {
    const c = coll('b');
    await c.createIndex({ k: 1 }, { unique: true });
    const err = await c.bulkWrite([
      { insertOne: { document: { k: 1 } } },
      { insertOne: { document: { k: 1 } } },
      { insertOne: { document: { k: 2 } } },
    ]).catch((e: unknown) => e) as MongoBulkWriteError;
    expect(err).toBeInstanceOf(MongoBulkWriteError);
    expect(err.code).toBe(11000);
    expect(Array.isArray(err.writeErrors) ? err.writeErrors[0].index : -1).toBe(1);
    expect(await c.countDocuments()).toBe(1);
  });
});

describe('indexes', () => {
  it('createIndex returns the default name; indexes() lists _id_ first; dropIndex removes', async () => {
    const c = coll('i');
    expect(await c.createIndex({ a: 1, b: -1 })).toBe('a_1_b_-1');
    expect(await c.createIndex({ a: 1, b: -1 })).toBe('a_1_b_-1'); // same spec again: no-op
    expect(await c.createIndex('c', { unique: true, name: 'c_unique' })).toBe('c_unique');
    expect(await c.createIndexes([{ key: { d: 1 } }, { key: { e: 1 }, name: 'e' }])).toEqual(['d_1', 'e']);
    const list = await c.indexes();
    expect(list.map((i) => i.name)).toEqual(['_id_', 'a_1_b_-1', 'c_unique', 'd_1', 'e']);
    expect(list[2]).toEqual({ v: 2, key: { c: 1 }, name: 'c_unique', unique: true });
    await expect(c.createIndex({ x: 1 }, { name: 'c_unique' })).rejects.toMatchObject({ code: 86 });
    await expect(c.createIndex({ c: 1 }, { name: 'c_unique', sparse: true })).rejects.toMatchObject({ code: 85 });
    expect(await c.indexExists('d_1')).toBe(true);
    await c.dropIndex('d_1');
    expect(await c.indexExists('d_1')).toBe(false);
    await expect(c.dropIndex('d_1')).rejects.toMatchObject({ code: 27 });
    await expect(coll('nope').indexes()).rejects.toMatchObject({ code: 26 });
  });

  it('a unique index rejects inserts, updates, replaces and upserts that collide; the store stays unchanged', async () => {
    const c = coll('i');
    await c.createIndex({ email: 1 }, { unique: true });
    await c.insertMany([{ email: 'a@x' }, { email: 'b@x' }]);
    const err = await expectDuplicate(c.insertOne({ email: 'a@x' }), 'email_1');
    expect(err.keyPattern).toEqual({ email: 1 });
    expect(err.keyValue).toEqual({ email: 'a@x' });
    await expectDuplicate(c.updateOne({ email: 'b@x' }, { $set: { email: 'a@x' } }));
    await expectDuplicate(c.replaceOne({ email: 'b@x' }, { email: 'a@x' }));
    await expectDuplicate(c.updateOne({ email: 'zzz', other: 1 }, { $set: { email: 'a@x' } }, { upsert: true }));
    await expectDuplicate(c.findOneAndUpdate({ email: 'b@x' }, { $set: { email: 'a@x' } }));
    expect((await c.find({}).sort({ email: 1 }).toArray()).map((d) => d.email)).toEqual(['a@x', 'b@x']);
    // updating a document without changing its key is fine
    await c.updateOne({ email: 'a@x' }, { $set: { name: 'A' } });
    // two missing keys collide too (null), unless the index is sparse
    await c.insertOne({ name: 'no email' });
    await expectDuplicate(c.insertOne({ name: 'no email either' }));
  });

  it('compound unique indexes compare the whole key', async () => {
    const c = coll('i');
    await c.createIndex({ tenant: 1, slug: 1 }, { unique: true });
    await c.insertMany([{ tenant: 1, slug: 'a' }, { tenant: 2, slug: 'a' }, { tenant: 1, slug: 'b' }]);
    const err = await expectDuplicate(c.insertOne({ tenant: 1, slug: 'a' }), 'tenant_1_slug_1');
    expect(err.keyValue).toEqual({ tenant: 1, slug: 'a' });
    await expectDuplicate(c.updateOne({ tenant: 2 }, { $set: { tenant: 1 } }));
  });

  it('sparse and partialFilterExpression unique indexes skip the documents they do not cover', async () => {
    const c = coll('i');
    await c.createIndex({ code: 1 }, { unique: true, sparse: true });
    await c.insertMany([{ x: 1 }, { x: 2 }, { code: 'A' }]);
    await expectDuplicate(c.insertOne({ code: 'A' }));

    const p = coll('partial');
    await p.createIndex({ phone: 1 }, { unique: true, partialFilterExpression: { active: true } });
    await p.insertMany([{ phone: '1', active: true }, { phone: '1', active: false }, { phone: '1' }]);
    await expectDuplicate(p.insertOne({ phone: '1', active: true }), 'phone_1');
    await expectDuplicate(p.updateOne({ active: false }, { $set: { active: true } }));
    expect(await p.countDocuments({ phone: '1' })).toBe(3);
  });

  it('unique indexes on arrays are multikey; ObjectId and Date keys compare by value', async () => {
    const c = coll('i');
    await c.createIndex({ tags: 1 }, { unique: true });
    await c.insertOne({ tags: ['a', 'b'] });
    await expectDuplicate(c.insertOne({ tags: ['c', 'b'] }));
    await c.insertOne({ tags: ['c'] });

    const o = coll('oid');
    await o.createIndex({ ref: 1, at: 1 }, { unique: true });
    const ref = new ObjectId();
    await o.insertOne({ ref, at: new Date(1) });
    await o.insertOne({ ref, at: new Date(2) });
    await expectDuplicate(o.insertOne({ ref: new ObjectId(ref.toHexString()), at: new Date(1) }));
    await o.insertOne({ ref: ref.toHexString(), at: new Date(1) }); // a string is not an ObjectId
  });

  it('creating a unique index over existing duplicates fails with 11000 and creates nothing', async () => {
    const c = coll('i');
    await c.insertMany([{ a: 1 }, { a: 1 }]);
    await expectDuplicate(c.createIndex({ a: 1 }, { unique: true }));
    expect((await c.indexes()).map((i) => i.name)).toEqual(['_id_']);
  });
});

describe('Db collection management and sessions', () => {
  it('createCollection, listCollections, dropCollection, dropDatabase', async () => {
    await db.createCollection('one');
    await expect(db.createCollection('one')).rejects.toMatchObject({ code: 48 });
    await coll('two').insertOne({ a: 1 });
    coll('three'); // a handle alone creates nothing
    expect((await db.listCollections().toArray()).map((c) => c.name)).toEqual(['one', 'two']);
    expect(await db.listCollections({ name: 'two' }, { nameOnly: true }).toArray()).toEqual([{ name: 'two', type: 'collection' }]);
    expect(await db.dropCollection('one')).toBe(true);
    expect(await db.dropCollection('one')).toBe(false);
    expect(await coll('two').drop()).toBe(true);
    await coll('four').insertOne({});
    expect(await db.dropDatabase()).toBe(true);
    expect(await db.listCollections().toArray()).toEqual([]);
  });

  it('withTransaction rolls back on error and keeps writes on success', async () => {
    const session = mongo.client.startSession();
    const c = coll('t');
    await expect(session.withTransaction(async () => {
      await c.insertOne({ a: 1 });
      throw new Error('boom');
    })).rejects.toThrow('boom');
    expect(await c.countDocuments()).toBe(0);
    const value = await session.withTransaction(async () => {
      await c.insertOne({ a: 2 });
      return 'done';
    });
    expect(value).toBe('done');
    expect(await c.countDocuments()).toBe(1);
    await session.endSession();
  });
});
