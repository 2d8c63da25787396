/**
 * Twilio's request signature (`X-Twilio-Signature`), pure and SDK-free. Twilio's published algorithm:
 * take the full URL Twilio requested (with its query string), append every POST parameter as name + value
 * with no separators, names in sorted order (a repeated name contributes each of its values, sorted), sign
 * that string with HMAC-SHA1 keyed by the account's auth token, and base64 the digest.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

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

/**
 * True when `signature` is Twilio's signature of the request, compared in constant time. Twilio may have
 * signed the URL with or without the scheme's default port (depending on how the webhook URL was written),
 * so both forms are accepted. An empty or missing signature never verifies.
 */
export function verifyTwilioSignature(authToken: string, url: string, params: TwilioParams, signature: string | undefined | null): boolean {
  if (!authToken || !signature) return false;
  const given = Buffer.from(signature, 'utf8');
  let ok = false;
  for (const candidate of urlVariants(url)) {
    const expected = Buffer.from(computeTwilioSignature(authToken, candidate, params), 'utf8');
    // Evaluate every candidate (no early exit) so timing does not depend on which one matched.
    if (expected.length === given.length && timingSafeEqual(expected, given)) ok = true;
  }
  return ok;
}

/** The URL as given, plus the same URL with the default port added or removed (text otherwise untouched). */
function urlVariants(url: string): string[] {
  const m = /^(https?):\/\/([^/?#@]*@)?(\[[^\]]*\]|[^/?#:]*)(:\d+)?(.*)$/i.exec(url);
  if (!m) return [url];
  const [, scheme, userInfo = '', host, port, rest] = m;
  const defaultPort = scheme.toLowerCase() === 'https' ? ':443' : ':80';
  const prefix = `${scheme}://${userInfo}${host}`;
  if (!port) return [url, prefix + defaultPort + rest];
  if (port === defaultPort) return [url, prefix + rest];
  return [url];
}
