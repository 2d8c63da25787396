/**
 * Polls `cond` every `intervalMs` until it holds; throws `timed out waiting for <what>` after `timeoutMs`.
 * For tests that wait on something a fake or the service does in the background.
 */
export async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 5000, intervalMs = 5): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
