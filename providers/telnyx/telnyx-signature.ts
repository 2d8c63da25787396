/**
 * Telnyx webhook signatures, SDK-free: Telnyx signs `${telnyx-timestamp}|${raw body}` with Ed25519 and sends
 * the base64 signature in `telnyx-signature-ed25519`. The account's public key is published in the Portal as
 * the base64 of the 32 raw key bytes; node:crypto takes it wrapped as an SPKI DER structure.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/** DER prefix of an SPKI structure holding an Ed25519 key (RFC 8410): SEQUENCE { AlgorithmIdentifier 1.3.101.112, BIT STRING }. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * The replay window between `telnyx-timestamp` and now (seconds), either way. A `toleranceSeconds` option can
 * only narrow it (docs/security.md, "Carrier webhooks: signatures and replay").
 */
export const TELNYX_TIMESTAMP_TOLERANCE_SECONDS = 300;

/** The public key object of a base64 raw (32 bytes) or base64 SPKI DER Ed25519 key; null when unreadable. */
export function telnyxPublicKey(base64: string): KeyObject | null {
  try {
    const raw = Buffer.from(base64.trim(), 'base64');
    const der = raw.length === 32 ? Buffer.concat([ED25519_SPKI_PREFIX, raw]) : raw;
    const key = createPublicKey({ key: der, format: 'der', type: 'spki' });
    return key.asymmetricKeyType === 'ed25519' ? key : null;
  } catch {
    return null;
  }
}

/**
 * True when `signature` is Telnyx's Ed25519 signature of `timestamp|rawBody` under `publicKey` and the
 * timestamp is within `toleranceSeconds` (at most `TELNYX_TIMESTAMP_TOLERANCE_SECONDS`) of `nowSeconds`.
 * Never throws; missing parts never verify.
 */
export function verifyTelnyxSignature(input: {
  publicKey: KeyObject | null;
  rawBody: Buffer | string | undefined;
  signature: string | undefined;
  timestamp: string | undefined;
  nowSeconds: number;
  toleranceSeconds?: number;
}): boolean {
  try {
    const { publicKey, rawBody, signature, timestamp } = input;
    if (!publicKey || rawBody === undefined || !signature || !timestamp || !/^\d{1,12}$/.test(timestamp.trim())) return false;
    const age = Math.abs(input.nowSeconds - Number(timestamp.trim()));
    if (!(age <= Math.min(input.toleranceSeconds ?? TELNYX_TIMESTAMP_TOLERANCE_SECONDS, TELNYX_TIMESTAMP_TOLERANCE_SECONDS))) return false;
    const sig = Buffer.from(signature.trim(), 'base64');
    if (sig.length !== 64) return false;
    const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
    const signed = Buffer.concat([Buffer.from(`${timestamp.trim()}|`, 'utf8'), body]);
    return verify(null, signed, publicKey, sig);
  } catch {
    return false;
  }
}
