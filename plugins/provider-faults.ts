/**
 * Errors that belong to one provider connection but escape every handler (a vendor SDK throwing from its own
 * socket or HTTP callback, a rejected promise nobody awaited). The process-level guard (http/main.ts) asks
 * `providerFaultOf(err)`: a provider fault is logged and the process keeps serving (that configuration shows
 * unhealthy through its own health); anything else is an unknown fatal error: logged, then the process exits 1.
 *
 * A fault is recognised when the error
 * - was tagged with `markProviderFault(err, { provider, configurationId })`, or
 * - is claimed by a claimer a provider registered (`registerFaultClaimer`, e.g. ARI claims errors thrown from
 *   inside ari-client's modules and fails the connection that was loading), or
 * - is a `ProviderApiError` (kind `provider`): a failed provider call, never a corrupted process.
 * Exported from the provider SDK. The registry lives on `globalThis`, so copies of the SDK bundled by plugin
 * packages share it.
 */

export interface ProviderFault {
  provider: string;
  /** The telephony configuration whose connection failed, when known. */
  configurationId?: number;
  message: string;
}

/** Returns the fault when `err` is this provider's (it may also mark its connection failed), else undefined. */
export type FaultClaimer = (err: unknown) => ProviderFault | undefined;

const TAG = Symbol.for('callplane.providerFault');
const REGISTRY = Symbol.for('callplane.providerFaultClaimers');

function claimers(): Set<FaultClaimer> {
  const g = globalThis as unknown as Record<symbol, Set<FaultClaimer> | undefined>;
  return (g[REGISTRY] ??= new Set<FaultClaimer>());
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === 'string') return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

/** Tags `err` (an object) as one provider connection's; returns it. Primitives cannot be tagged. */
export function markProviderFault<E>(err: E, fault: { provider: string; configurationId?: number }): E {
  if (err && (typeof err === 'object' || typeof err === 'function')) {
    Object.defineProperty(err, TAG, { value: { ...fault }, enumerable: false, configurable: true });
  }
  return err;
}

/** Adds a claimer; returns its removal. */
export function registerFaultClaimer(claimer: FaultClaimer): () => void {
  claimers().add(claimer);
  return () => claimers().delete(claimer);
}

/** The provider fault `err` is, or undefined for an error no provider owns (fatal). Never throws. */
export function providerFaultOf(err: unknown): ProviderFault | undefined {
  if (err && typeof err === 'object') {
    const tag = (err as Record<symbol, { provider: string; configurationId?: number } | undefined>)[TAG];
    if (tag) return { ...tag, message: messageOf(err) };
  }
  for (const claim of claimers()) {
    try {
      const fault = claim(err);
      if (fault) return fault;
    } catch {
      // a broken claimer claims nothing
    }
  }
  const e = err as { kind?: unknown; provider?: unknown } | null;
  if (e && typeof e === 'object' && e.kind === 'provider' && typeof e.provider === 'string') return { provider: e.provider, message: messageOf(err) };
  return undefined;
}
