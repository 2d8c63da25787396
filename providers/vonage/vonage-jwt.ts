/**
 * The two JWTs of Vonage, SDK-free (node:crypto):
 * - requests to the Voice API carry `Authorization: Bearer <JWT>` signed RS256 with the application's private
 *   key, claims `application_id`, `iat`, `exp`, `jti`;
 * - signed webhooks carry `Authorization: Bearer <JWT>` signed HS256 with the account's signature secret,
 *   claims `iat`, `jti`, `iss` ("Vonage"), `api_key`, `application_id` and `payload_hash` (hex SHA-256 of the
 *   request body).
 */
import { createHash, createHmac, createPrivateKey, randomUUID, sign, timingSafeEqual } from 'node:crypto';

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** A Voice API JWT valid `ttlSeconds` from `nowSeconds`. Throws when the key is not a readable RSA private key. */
export function vonageApplicationJwt(input: { applicationId: string; privateKeyPem: string; nowSeconds: number; ttlSeconds?: number }): string {
  const key = createPrivateKey({ key: input.privateKeyPem, format: 'pem' });
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }));
  const claims = b64url(
    JSON.stringify({ application_id: input.applicationId, iat: input.nowSeconds, exp: input.nowSeconds + (input.ttlSeconds ?? 900), jti: randomUUID() }),
  );
  const signature = sign('sha256', Buffer.from(`${header}.${claims}`), key);
  return `${header}.${claims}.${b64url(signature)}`;
}

/** The claims of a JWT without checking anything (routing only: which account a webhook claims to be from). */
export function decodeJwtClaims(token: string | undefined): Record<string, unknown> | null {
  try {
    const parts = (token ?? '').split('.');
    if (parts.length !== 3) return null;
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as unknown;
    return claims && typeof claims === 'object' && !Array.isArray(claims) ? (claims as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The claims of an HS256 JWT whose signature matches `secret` (constant-time compare); null otherwise. */
export function verifyHs256Jwt(token: string | undefined, secret: string): Record<string, unknown> | null {
  try {
    if (!token || !secret) return null;
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as { alg?: unknown };
    if (header?.alg !== 'HS256') return null;
    const expected = createHmac('sha256', secret).update(`${parts[0]}.${parts[1]}`).digest();
    const given = Buffer.from(parts[2]!, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return decodeJwtClaims(token);
  } catch {
    return null;
  }
}

/** Hex SHA-256 of a webhook body, as in the `payload_hash` claim. */
export function vonagePayloadHash(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('hex');
}

/** Webhook JWT clock leeway (seconds). */
export const VONAGE_JWT_LEEWAY_SECONDS = 300;

/**
 * The replay window of a signed webhook (seconds): its `iat` must be at most this old and at most this far in
 * the future. Vonage signs each delivery when it sends it; an older token is a captured one replayed
 * (docs/security.md, "Carrier webhooks: signatures and replay").
 */
export const VONAGE_JWT_MAX_AGE_SECONDS = 300;

/**
 * True when a signed webhook's `Authorization` header is Vonage's: an HS256 JWT under `signatureSecret`, for
 * this `apiKey` (and application, when the claim is present), issued (`iat`, required) within
 * `VONAGE_JWT_MAX_AGE_SECONDS` of now either way whatever its `exp` says, not expired or not-yet-valid (with
 * leeway), and — when the request has a body — whose `payload_hash` is the SHA-256 of the exact body bytes.
 * Never throws.
 */
export function verifyVonageWebhook(input: {
  authorization: string | undefined;
  signatureSecret: string;
  apiKey: string;
  applicationId: string;
  rawBody: Buffer | undefined;
  nowSeconds: number;
}): boolean {
  try {
    const m = /^Bearer\s+(\S+)$/i.exec((input.authorization ?? '').trim());
    const claims = verifyHs256Jwt(m?.[1], input.signatureSecret);
    if (!claims) return false;
    if (claims.api_key !== input.apiKey) return false;
    if (claims.application_id !== undefined && claims.application_id !== input.applicationId) return false;
    const leeway = VONAGE_JWT_LEEWAY_SECONDS;
    if (typeof claims.exp === 'number' && claims.exp + leeway < input.nowSeconds) return false;
    if (typeof claims.nbf === 'number' && claims.nbf - leeway > input.nowSeconds) return false;
    // a token without iat cannot be dated, so it could be replayed forever: refused
    if (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat)) return false;
    if (Math.abs(input.nowSeconds - claims.iat) > VONAGE_JWT_MAX_AGE_SECONDS) return false;
    if (input.rawBody && input.rawBody.length > 0) {
      if (typeof claims.payload_hash !== 'string') return false;
      const expected = Buffer.from(vonagePayloadHash(input.rawBody), 'utf8');
      const given = Buffer.from(claims.payload_hash.toLowerCase(), 'utf8');
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) return false;
    }
    return true;
  } catch {
    return false;
  }
}
