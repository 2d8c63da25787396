import type { Logger } from '../ports/logger.port.js';
import type { ObjectStore, StoredObject } from '../ports/object-store.port.js';
import { concatBytes } from '../voice/audio-format.js';
import { mulawWavHeader, wavPadding } from './media-wav.js';

export interface MediaRecordingOptions {
  /** Where the raw μ-law bytes stream while the call lasts (deleted once the WAV is written). */
  rawKey: string;
  /** The final WAV object. */
  wavKey: string;
  /** Bytes queued for the store above which `write` asks the caller to stop reading (backpressure). */
  highWaterBytes: number;
  /** Audio bytes kept at most; later audio is dropped and the recording marked truncated. */
  maxBytes: number;
  /**
   * For a source that cannot pause (a talking call's recorder): once more than this many bytes wait for the
   * store, the recording stops there (later audio is dropped, the recording marked truncated, what was queued
   * is still written), so a stalled store never grows memory. Default: no limit (the source obeys `write`'s
   * false and `whenDrained`).
   */
  maxQueuedBytes?: number;
  /** The WAV header for `dataBytes` bytes of data. Default: μ-law mono 8 kHz (`mulawWavHeader`). */
  wavHeader?: (dataBytes: number) => Uint8Array;
}

export interface MediaRecordingResult {
  key: string;
  /** Bytes in the WAV's data chunk: one μ-law sample each (mono, 8 kHz: 8,000 a second). */
  dataBytes: number;
  truncated: boolean;
}

/**
 * Streams one call's audio (μ-law by default; a talking call's stereo PCM with `wavHeader`) into the ObjectStore as a WAV whose sizes are known only at the end, with
 * bounded memory: while the call lasts the bytes stream into a raw object (`ObjectStore.put` consumes an
 * async iterable fed by `write`; at most about `highWaterBytes` wait in memory, and `write` returns false so
 * the transport pauses its socket until `whenDrained`); `finish` then writes the WAV header (RIFF sizes, μ-law
 * format code 7) followed by the raw object read back as a stream, and deletes the raw object. A store
 * failure is logged and ends recording (later audio is dropped); it never breaks the call.
 */
export class MediaRecording {
  private readonly queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private acceptedBytes = 0;
  private truncated = false;
  /** The store fell behind past `maxQueuedBytes`: nothing more is accepted. */
  private stopped = false;
  private ended = false;
  private failed = false;
  private wake: (() => void) | null = null;
  private drainWaiters: Array<() => void> = [];
  private readonly upload: Promise<StoredObject | null>;
  private finishing: Promise<MediaRecordingResult | null> | null = null;

  constructor(
    private readonly store: Pick<ObjectStore, 'put' | 'get' | 'delete'>,
    private readonly options: MediaRecordingOptions,
    private readonly log: Logger,
  ) {
    this.upload = store
      .put(options.rawKey, this.chunks(), { contentType: 'application/octet-stream', maxBytes: options.maxBytes })
      .catch((e: unknown) => {
        this.fail(e);
        return null;
      });
  }

  /** Bytes accepted so far. */
  get bytes(): number {
    return this.acceptedBytes;
  }

  /**
   * Queues audio bytes (the caller must not reuse `bytes`). Returns false when the queue is above the high
   * water mark: stop reading until `whenDrained` calls back. After `finish`, a failure or the size limit, the
   * bytes are dropped (and true is returned: nothing to wait for).
   */
  write(bytes: Uint8Array): boolean {
    if (this.ended || this.failed || this.stopped || bytes.length === 0) return true;
    const room = this.options.maxBytes - this.acceptedBytes;
    if (room <= 0) {
      this.markTruncated();
      return true;
    }
    const chunk = bytes.length > room ? bytes.subarray(0, room) : bytes;
    if (chunk.length < bytes.length) this.markTruncated();
    if (this.options.maxQueuedBytes !== undefined && this.queuedBytes + chunk.length > this.options.maxQueuedBytes) {
      this.stopped = true;
      this.truncated = true;
      this.log.warn({ key: this.options.wavKey, queued_bytes: this.queuedBytes }, 'the store fell behind the recording: later audio is not recorded');
      return true;
    }
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    this.acceptedBytes += chunk.length;
    this.wakeReader();
    return this.queuedBytes < this.options.highWaterBytes;
  }

