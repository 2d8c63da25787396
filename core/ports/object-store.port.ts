/**
 * Blobs: uploaded contact lists, transcripts, recordings. Keys are `/`-separated paths of safe characters
 * (`[A-Za-z0-9._-]` segments, no `..`). The embedded adapter keeps files under the data directory and
 * serves its own signed URLs; an S3-compatible adapter returns real presigned URLs.
 */
export const ObjectStore = Symbol.for('callplane.ObjectStore');

export type ObjectBody = AsyncIterable<Uint8Array | string> | Uint8Array | string;

/** Inclusive byte offsets into an object. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredObject {
  key: string;
  size: number;
  contentType: string;
}

export interface ObjectStore {
  /**
   * Stores `body` under `key` (replacing any previous object atomically: readers see the old or the new,
   * never a partial one). Streams: never holds the whole body in memory. Throws `PayloadTooLargeError`
   * once more than `maxBytes` arrive (nothing is stored); `InputError('invalid_object_key')` for a bad key.
   */
  put(key: string, body: ObjectBody, options?: { contentType?: string; maxBytes?: number }): Promise<StoredObject>;
  /**
   * The object's bytes as a stream, or null when absent. With `range`, only bytes `start`..`end` (inclusive,
   * 0 <= start <= end; the stream stops at the object's last byte when `end` lies beyond it): what an HTTP
   * byte-range answer streams, without reading the bytes before `start`. Throws `InputError('invalid_byte_range')`
   * for any other range (negative, reversed, not an integer).
   */
  get(key: string, range?: ByteRange): Promise<AsyncIterable<Uint8Array> | null>;
  /** Metadata, or null when absent. */
  stat(key: string): Promise<StoredObject | null>;
  /** Removes the object. Idempotent: absent is fine. */
  delete(key: string): Promise<void>;
  /**
   * Reclaims what writes cut short by a crash left behind, last written before `before`: the store's own
   * leftovers of a `put` that never finished (the embedded store's temporary files; on S3 an incomplete
   * multipart upload), and objects whose key's last segment ends in `.part` (work in progress of their writer:
   * a recording's audio between the call and its WAV; `.part` keys are for that only). A `put` still running
   * that wrote after `before`, and every other object, are left alone. Answers how many it removed (0 when
   * nothing matches). Idempotent; safe to run from several processes at once.
   */
  sweepIncomplete(before: Date): Promise<number>;
  /** A URL a client can PUT exactly `size` bytes to until `expiresInSeconds` pass, without other credentials. */
  signedUploadUrl(key: string, options: { size: number; contentType: string; expiresInSeconds: number }): Promise<string>;
  /** A URL a client can GET the object from until `expiresInSeconds` pass, without other credentials. */
  signedDownloadUrl(key: string, options: { expiresInSeconds: number; fileName?: string }): Promise<string>;
  /**
   * Stores that serve their own signed URLs (the embedded one) check them here: true only for an untampered,
   * unexpired signature over exactly these values. Constant-time; never throws. S3-like stores omit these.
   */
  verifyUpload?(key: string, size: number, expires: number, signature: string): boolean;
  verifyDownload?(key: string, expires: number, signature: string): boolean;
}

const SEGMENT = /^[A-Za-z0-9._-]+$/;
/** True for keys the stores accept. */
export function isValidObjectKey(key: string): boolean {
  if (key.length === 0 || key.length > 512) return false;
  return key.split('/').every((s) => SEGMENT.test(s) && s !== '.' && s !== '..');
}
