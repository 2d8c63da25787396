import { describe, expect, it } from '@jest/globals';
import type { ObjectStore, StoredObject } from '../ports/object-store.port.js';
import { silentLogger } from '../ports/logger.port.js';
import { MediaRecording } from './media-recording.js';

/** An object store whose writes finish only when the test lets them: each piece `put` reads is one write. */
function slowStore() {
  const objects = new Map<string, Uint8Array[]>();
  let release: (() => void) | null = null;
  const store: Pick<ObjectStore, 'put' | 'get' | 'delete'> = {
    async put(key, body): Promise<StoredObject> {
      const pieces: Uint8Array[] = [];
      objects.set(key, pieces);
      for await (const piece of body as AsyncIterable<Uint8Array>) {
        pieces.push(Uint8Array.from(piece));
        await new Promise<void>((r) => (release = r)); // the write is under way until released
      }
      return { key, size: pieces.reduce((n, p) => n + p.length, 0) } as StoredObject;
    },
    async get(key) {
      const pieces = objects.get(key);
      return pieces ? (async function* () { yield* pieces; })() : null;
    },
    async delete(key) {
      objects.delete(key);
    },
  };
  const settle = () => new Promise((r) => setImmediate(r));
  return {
    store,
    objects,
    /** Finishes the write under way and lets the recording hand over its next piece. */
    async finishWrite() {
      await settle();
      const r = release;
      release = null;
      r?.();
      await settle();
    },
  };
}

describe('MediaRecording with a store that falls behind', () => {
  it('writes what queued while a write was under way as one piece, in order, and loses nothing', async () => {
    const s = slowStore();
    const rec = new MediaRecording(s.store, { rawKey: 'raw', wavKey: 'rec.wav', highWaterBytes: 1 << 20, maxQueuedBytes: 1 << 20, maxBytes: 1 << 20 }, silentLogger);
    const chunk = (n: number) => new Uint8Array(160).fill(n);
    rec.write(chunk(0));
    await new Promise((r) => setImmediate(r));
    // the first write is slow: nine more chunks arrive meanwhile
    for (let n = 1; n < 10; n++) rec.write(chunk(n));
    await s.finishWrite();
    await s.finishWrite();
    const pieces = s.objects.get('raw')!;
    expect(pieces.map((p) => p.length)).toEqual([160, 9 * 160]);
    const all = Buffer.concat(pieces);
    for (let n = 0; n < 10; n++) expect(all[n * 160]).toBe(n);
    const done = rec.finish();
    await s.finishWrite();
    for (let i = 0; i < 4; i++) await s.finishWrite(); // the WAV's header, data and padding
    const result = await done;
    expect(result).toMatchObject({ key: 'rec.wav', dataBytes: 1600, truncated: false });
  });
});
