import { createWriteStream } from 'node:fs';
import { mkdir, open, opendir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { Readable, Transform } from 'node:stream';
import { InputError, PayloadTooLargeError } from '../../../core/errors.js';
import type { Clock } from '../../../core/ports/clock.port.js';
import type { UrlSigner } from '../../../core/ports/crypto.port.js';
import { isValidObjectKey, type ByteRange, type ObjectBody, type ObjectStore, type StoredObject } from '../../../core/ports/object-store.port.js';

/** A put's temporary file: `<target>.<12 hex>.tmp` beside its target, until it is renamed into place. */
const TMP_SUFFIX = '.tmp';
const TMP_FILE = /\.[0-9a-f]{12}\.tmp$/;
const META_SUFFIX = '.meta.json';

/**
 * The files under `dir`, depth first, read one directory handle at a time (`opendir` hands out entries in small
 * batches): a store with millions of objects is walked without holding its whole listing. A directory that
 * vanishes meanwhile (another process's sweep, a delete) is skipped.
 */
async function* walkFiles(dir: string): AsyncGenerator<string> {
  const handle = await opendir(dir).catch(() => null);
  if (!handle) return;
  for await (const entry of handle) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walkFiles(path);
    else if (entry.isFile()) yield path;
  }
}

/** Stored objects are readable by the service's own user only. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/** What a signed upload URL authorizes, recovered from its query string. */
export interface UploadGrant { key: string; size: number; expires: number }

/** The string an upload signature covers: method, key, declared size and expiry (API.md section 4). */
export const uploadSignaturePayload = (key: string, size: number, expires: number) => `PUT\n${key}\n${size}\n${expires}`;
/** The string a download signature covers. */
export const downloadSignaturePayload = (key: string, expires: number) => `GET\n${key}\n${expires}`;

/**
 * Files under `<root>/objects/<key>` with a `.meta.json` beside each; writes go to a temporary file that is
 * renamed into place. Files are created 0600 and directories 0700 (owner only; docs/security.md). Signed URLs point at this service's own routes:
 * `PUT /api/v1/uploads/<key>?expires=&signature=` and `GET /api/v1/files/<key>?expires=&signature=`.
 */
export class LocalObjectStore implements ObjectStore {
  constructor(
    private readonly root: string,
    private readonly publicUrl: string,
    private readonly signer: UrlSigner,
    private readonly clock: Clock,
  ) {}

  private path(key: string): string {
    if (!isValidObjectKey(key)) throw new InputError('invalid_object_key', 'Invalid object key');
    return join(this.root, 'objects', key);
  }

  async put(key: string, body: ObjectBody, options: { contentType?: string; maxBytes?: number } = {}): Promise<StoredObject> {
    const target = this.path(key);
    await mkdir(dirname(target), { recursive: true, mode: DIR_MODE });
    const tmp = `${target}.${randomBytes(6).toString('hex')}${TMP_SUFFIX}`;
    let size = 0;
    const max = options.maxBytes ?? Number.POSITIVE_INFINITY;
    const counter = new Transform({
      transform(chunk: Buffer | string, _enc, cb) {
        const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        size += buf.length;
        if (size > max) cb(new PayloadTooLargeError('payload_too_large', `Body is larger than the allowed ${max} bytes`));
        else cb(null, buf);
      },
    });
    const source = typeof body === 'string' || body instanceof Uint8Array ? Readable.from([body]) : Readable.from(body);
    let metaWritten = false;
    try {
      await pipeline(source, counter, createWriteStream(tmp, { mode: FILE_MODE }));
      const meta: StoredObject = { key, size, contentType: options.contentType ?? 'application/octet-stream' };
      await writeFile(`${target}${META_SUFFIX}`, JSON.stringify(meta), { mode: FILE_MODE });
      metaWritten = true;
      await rename(tmp, target);
      return meta;
    } catch (e) {
      await rm(tmp, { force: true });
      // the rename failed (a sweep took the temporary file of a put abandoned for too long): no object, no meta
      if (metaWritten && !(await stat(target).then(() => true, () => false))) await rm(`${target}${META_SUFFIX}`, { force: true });
      throw e;
    }
  }

