// The Node.js verification snippet of docs/webhooks.md, verbatim; webhooks.routes.test.ts runs it on real deliveries.
import crypto from 'node:crypto';

export function verifyCallplaneSignature(secret: string, header: string, rawBody: string, toleranceSeconds = 300): boolean {
  const { t, v1 } = Object.fromEntries(header.split(',').map((kv) => kv.split('=', 2)));
  const expected = crypto.createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex');
  const fresh = Math.abs(Date.now() / 1000 - Number(t)) <= toleranceSeconds;
  return fresh && v1?.length === expected.length && crypto.timingSafeEqual(Buffer.from(v1), Buffer.from(expected));
}
