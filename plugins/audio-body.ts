/**
 * A streamed HTTP audio body as a `TtsAudio`'s chunks, the way every text-to-speech client over HTTP reads it.
 * Exported from the provider SDK (plugins/sdk.ts).
 */
import type { AudioFormat } from '../core/voice/audio-format.js';

export interface AudioBodyOptions {
  /** Checked after every read: an abort ends the chunks with the signal's error. */
  signal?: AbortSignal;
  /** The error to throw for a failed read (the client's own mapping, e.g. to `ProviderApiError`). */
  failure(err: unknown): Error;
}

/**
 * The body's chunks as they arrive, empty reads left out. 16-bit PCM (`l16`) comes in whole samples: an odd trailing
 * byte waits for the next read (and is dropped if the body ends on it), since a converter reads each chunk as whole
 * samples. The reader is cancelled when the body ends, fails, or the consumer stops early.
 */
export async function* audioBodyChunks(reader: ReadableStreamDefaultReader<Uint8Array>, format: AudioFormat, opts: AudioBodyOptions): AsyncGenerator<Uint8Array> {
  const whole = format.encoding === 'l16';
  let carry: number | undefined;
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        throw opts.failure(err);
      }
      opts.signal?.throwIfAborted();
      if (next.done) return;
      let bytes = next.value;
      if (carry !== undefined) {
        const joined = new Uint8Array(bytes.byteLength + 1);
        joined[0] = carry;
        joined.set(bytes, 1);
        bytes = joined;
        carry = undefined;
      }
      if (whole && bytes.byteLength % 2 === 1) {
        carry = bytes[bytes.byteLength - 1];
        bytes = bytes.subarray(0, bytes.byteLength - 1);
      }
      if (bytes.byteLength > 0) yield bytes;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
