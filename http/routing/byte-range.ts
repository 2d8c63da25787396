/**
 * What a GET with a `Range` header gets (RFC 9110 section 14): one satisfiable byte range of a `size`-byte
 * representation, `unsatisfiable` (416 with `Content-Range: bytes *\/size`), or `full` (200 with the whole body).
 * `start` and `end` are inclusive offsets, `end` clamped to the last byte.
 */
export type ByteRangeAnswer = { kind: 'full' } | { kind: 'partial'; start: number; end: number } | { kind: 'unsatisfiable' };

const SINGLE = /^bytes[ \t]*=[ \t]*(\d*)-(\d*)[ \t]*$/i;

/**
 * The one rule for answering `Range`. Absent, malformed, another unit, a range whose last position comes before
 * its first, or several ranges (`bytes=0-1,5-6`; a server may ignore the header): `full`. `a-b` / `a-`: bytes a..b
 * (b clamped to size - 1), unsatisfiable when a >= size. `-n`: the last n bytes (all of them when n > size),
 * unsatisfiable when n is 0 or the representation is empty. Never throws.
 */
export function byteRangeOf(header: string | undefined, size: number): ByteRangeAnswer {
  if (header === undefined) return { kind: 'full' };
  const m = SINGLE.exec(header);
  if (!m) return { kind: 'full' };
  const [, first, last] = m;
  if (first === '' && last === '') return { kind: 'full' };
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Number.POSITIVE_INFINITY : Number(last);
  if (end < start) return { kind: 'full' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}
