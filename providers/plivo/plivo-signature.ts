/**
 * Plivo's webhook signature, version 3 (`X-Plivo-Signature-V3` with `X-Plivo-Signature-V3-Nonce`), written from
 * Plivo's documented algorithm:
 *
 * 1. The URL Plivo called, without its query: `scheme://host[:port]/path`.
 * 2. Its query parameters (decoded), sorted by name and then by value, as `name=value` joined by `&`.
 * 3. For a POST: the form parameters (decoded), sorted by name and then by value, as `namevalue` with no
 *    separator. GET requests sign no body.
 * 4. The signed text is: base; then `?` + sorted query when there is a query or (POST) any form parameter;
 *    then `.` when there are both; then the sorted form parameters; then `.` + nonce.
 * 5. HMAC-SHA256 with the auth token, base64. The header may hold several signatures separated by commas
 *    (while a token is rotated); any one matching is enough.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type PlivoParams = Record<string, string | string[]>;

function sortedPairs(params: PlivoParams): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const name of Object.keys(params).sort()) {
    const v = params[name]!;
    for (const value of (Array.isArray(v) ? [...v] : [v]).sort()) out.push([name, value]);
  }
  return out;
}

/** The exact text Plivo signs for this request (before HMAC). */
export function plivoV3SignedText(method: string, url: string, params: PlivoParams, nonce: string): string {
  const u = new URL(url);
  const base = `${u.protocol}//${u.host}${u.pathname}`;
  const query: PlivoParams = {};
  for (const [k, v] of u.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : [...(Array.isArray(prev) ? prev : [prev]), v];
  }
  const sortedQuery = sortedPairs(query).map(([k, v]) => `${k}=${v}`).join('&');
  const isPost = method.toUpperCase() === 'POST';
  const form = isPost ? sortedPairs(params).map(([k, v]) => `${k}${v}`).join('') : '';
  const hasForm = isPost && Object.keys(params).length > 0;
  let text = base;
  if (sortedQuery.length > 0 || hasForm) text += `?${sortedQuery}`;
  if (sortedQuery.length > 0 && hasForm) text += '.';
  return `${text}${form}.${nonce}`;
}

/** The base64 V3 signature Plivo sends for this request. */
export function computePlivoV3Signature(authToken: string, method: string, url: string, params: PlivoParams, nonce: string): string {
  return createHmac('sha256', authToken).update(plivoV3SignedText(method, url, params, nonce), 'utf8').digest('base64');
}

/** True when one of the comma-separated signatures matches. Never throws. */
export function verifyPlivoV3Signature(input: {
  authToken: string;
  method: string;
  url: string;
  params: PlivoParams;
  signature: string | undefined;
  nonce: string | undefined;
}): boolean {
  try {
    if (!input.authToken || !input.signature || !input.nonce) return false;
    const expected = Buffer.from(computePlivoV3Signature(input.authToken, input.method, input.url, input.params, input.nonce), 'utf8');
    let matched = false;
    for (const candidate of input.signature.split(',')) {
      const given = Buffer.from(candidate.trim(), 'utf8');
      if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
    }
    return matched;
  } catch {
    return false;
  }
}
