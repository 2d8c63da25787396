/**
 * TEST DOUBLE: cursors of the in-process MongoDB double (the driver's FindCursor / AggregationCursor surface).
 *
 * Like the driver, a cursor does nothing until it is first read (toArray, next, hasNext, tryNext, forEach,
 * async iteration); it then takes a snapshot of the matching documents (BSON copies). Builder methods
 * (sort, skip, limit, project, ...) throw the driver's MongoCursorInUseError once reading has begun.
 * Sort is applied before skip and limit whatever order they were called in, as on the server.
 */
import { MongoCursorInUseError } from 'mongodb';
import type { Document } from 'mongodb';
import { normalizeSort } from './bson-utils.js';

type Transform = (doc: any) => any;

abstract class DoubleCursorBase<T> implements AsyncIterable<T> {
  private buffer: unknown[] | undefined;
  private position = 0;
  private transforms: Transform[] = [];
  private isClosed = false;

  /** Runs the query; called once, on first read. Returns BSON copies. */
  protected abstract fetch(): Document[];

  protected assertNotStarted(): void {
    if (this.buffer !== undefined) throw new MongoCursorInUseError('Cursor is already initialized');
  }

  private load(): unknown[] {
    if (this.buffer === undefined) {
      this.buffer = this.isClosed ? [] : this.fetch();
    }
    return this.buffer;
  }

  get closed(): boolean {
    return this.isClosed || (this.buffer !== undefined && this.position >= this.buffer.length);
  }

  get killed(): boolean {
    return this.isClosed;
  }

  /** Applies `fn` to each document when it is read (composes with earlier maps, like the driver). */
  map<U>(fn: (doc: T) => U): DoubleCursorBase<U> {
    this.assertNotStarted();
    this.transforms.push(fn as Transform);
    return this as unknown as DoubleCursorBase<U>;
  }

  private apply(doc: unknown): T {
    let out = doc;
    for (const t of this.transforms) out = t(out);
    return out as T;
  }

  async hasNext(): Promise<boolean> {
    if (this.isClosed) return false;
    return this.position < this.load().length;
  }

  async next(): Promise<T | null> {
    if (this.isClosed) return null;
    const buf = this.load();
    if (this.position >= buf.length) return null;
    return this.apply(buf[this.position++]);
  }

  async tryNext(): Promise<T | null> {
    return this.next();
  }

  async toArray(): Promise<T[]> {
    if (this.isClosed) return [];
    const buf = this.load();
    const rest = buf.slice(this.position);
    this.position = buf.length;
    return rest.map((d) => this.apply(d));
  }

  async forEach(iterator: (doc: T) => boolean | void): Promise<void> {
    for (;;) {
      const doc = await this.next();
      if (doc === null) return;
      if (iterator(doc) === false) return;
    }
  }

  async close(): Promise<void> {
    this.isClosed = true;
  }

  /** Resets the cursor so the next read runs the query again. */
  rewind(): void {
    this.buffer = undefined;
    this.position = 0;
    this.isClosed = false;
  }

  bufferedCount(): number {
    return this.buffer ? this.buffer.length - this.position : 0;
  }

  // Options that only tune the wire protocol: accepted and ignored.
  batchSize(_n: number): this { this.assertNotStarted(); return this; }
  maxTimeMS(_n: number): this { this.assertNotStarted(); return this; }
  comment(_c: unknown): this { this.assertNotStarted(); return this; }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, void> {
    try {
      for (;;) {
        const doc = await this.next();
        if (doc === null) return;
        yield doc;
      }
    } finally {
      await this.close();
    }
  }
}

export interface FindSpec {
  sort?: Record<string, 1 | -1>;
  skip?: number;
  limit?: number;
  projection?: Document;
}

/** The FindCursor double. `run` executes the find against the collection at first read. */
export class DoubleFindCursor<T = Document> extends DoubleCursorBase<T> {
  constructor(
    private readonly run: (filter: Document, spec: FindSpec) => Document[],
    private filterDoc: Document,
    private spec: FindSpec,
  ) {
    super();
  }

  protected fetch(): Document[] {
    return this.run(this.filterDoc, this.spec);
  }

  filter(filter: Document): this { this.assertNotStarted(); this.filterDoc = filter; return this; }

  sort(sort: unknown, direction?: unknown): this {
    this.assertNotStarted();
    this.spec = { ...this.spec, sort: normalizeSort(sort, direction) };
    return this;
  }

  skip(n: number): this { this.assertNotStarted(); this.spec = { ...this.spec, skip: n }; return this; }

  limit(n: number): this { this.assertNotStarted(); this.spec = { ...this.spec, limit: n }; return this; }

  project<U = Document>(projection: Document): DoubleFindCursor<U> {
    this.assertNotStarted();
    this.spec = { ...this.spec, projection };
    return this as unknown as DoubleFindCursor<U>;
  }

  override map<U>(fn: (doc: T) => U): DoubleFindCursor<U> {
    return super.map(fn) as DoubleFindCursor<U>;
  }

  /** Deprecated in the driver: the number of matching documents, honouring skip and limit. */
  async count(): Promise<number> {
    const { projection: _p, ...rest } = this.spec;
    return this.run(this.filterDoc, rest).length;
  }

  hint(_hint: unknown): this { this.assertNotStarted(); return this; }
  collation(_c: unknown): this { this.assertNotStarted(); return this; }
  allowDiskUse(_v?: boolean): this { this.assertNotStarted(); return this; }

  /** A fresh, unstarted cursor with the same query (transforms are not copied, as in the driver). */
  clone(): DoubleFindCursor<T> {
    return new DoubleFindCursor<T>(this.run, this.filterDoc, { ...this.spec });
  }
}

/** The AggregationCursor double. `run` executes the pipeline at first read. */
export class DoubleAggregationCursor<T = Document> extends DoubleCursorBase<T> {
  constructor(
    private readonly run: (pipeline: Document[]) => Document[],
    private readonly stages: Document[],
  ) {
    super();
  }

  get pipeline(): Document[] {
    return this.stages;
  }

  protected fetch(): Document[] {
    return this.run(this.stages);
  }

  addStage<U = T>(stage: Document): DoubleAggregationCursor<U> {
    this.assertNotStarted();
    this.stages.push(stage);
    return this as unknown as DoubleAggregationCursor<U>;
  }

  match(filter: Document): this { this.addStage({ $match: filter }); return this; }
  sort(sort: unknown): this { this.addStage({ $sort: normalizeSort(sort) ?? {} }); return this; }
  skip(n: number): this { this.addStage({ $skip: n }); return this; }
  limit(n: number): this { this.addStage({ $limit: n }); return this; }
  group<U = T>(spec: Document): DoubleAggregationCursor<U> { return this.addStage<U>({ $group: spec }); }
  project<U = T>(spec: Document): DoubleAggregationCursor<U> { return this.addStage<U>({ $project: spec }); }
  unwind<U = T>(spec: string | Document): DoubleAggregationCursor<U> { return this.addStage<U>({ $unwind: spec }); }
  lookup<U = T>(spec: Document): DoubleAggregationCursor<U> { return this.addStage<U>({ $lookup: spec }); }

  override map<U>(fn: (doc: T) => U): DoubleAggregationCursor<U> {
    return super.map(fn) as DoubleAggregationCursor<U>;
  }

  clone(): DoubleAggregationCursor<T> {
    return new DoubleAggregationCursor<T>(this.run, [...this.stages]);
  }
}