  /** Calls `cb` once the queue is below the high water mark again (at once if it is). */
  whenDrained(cb: () => void): void {
    if (this.queuedBytes < this.options.highWaterBytes || this.ended || this.failed) cb();
    else this.drainWaiters.push(cb);
  }

  /**
   * Ends the recording: waits for the raw object, writes the WAV and deletes the raw object. Null when no
   * audio arrived or the store failed (logged). Idempotent: later calls return the same result.
   */
  finish(): Promise<MediaRecordingResult | null> {
    this.finishing ??= this.finalize();
    return this.finishing;
  }

  /**
   * Ends the recording without a WAV: the raw object is deleted once its upload ends, and `finish` returns null
   * (a talking call records itself; what this recording took before the hand-over is not kept). Idempotent.
   */
  abandon(): Promise<MediaRecordingResult | null> {
    this.finishing ??= (async () => {
      this.ended = true;
      this.queue.length = 0;
      this.queuedBytes = 0;
      this.wakeReader();
      this.releaseDrainWaiters();
      await this.upload;
      await this.store.delete(this.options.rawKey).catch(() => undefined);
      return null;
    })();
    return this.finishing;
  }

  private async finalize(): Promise<MediaRecordingResult | null> {
    this.ended = true;
    this.wakeReader();
    this.releaseDrainWaiters();
    const raw = await this.upload;
    try {
      if (!raw || this.failed || raw.size === 0) return null;
      const dataBytes = raw.size;
      await this.store.put(this.options.wavKey, this.wav(dataBytes), { contentType: 'audio/wav', maxBytes: dataBytes + 64 });
      return { key: this.options.wavKey, dataBytes, truncated: this.truncated };
    } catch (e) {
      this.fail(e);
      return null;
    } finally {
      await this.store.delete(this.options.rawKey).catch(() => undefined);
    }
  }

  private async *chunks(): AsyncGenerator<Uint8Array> {
    for (;;) {
      // behind the source, what waits goes out as one piece: one store write instead of one per chunk (a local
      // store's writes each take a trip through libuv's thread pool, which gets little CPU when the machine is busy)
      const next = this.queue.length > 1 ? concatBytes(this.queue.splice(0)) : this.queue.shift();
      if (next) {
        this.queuedBytes -= next.length;
        if (this.queuedBytes < this.options.highWaterBytes) this.releaseDrainWaiters();
        yield next;
        continue;
      }
      if (this.ended || this.failed) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private async *wav(dataBytes: number): AsyncGenerator<Uint8Array> {
    yield (this.options.wavHeader ?? mulawWavHeader)(dataBytes);
    const body = await this.store.get(this.options.rawKey);
    if (!body) throw new Error('raw recording vanished before it was finalized');
    let copied = 0;
    for await (const chunk of body) {
      copied += chunk.length;
      yield chunk;
    }
    if (copied !== dataBytes) throw new Error(`raw recording changed size while finalizing (${copied} != ${dataBytes})`);
    const pad = wavPadding(dataBytes);
    if (pad.length > 0) yield pad;
  }

  private markTruncated(): void {
    if (this.truncated) return;
    this.truncated = true;
    this.log.warn({ key: this.options.wavKey, max_bytes: this.options.maxBytes }, 'recording reached its size limit: later audio is not recorded');
  }

  private fail(e: unknown): void {
    if (!this.failed) this.log.error({ key: this.options.wavKey, err: (e as Error)?.message }, 'recording could not be stored');
    this.failed = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.wakeReader();
    this.releaseDrainWaiters();
  }

  private wakeReader(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  private releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const cb of waiters) cb();
  }
}
