/** PCM helpers for tests that build audio from pieces. */

/** The samples of `parts`, one after the other, in a new array (an array of parts, not a spread: a test may have thousands). */
export function concatPcm(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
