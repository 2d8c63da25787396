import { describe, expect, it } from '@jest/globals';
import { L16_24K, MULAW_8K } from '../core/voice/audio-format.js';
import { audioBodyChunks } from './audio-body.js';

/** A body that hands out `parts` one read at a time, then `end` (done, or an error to throw); it records a cancel. */
function body(parts: number[][], end: 'done' | Error = 'done') {
  const state = { cancelled: false };
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < parts.length) c.enqueue(Uint8Array.from(parts[i++]!));
      else if (end === 'done') c.close();
      else c.error(end);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { reader: stream.getReader(), state };
}

const collect = async (chunks: AsyncIterable<Uint8Array>): Promise<number[][]> => {
  const out: number[][] = [];
  for await (const c of chunks) out.push([...c]);
  return out;
};
const failure = (err: unknown) => new Error(`mapped: ${(err as Error).message}`);

describe('audioBodyChunks', () => {
  it('keeps 16-bit PCM in whole samples across reads (an odd last byte of the body is dropped); empty reads are left out', async () => {
    const { reader } = body([[1, 2, 3], [], [4], [5, 6, 7, 8, 9]]);
    expect(await collect(audioBodyChunks(reader, L16_24K, { failure }))).toEqual([[1, 2], [3, 4], [5, 6, 7, 8]]);
  });

  it('passes 8-bit audio through as it came', async () => {
    const { reader } = body([[1, 2, 3], [], [4]]);
    expect(await collect(audioBodyChunks(reader, MULAW_8K, { failure }))).toEqual([[1, 2, 3], [4]]);
  });

  it('a failed read throws the client\'s error; an abort ends with the signal\'s reason and cancels the body', async () => {
    const failing = body([[1, 2]], new Error('socket hang up'));
    await expect(collect(audioBodyChunks(failing.reader, MULAW_8K, { failure }))).rejects.toThrow('mapped: socket hang up');
    const ac = new AbortController();
    const aborted = body([[1, 2], [3, 4], [5, 6], [7, 8]]);
    const chunks = audioBodyChunks(aborted.reader, MULAW_8K, { signal: ac.signal, failure });
    expect((await chunks.next()).value).toEqual(Uint8Array.from([1, 2]));
    ac.abort(new DOMException('stop', 'AbortError'));
    await expect(chunks.next()).rejects.toMatchObject({ name: 'AbortError' });
    expect(aborted.state.cancelled).toBe(true);
  });

  it('cancels the body when the consumer stops early', async () => {
    const { reader, state } = body([[1, 2], [3, 4]]);
    for await (const _ of audioBodyChunks(reader, MULAW_8K, { failure })) break;
    expect(state.cancelled).toBe(true);
  });
});
