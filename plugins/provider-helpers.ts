/**
 * Small pure helpers that telephony providers need alike when they read webhooks and place calls. Exported
 * from the provider SDK (plugins/sdk.ts), so a third-party plugin gets the same behaviour as the built-ins.
 */
import { ProviderApiError } from '../core/errors.js';

/** A webhook header by its lower-case name, whatever case the request used (first value of a list). */
export function headerValue(headers: Record<string, string> | undefined | null, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return Array.isArray(v) ? String(v[0]) : String(v);
  return undefined;
}

/**
 * A parsed form body as a webhook signature sees it: string values, repeated keys as arrays; null, undefined
 * and nested objects are left out. Anything but a plain object (an array included) gives no parameters.
 */
export function formParams(body: Record<string, unknown> | undefined | null): Record<string, string | string[]> {
  const out = Object.create(null) as Record<string, string | string[]>;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return out;
  for (const [k, v] of Object.entries(body)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) out[k] = v.map((x) => String(x));
    else if (typeof v === 'object') continue;
    else out[k] = String(v);
  }
  return out;
}

/** The last value of a form parameter (repeated keys: the last one wins); undefined when absent or empty. */
export function lastParam(v: string | string[] | undefined): string | undefined {
  const s = Array.isArray(v) ? v[v.length - 1] : v;
  return s === undefined || s === '' ? undefined : s;
}

/** A JSON field as a trimmed string; undefined when it is not a string or is blank. */
export function trimmedString(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/** A configuration field as a trimmed string ('' when it is not a string). */
export function configString(v: unknown): string {
  return typeof v === 'string' ? v.trim() : '';
}

/** E.164 digits written without `+` (`14155550100`) get it back; anything else (SIP addresses, ...) is unchanged. */
export function withPlus(n: string): string {
  return /^[1-9]\d{6,14}$/.test(n) ? `+${n}` : n;
}

/** Deletes the keys whose value is undefined (in place) and returns the object. */
export function dropUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

/** The ring timeout in whole seconds within the provider's bounds. */
export function clampRingSeconds(seconds: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(seconds)));
}

/** The call's caller number; a `ProviderApiError` naming the fix when there is none. */
export function requireCallerNumber(provider: string, name: string, from: string | null | undefined): string {
  if (!from) {
    throw new ProviderApiError(provider, `${name} needs a caller number: give the campaign or configuration a default caller phone number`);
  }
  return from;
}

/** `syncInboundWebhook`'s answer when the provider call failed: the error's (redacted) detail, or that `name` was unreachable. */
export function syncFailure(err: unknown, name: string): { ok: false; message: string } {
  return { ok: false, message: err instanceof ProviderApiError ? err.detail : `${name} could not be reached to update the number` };
}
