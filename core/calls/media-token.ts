import type { Clock } from '../ports/clock.port.js';
import type { UrlSigner } from '../ports/crypto.port.js';

/** How long a media token stays valid by default: long enough for an outbound call to ring and be answered. */
export const DEFAULT_MEDIA_TOKEN_TTL_SECONDS = 900;

export type MediaTokenCheck = 'valid' | 'expired' | 'invalid';

/** The string a media token's HMAC covers: what it grants (streaming into this run of this provider) and until when. */
export const mediaTokenPayload = (provider: string, runId: number, expires: number): string => `MEDIA\n${provider}\n${runId}\n${expires}`;

const TOKEN = /^(\d{1,12})\.([0-9a-f]{64})$/;

/**
 * Tokens that let a provider stream one call's audio into `/api/v1/telephony/<provider>/media/<run_id>`. Our
 * own answer markup carries them (Twilio: a `<Parameter name="token">` of the `<Stream>`, since Twilio refuses
 * query strings on stream URLs; other providers: `?token=` on the URL), so nobody can stream into a run they
 * were not given. A token is `<expires unix seconds>.<hex HMAC-SHA256>` over `mediaTokenPayload`, checked in
 * constant time by the `UrlSigner`. Pure apart from the clock; never throws.
 */
export class MediaTokens {
  constructor(
    private readonly signer: UrlSigner,
    private readonly clock: Clock,
    readonly ttlSeconds: number = DEFAULT_MEDIA_TOKEN_TTL_SECONDS,
  ) {}

  /** A token for streaming into `runId` through `provider`, valid `ttlSeconds` from now. */
  issue(provider: string, runId: number): string {
    const expires = Math.floor(this.clock.now().getTime() / 1000) + this.ttlSeconds;
    return `${expires}.${this.signer.sign(mediaTokenPayload(provider, runId, expires))}`;
  }

  /** `valid` only for an untampered token of exactly this provider and run that has not expired. */
  verify(provider: string, runId: number, token: unknown): MediaTokenCheck {
    if (typeof token !== 'string') return 'invalid';
    const m = TOKEN.exec(token);
    if (!m) return 'invalid';
    const expires = Number(m[1]);
    // the signature first: an expired forgery is "invalid", and only a genuine token learns it expired
    if (!this.signer.verify(mediaTokenPayload(provider, runId, expires), m[2]!)) return 'invalid';
    return expires < Math.floor(this.clock.now().getTime() / 1000) ? 'expired' : 'valid';
  }

  /** `mediaUrl` with `token=<token>` added to its query string (other query parameters kept). */
  signUrl(provider: string, runId: number, mediaUrl: string): string {
    const token = this.issue(provider, runId);
    return `${mediaUrl}${mediaUrl.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
  }
}
