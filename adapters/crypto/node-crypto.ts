import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import type { PasswordHasher, SecretCipher, TokenService, UrlSigner } from '../../core/ports/crypto.port.js';

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 64 };

function scryptAsync(password: string, salt: Buffer, N: number, r: number, p: number, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    // maxmem raised above 128 * N * r so larger work factors do not throw
    scrypt(password, salt, keylen, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** scrypt with a per-password random salt; the stored string is `scrypt$N$r$p$salt$digest` (base64url). */
export class ScryptPasswordHasher implements PasswordHasher {
  constructor(private readonly params = SCRYPT) {}

  async hash(password: string): Promise<string> {
    const { N, r, p, keylen } = this.params;
    const salt = randomBytes(16);
    const key = await scryptAsync(password, salt, N, r, p, keylen);
    return ['scrypt', N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const parts = stored.split('$');
    if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
    const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
    if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || N > 2 ** 20) return false;
    const expected = Buffer.from(parts[5]!, 'base64url');
    if (expected.length < 16) return false;
    const actual = await scryptAsync(password, Buffer.from(parts[4]!, 'base64url'), N, r, p, expected.length);
    return timingSafeEqual(actual, expected);
  }
}

export class NodeTokenService implements TokenService {
  randomToken(bytes = 32): string {
    return randomBytes(bytes).toString('base64url');
  }
  digest(token: string): string {
    return createHash('sha256').update(token, 'utf8').digest('hex');
  }
  equalDigests(a: string, b: string): boolean {
    const x = Buffer.from(a, 'utf8');
    const y = Buffer.from(b, 'utf8');
    return x.length === y.length && timingSafeEqual(x, y);
  }
  uuid(): string {
    return randomUUID();
  }
}

/** Derives a purpose-bound 32-byte key from the service secret (HKDF-SHA256). */
export function deriveKey(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), `callplane:${purpose}`, 32));
}

/** AES-256-GCM; output `v1.<iv>.<tag>.<ciphertext>` in base64url; `context` is the associated data. */
export class AesGcmSecretCipher implements SecretCipher {
  private readonly key: Buffer;
  constructor(secret: string) {
    this.key = deriveKey(secret, 'secrets-at-rest');
  }
  encrypt(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }
  decrypt(ciphertext: string, context: string): string {
    const [v, iv, tag, ct] = ciphertext.split('.');
    if (v !== 'v1' || iv == null || tag == null || ct == null) throw new Error('Unrecognized ciphertext');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  }
}

export class HmacUrlSigner implements UrlSigner {
  private readonly key: Buffer;
  constructor(secret: string) {
    this.key = deriveKey(secret, 'signed-urls');
  }
  sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload, 'utf8').digest('hex');
  }
  verify(payload: string, signature: string): boolean {
    if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/i.test(signature)) return false;
    return timingSafeEqual(Buffer.from(this.sign(payload), 'hex'), Buffer.from(signature, 'hex'));
  }
}
