import { describe, expect, it } from '@jest/globals';
import { AsyncQueue } from './async-queue.js';

describe('AsyncQueue', () => {
  it('delivers values pushed before and while waiting, then ends; pushes after the end are dropped', async () => {
    const q = new AsyncQueue<number>();
    q.push(1);
    const got: number[] = [];
    const reading = (async () => {
      for await (const v of q) got.push(v);
    })();
    await Promise.resolve();
    q.push(2);
    q.end();
    q.push(3);
    await reading;
    expect(got).toEqual([1, 2]);
  });

  it('fail() throws to a waiting consumer and to one that comes after the queued values', async () => {
    const waiting = new AsyncQueue<number>();
    const it1 = waiting[Symbol.asyncIterator]();
    const pending = it1.next();
    waiting.fail(new Error('boom'));
    await expect(pending).rejects.toThrow('boom');

    const later = new AsyncQueue<number>();
    later.push(7);
    later.fail(new Error('late'));
    const it2 = later[Symbol.asyncIterator]();
    await expect(it2.next()).resolves.toEqual({ value: 7, done: false });
    await expect(it2.next()).rejects.toThrow('late');
  });

  it('a consumer that stops early abandons the queue and calls onAbandon once', async () => {
    let abandoned = 0;
    const q = new AsyncQueue<number>(() => abandoned++);
    q.push(1);
    q.push(2);
    for await (const v of q) {
      void v;
      break;
    }
    expect(q.abandoned).toBe(true);
    expect(abandoned).toBe(1);
    expect(q.ended).toBe(true);
  });
});
