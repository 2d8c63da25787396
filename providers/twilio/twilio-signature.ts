/**
 * Twilio's request signature (`X-Twilio-Signature`), pure and SDK-free. Twilio's published algorithm:
 * take the full URL Twilio requested (with its query string), append every POST parameter as name + value
 * with no separators, names in sorted order (a repeated name contributes each of its values, sorted), sign
 * that string with HMAC-SHA1 keyed by the account's auth token, and base64 the digest.
 *
 * Which URL Twilio signed is not always the URL as we rebuild it, so verification follows Twilio's own
 * validator rules (its helper libraries' `validateRequest`) and tries the same candidate forms:
 * - the URL as received, with its port removed (whatever the port) and with the scheme's default port added;
 * - the WHATWG-normalized URL (which percent-encodes a `'` in the query as `%27`), with and without the port,
 *   each also with its query re-encoded the legacy way (Node's `querystring`, which leaves `'` unescaped).
 * JSON bodies are signed differently: the URL carries `bodySHA256=<hex SHA-256 of the raw body>`, the signature
 * covers that URL alone (no parameters), and the body must hash to it.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { parse as parseQuery, stringify as stringifyQuery } from 'node:querystring';

export type TwilioParams = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The signature Twilio would send for a request to `url` carrying the form `params`. */
export function computeTwilioSignature(authToken: string, url: string, params: TwilioParams = {}): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name];
    if (value === undefined) continue;
    if (typeof value === 'string') {
      data += name + value;
    } else {
      for (const v of [...new Set(value)].sort()) data += name + v;
    }
  }
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

/** Hex SHA-256 of a request body, as in Twilio's `bodySHA256` query parameter. */
export function twilioBodyHash(body: Buffer | string): string {
  return createHash('sha256').update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body).digest('hex');
}

const equalText = (a: string, b: string) => {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * True when `signature` is Twilio's signature of a form request to `url` with `params`, for any of the URL
 * forms Twilio's validator accepts (module comment). Compared in constant time; every candidate is computed
 * (no early exit). An empty or missing signature or token never verifies.
 */
export function verifyTwilioSignature(authToken: string, url: string, params: TwilioParams, signature: string | undefined | null): boolean {
  if (!authToken || !signature) return false;
  let ok = false;
  for (const candidate of twilioUrlCandidates(url)) {
    if (equalText(computeTwilioSignature(authToken, candidate, params), signature)) ok = true;
  }
  return ok;
}

/**
 * Verifies a whole Twilio webhook: when the URL carries `bodySHA256` (a JSON body), the signature over the URL
 * with no parameters and the raw body's hash (a missing body hashes as empty); otherwise the signature over the
 * URL and the form `params`. Never throws.
 */
export function verifyTwilioRequest(input: { authToken: string; url: string; params: TwilioParams; rawBody: Buffer | string | undefined; signature: string | undefined | null }): boolean {
  try {
    const bodyHash = bodySha256Of(input.url);
    if (bodyHash === null) return verifyTwilioSignature(input.authToken, input.url, input.params, input.signature);
    const signed = verifyTwilioSignature(input.authToken, input.url, {}, input.signature);
    const hashed = equalText(twilioBodyHash(input.rawBody ?? ''), bodyHash.toLowerCase());
    return signed && hashed;
  } catch {
    return false;
  }
}

/** The `bodySHA256` query parameter of `url`, or null when it has none. */
function bodySha256Of(url: string): string | null {
  const q = url.indexOf('?');
  if (q === -1) return null;
  const value = new URLSearchParams(url.slice(q + 1).split('#')[0]).get('bodySHA256');
  return value === null ? null : value;
}

interface UrlParts {
  scheme: string;
  userInfo: string;
  host: string;
  port: string;
  rest: string;
}

/** Splits a URL without normalizing it (the path and query keep the exact characters that were signed). */
function splitUrl(url: string): UrlParts | null {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)/i.exec(url);
  if (!m) return null;
  const authority = m[2]!;
  const at = authority.lastIndexOf('@');
  const hostPort = authority.slice(at + 1);
  // in an IPv6 literal the port's colon comes after the closing bracket
  const colon = hostPort.indexOf(':', hostPort.lastIndexOf(']') + 1);
  return {
    scheme: m[1]!,
    userInfo: authority.slice(0, at + 1),
    host: colon === -1 ? hostPort : hostPort.slice(0, colon),
    port: colon === -1 ? '' : hostPort.slice(colon),
    rest: url.slice(m[0].length),
  };
}

/** The URL without any port. */
function withoutPort(url: string): string {
  const p = splitUrl(url);
  return p ? p.scheme + p.userInfo + p.host + p.rest : url;
}

/** The URL with the scheme's default port when it names none (a URL with a port is unchanged). */
function withDefaultPort(url: string): string {
  const p = splitUrl(url);
  if (!p || p.port) return url;
  return `${p.scheme}${p.userInfo}${p.host}${p.scheme.toLowerCase() === 'https://' ? ':443' : ':80'}${p.rest}`;
}

/** The URL with its query re-encoded as Node's legacy `querystring` does (`'` stays, `%27` becomes `'`). */
function withLegacyQuery(url: string): string {
  const q = url.indexOf('?');
  if (q === -1 || q === url.length - 1) return url;
  return `${url.slice(0, q)}?${stringifyQuery(parseQuery(url.slice(q + 1)))}`;
}

/** Every URL form Twilio's validator tries for `url`, without duplicates. */
export function twilioUrlCandidates(url: string): string[] {
  const out = [withoutPort(url), withDefaultPort(url)];
  let normalized: string | null = null;
  try {
    normalized = new URL(url).toString();
  } catch {
    normalized = null;
  }
  if (normalized !== null) {
    const bare = withoutPort(normalized);
    const ported = withDefaultPort(normalized);
    out.push(bare, ported, withLegacyQuery(bare), withLegacyQuery(ported));
  }
  return [...new Set(out)];
}
