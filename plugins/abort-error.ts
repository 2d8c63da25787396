/**
 * The error an aborted provider call ends with. Exported from the provider SDK (plugins/sdk.ts), so every client
 * (and a third-party plugin) ends an abort the same way.
 */

/** The caller's abort reason when it is already an AbortError, else a new one. */
export function abortError(reason?: unknown): Error {
  // Duck-typed: a DOMException from another realm (or a test VM) is not `instanceof Error` here.
  if (typeof reason === 'object' && reason !== null && (reason as { name?: unknown }).name === 'AbortError') return reason as Error;
  return new DOMException('The operation was aborted', 'AbortError');
}
