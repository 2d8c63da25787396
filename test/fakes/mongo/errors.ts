/**
 * TEST DOUBLE: errors raised by the in-process MongoDB double. They are instances of the driver's own classes
 * (`MongoServerError`, `MongoBulkWriteError`, `MongoInvalidArgumentError`) carrying the fields a real server
 * reply carries (`code`, `codeName`, `errmsg`, `keyPattern`, `keyValue`), so adapter code that checks
 * `err instanceof MongoServerError && err.code === 11000` behaves as it would against mongod.
 */
import { MongoBulkWriteError, MongoInvalidArgumentError, MongoServerError } from 'mongodb';
import type { BulkWriteResult, Document } from 'mongodb';

export const DUPLICATE_KEY = 11000;

export function serverError(code: number, codeName: string, errmsg: string, extra: Document = {}): MongoServerError {
  return new MongoServerError({ ok: 0, errmsg, code, codeName, ...extra });
}

export function invalidArgument(message: string): MongoInvalidArgumentError {
  return new MongoInvalidArgumentError(message);
}

function render(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof Date) return `new Date(${value.getTime()})`;
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object' && typeof (value as { toHexString?: unknown }).toHexString === 'function') {
    return `ObjectId('${(value as { toHexString(): string }).toHexString()}')`;
  }
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The server's duplicate-key reply: `E11000 duplicate key error collection: db.coll index: name dup key: { a: 1 }`. */
export function duplicateKeyError(
  namespace: string,
  indexName: string,
  keyPattern: Document,
  keyValue: Document,
): MongoServerError {
  const dup = Object.entries(keyValue).map(([k, v]) => `${k}: ${render(v)}`).join(', ');
  return serverError(
    DUPLICATE_KEY,
    'DuplicateKey',
    `E11000 duplicate key error collection: ${namespace} index: ${indexName} dup key: { ${dup} }`,
    { keyPattern, keyValue, index: 0 },
  );
}

/** One failed operation inside an insertMany/bulkWrite, with the public surface of the driver's `WriteError`. */
export class DoubleWriteError {
  constructor(private readonly err: { code: number; index: number; errmsg: string; errInfo?: Document; op: unknown; keyPattern?: Document; keyValue?: Document }) {}
  get code(): number { return this.err.code; }
  get index(): number { return this.err.index; }
  get errmsg(): string { return this.err.errmsg; }
  get errInfo(): Document | undefined { return this.err.errInfo; }
  get keyPattern(): Document | undefined { return this.err.keyPattern; }
  get keyValue(): Document | undefined { return this.err.keyValue; }
  getOperation(): unknown { return this.err.op; }
  toJSON(): Document { return { code: this.err.code, index: this.err.index, errmsg: this.err.errmsg, op: this.err.op }; }
  toString(): string { return `WriteError(${JSON.stringify(this.toJSON())})`; }
}

/** Public surface of the driver's `BulkWriteResult` (whose constructor is internal to the driver). */
export class DoubleBulkWriteResult {
  readonly insertedCount: number;
  readonly matchedCount: number;
  readonly modifiedCount: number;
  readonly deletedCount: number;
  readonly upsertedCount: number;
  readonly upsertedIds: Record<number, unknown>;
  readonly insertedIds: Record<number, unknown>;
  private readonly writeErrors: DoubleWriteError[];

  constructor(raw: {
    insertedIds: Record<number, unknown>; upsertedIds: Record<number, unknown>;
    nInserted: number; nMatched: number; nModified: number; nRemoved: number; writeErrors: DoubleWriteError[];
  }) {
    this.insertedCount = raw.nInserted;
    this.matchedCount = raw.nMatched;
    this.modifiedCount = raw.nModified;
    this.deletedCount = raw.nRemoved;
    this.upsertedIds = raw.upsertedIds;
    this.upsertedCount = Object.keys(raw.upsertedIds).length;
    this.insertedIds = raw.insertedIds;
    this.writeErrors = raw.writeErrors;
  }
  get ok(): number { return 1; }
  getUpsertedIdAt(index: number): Document | undefined {
    const entries = Object.entries(this.upsertedIds);
    const e = entries[index];
    return e ? { index: Number(e[0]), _id: e[1] } : undefined;
  }
  getRawResponse(): Document {
    return {
      ok: 1, nInserted: this.insertedCount, nMatched: this.matchedCount, nModified: this.modifiedCount,
      nRemoved: this.deletedCount, nUpserted: this.upsertedCount, writeErrors: this.writeErrors,
      writeConcernErrors: [],
    };
  }
  hasWriteErrors(): boolean { return this.writeErrors.length > 0; }
  getWriteErrorCount(): number { return this.writeErrors.length; }
  getWriteErrorAt(index: number): DoubleWriteError | undefined { return this.writeErrors[index]; }
  getWriteErrors(): DoubleWriteError[] { return this.writeErrors; }
  getWriteConcernError(): undefined { return undefined; }
  isOk(): boolean { return true; }
  toString(): string { return `BulkWriteResult(${JSON.stringify(this.getRawResponse())})`; }
}

/** The driver's `MongoBulkWriteError` for a batch that hit write errors (code of the first error). */
export function bulkWriteError(writeErrors: DoubleWriteError[], result: DoubleBulkWriteResult): MongoBulkWriteError {
  const first = writeErrors[0];
  return new MongoBulkWriteError(
    { message: first.errmsg, code: first.code, writeErrors } as unknown as ConstructorParameters<typeof MongoBulkWriteError>[0],
    result as unknown as BulkWriteResult,
  );
}
