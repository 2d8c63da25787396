import type { ProviderManifest } from './provider-manifest.js';

/**
 * API.md section 5: every character but the last 4 becomes `*` (same length); 4 characters or fewer become
 * all `*`. Counts code points, so a mask never splits a surrogate pair.
 */
export function maskSecret(value: string): string {
  const chars = Array.from(value);
  if (chars.length <= 4) return '*'.repeat(chars.length);
  return '*'.repeat(chars.length - 4) + chars.slice(-4).join('');
}

/** Masks any credential value: strings, each string of an array, other scalars through their text; null stays null. */
export function maskValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return maskSecret(value);
  if (Array.isArray(value)) return value.map((v) => maskValue(v));
  return maskSecret(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/** The `credentials` of a response: every manifest field (null when unset), sensitive ones masked. */
export function presentCredentials(manifest: ProviderManifest, config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of manifest.fields) {
    const v = config[f.name] ?? null;
    out[f.name] = f.sensitive ? maskValue(v) : v;
  }
  return out;
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Puts the stored secret back wherever `submitted` carries exactly the mask of the stored value of a
 * sensitive field (a retrieved configuration sent back unchanged keeps its secrets); any other value,
 * including a different mask, replaces it. Returns a new object; non-sensitive fields are untouched.
 */
export function restoreMaskedSecrets(
  manifest: ProviderManifest,
  stored: Record<string, unknown>,
  submitted: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...submitted };
  for (const f of manifest.fields) {
    if (!f.sensitive || !(f.name in submitted)) continue;
    const current = stored[f.name];
    if (current === undefined || current === null) continue;
    if (sameValue(submitted[f.name], maskValue(current))) out[f.name] = current;
  }
  return out;
}

/** Names of every sensitive field across `manifests`: what logs must redact. */
export function sensitiveFieldNames(manifests: readonly ProviderManifest[]): string[] {
  return [...new Set(manifests.flatMap((m) => m.fields.filter((f) => f.sensitive).map((f) => f.name)))].sort();
}