  async get(key: string, range?: ByteRange): Promise<AsyncIterable<Uint8Array> | null> {
    const p = this.path(key);
    // opened before returning so an object deleted meanwhile is null here, not an error mid-stream
    const handle = await open(p, 'r').catch(() => null);
    if (!handle) return null;
    if (!(await handle.stat()).isFile()) {
      await handle.close();
      return null;
    }
    if (range && !(Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end) && range.start >= 0 && range.end >= range.start)) {
      await handle.close();
      throw new InputError('invalid_byte_range', 'Invalid byte range');
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async stat(key: string): Promise<StoredObject | null> {
    const p = this.path(key);
    try {
      const s = await stat(p);
      if (!s.isFile()) return null;
      const meta = JSON.parse(await readFile(`${p}.meta.json`, 'utf8').catch(() => '{}')) as Partial<StoredObject>;
      return { key, size: s.size, contentType: meta.contentType ?? 'application/octet-stream' };
    } catch {
      return null;
    }
  }

  async delete(key: string): Promise<void> {
    const p = this.path(key);
    await rm(p, { force: true });
    await rm(`${p}.meta.json`, { force: true });
  }

  /**
   * Walks `<root>/objects` and removes, when last modified before `before`: put temporary files
   * (`<target>.<12 hex>.tmp`; an object that happens to be named so has its `.meta.json` and is kept), `.part`
   * objects with their `.meta.json`, and a `.meta.json` whose object is missing (a crash between the two writes
   * of a put). A running put writes its temporary file as its body arrives, so it stays newer than `before`.
   */
  async sweepIncomplete(before: Date): Promise<number> {
    const cutoff = before.getTime();
    const stale = async (file: string) => {
      const s = await stat(file).catch(() => null);
      return s !== null && s.mtimeMs < cutoff;
    };
    const exists = (file: string) => stat(file).then(() => true, () => false);
    let removed = 0;
    for await (const file of walkFiles(join(this.root, 'objects'))) {
      const name = file.slice(file.lastIndexOf('/') + 1);
      if (TMP_FILE.test(name)) {
        if ((await exists(file + META_SUFFIX)) || !(await stale(file))) continue;
        await rm(file, { force: true });
      } else if (name.endsWith('.part')) {
        if (!(await stale(file))) continue;
        await rm(file, { force: true });
        await rm(file + META_SUFFIX, { force: true });
      } else if (name.endsWith(META_SUFFIX)) {
        // (an object whose own key ends in .meta.json has a .meta.json of its own)
        if ((await exists(file.slice(0, -META_SUFFIX.length))) || (await exists(file + META_SUFFIX)) || !(await stale(file))) continue;
        await rm(file, { force: true });
      } else {
        continue;
      }
      removed++;
    }
    return removed;
  }

  async signedUploadUrl(key: string, o: { size: number; contentType: string; expiresInSeconds: number }): Promise<string> {
    this.path(key);
    const expires = Math.floor(this.clock.now().getTime() / 1000) + o.expiresInSeconds;
    const signature = this.signer.sign(uploadSignaturePayload(key, o.size, expires));
    return `${this.publicUrl}/api/v1/uploads/${key}?size=${o.size}&expires=${expires}&signature=${signature}`;
  }

  async signedDownloadUrl(key: string, o: { expiresInSeconds: number }): Promise<string> {
    this.path(key);
    const expires = Math.floor(this.clock.now().getTime() / 1000) + o.expiresInSeconds;
    const signature = this.signer.sign(downloadSignaturePayload(key, expires));
    return `${this.publicUrl}/api/v1/files/${key}?expires=${expires}&signature=${signature}`;
  }

  /** Checks an upload URL's signature and expiry; false when tampered, expired or malformed. */
  verifyUpload(key: string, size: number, expires: number, signature: string): boolean {
    if (!isValidObjectKey(key) || !Number.isInteger(size) || !Number.isInteger(expires)) return false;
    if (expires < Math.floor(this.clock.now().getTime() / 1000)) return false;
    return this.signer.verify(uploadSignaturePayload(key, size, expires), signature);
  }

  /** Checks a download URL's signature and expiry. */
  verifyDownload(key: string, expires: number, signature: string): boolean {
    if (!isValidObjectKey(key) || !Number.isInteger(expires)) return false;
    if (expires < Math.floor(this.clock.now().getTime() / 1000)) return false;
    return this.signer.verify(downloadSignaturePayload(key, expires), signature);
  }
}
