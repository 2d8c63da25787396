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

    describe('sweepIncomplete: what a crash left behind', () => {
      const past = () => new Date(Date.now() - 3_600_000);
      const future = () => new Date(Date.now() + 60_000);

      it('removes .part objects last written before the cutoff, keeps newer ones and never touches other objects', async () => {
        await store.put('runs/1/2/call.pcm.part', data);
        await store.put('runs/1/2/call.wav', data);
        await store.put('runs/1/2/transcript.json', '{}');
        expect(await store.sweepIncomplete(past())).toBe(0);
        expect(await store.stat('runs/1/2/call.pcm.part')).not.toBeNull();
        expect(await store.sweepIncomplete(future())).toBe(1);
        expect(await store.stat('runs/1/2/call.pcm.part')).toBeNull();
        expect(await store.get('runs/1/2/call.pcm.part')).toBeNull();
        expect((await store.stat('runs/1/2/call.wav'))?.size).toBe(data.length);
        expect(await store.stat('runs/1/2/transcript.json')).not.toBeNull();
        expect(await store.sweepIncomplete(future())).toBe(0); // idempotent
      });

      it('reclaims the leftovers of a put its writer abandoned (a crash mid-put), and leaves a running put alone', async () => {
        // a body that delivers one piece, then waits: what a process that died mid-call left behind
        const hung = (release: Promise<void>) => (async function* () {
          yield data.subarray(0, 1000);
          await release;
          yield data.subarray(1000);
        })();
        let releaseRunning!: () => void;
        const running = store.put('runs/1/3/call.pcm.part', hung(new Promise<void>((r) => (releaseRunning = r))));
        await new Promise((r) => setTimeout(r, 50));
        expect(await store.sweepIncomplete(past())).toBe(0);
        releaseRunning();
        expect((await running).size).toBe(data.length);
        await store.delete('runs/1/3/call.pcm.part');

        let releaseAbandoned!: () => void;
        const abandoned = store.put('runs/1/4/recording.bin', hung(new Promise<void>((r) => (releaseAbandoned = r))));
        const outcome = abandoned.then(() => 'stored', () => 'failed');
        await new Promise((r) => setTimeout(r, 50));
        expect(await store.sweepIncomplete(future())).toBeGreaterThanOrEqual(1);
        // nothing of it is readable, and the put cannot complete any more
        releaseAbandoned();
        expect(await outcome).toBe('failed');
        expect(await store.stat('runs/1/4/recording.bin')).toBeNull();
        expect(await store.sweepIncomplete(future())).toBe(0);
      });
    });
  });
}
