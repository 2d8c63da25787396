import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DomainError } from '../../core/errors.js';
import type { ObjectStore } from '../../core/ports/object-store.port.js';

export interface ObjectStoreHarness {
  store: ObjectStore;
  cleanup(): Promise<void>;
}

async function bytesOf(body: AsyncIterable<Uint8Array> | null): Promise<Buffer | null> {
  if (!body) return null;
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks);
}

/** What every ObjectStore adapter must do (core/ports/object-store.port.ts): storing, reading whole and by byte range. */
export function runObjectStoreContract(label: string, make: () => Promise<ObjectStoreHarness>): void {
  describe(`ObjectStore contract: ${label}`, () => {
    let h: ObjectStoreHarness;
    let store: ObjectStore;
    // 70,000 bytes: larger than one 64 KiB read, so a range can start and end inside different chunks
    const data = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31 + 7) % 256));
    beforeEach(async () => {
      h = await make();
      store = h.store;
    });
    afterEach(() => h.cleanup());

    it('stores a body and reads it back whole with its size and content type', async () => {
      expect(await store.put('runs/1/2/recording.wav', data, { contentType: 'audio/wav' })).toEqual({ key: 'runs/1/2/recording.wav', size: data.length, contentType: 'audio/wav' });
      expect(await store.stat('runs/1/2/recording.wav')).toEqual({ key: 'runs/1/2/recording.wav', size: data.length, contentType: 'audio/wav' });
      expect(await bytesOf(await store.get('runs/1/2/recording.wav'))).toEqual(data);
    });

    it('reads inclusive byte ranges, across chunk boundaries and to the last byte', async () => {
      await store.put('r/a.bin', data);
      for (const [start, end] of [[0, 0], [0, 9], [10, 19], [65_530, 65_545], [69_990, 69_999], [0, 69_999], [123, 123]]) {
        expect([start, end, await bytesOf(await store.get('r/a.bin', { start, end }))]).toEqual([start, end, data.subarray(start, end + 1)]);
      }
    });

    it('stops a range at the last byte when its end lies beyond it', async () => {
      await store.put('r/a.bin', data);
      expect(await bytesOf(await store.get('r/a.bin', { start: 69_995, end: 1_000_000 }))).toEqual(data.subarray(69_995));
    });

    it('refuses malformed ranges with invalid_byte_range', async () => {
      await store.put('r/a.bin', data);
      for (const range of [{ start: -1, end: 3 }, { start: 5, end: 4 }, { start: 0.5, end: 3 }, { start: 0, end: Number.NaN }]) {
        const e = await store.get('r/a.bin', range).then(() => null, (x: unknown) => x);
        expect([range, e instanceof DomainError ? e.code : e]).toEqual([range, 'invalid_byte_range']);
      }
    });

    it('answers null for an absent object, whole or ranged, and after delete (which is idempotent)', async () => {
      expect(await store.get('r/none.bin')).toBeNull();
      expect(await store.get('r/none.bin', { start: 0, end: 1 })).toBeNull();
      expect(await store.stat('r/none.bin')).toBeNull();
      await store.put('r/a.bin', 'abc');
      await store.delete('r/a.bin');
      await store.delete('r/a.bin');
      expect(await store.get('r/a.bin', { start: 0, end: 1 })).toBeNull();
      expect(await store.stat('r/a.bin')).toBeNull();
    });

    it('treats a key prefix of stored objects as absent, not as an object', async () => {
      await store.put('r/dir/a.bin', 'abc');
      expect(await store.stat('r/dir')).toBeNull();
      expect(await store.get('r/dir')).toBeNull();
      expect(await store.get('r/dir', { start: 0, end: 1 })).toBeNull();
    });
  });
}
