/**
 * A push-to-pull queue for streaming clients (exported by the provider SDK): a socket's handlers `push` values,
 * `end()` or `fail(err)` once, and one consumer reads them with `for await`. Values pushed after the end are
 * dropped. A consumer that stops early (break/return) marks the queue `abandoned` and calls `onAbandon`.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private finished = false;
  private error: unknown;
  private failed = false;
  abandoned = false;

  constructor(private readonly onAbandon?: () => void) {}

  get ended(): boolean {
    return this.finished;
  }

  push(value: T): void {
    if (this.finished) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w.resolve({ value, done: false });
    } else this.items.push(value);
  }

  /** Ends the iteration once the queued values are read. Idempotent. */
  end(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.waiter && this.items.length === 0) {
      const w = this.waiter;
      this.waiter = undefined;
      if (this.failed) {
        this.failed = false;
        w.reject(this.error);
      } else w.resolve({ value: undefined, done: true });
    }
  }

  /** Makes the iteration throw `err` once the queued values are read. Ignored after `end`/`fail`. */
  fail(err: unknown): void {
    if (this.finished) return;
    this.failed = true;
    this.error = err;
    this.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.items.length > 0) return Promise.resolve({ value: this.items.shift() as T, done: false });
        if (this.finished) {
          if (this.failed) {
            this.failed = false;
            return Promise.reject(this.error);
          }
          return Promise.resolve({ value: undefined, done: true });
        }
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiter = { resolve, reject };
        });
      },
      return: () => {
        if (!this.finished) {
          this.abandoned = true;
          this.items.length = 0;
          this.end();
          this.onAbandon?.();
        }
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
