import type { MediaTokens } from './media-token.js';

/** The URLs of one call a provider is given: where it posts statuses, fetches instructions and streams audio. */
export interface CallUrlSet {
  /** `POST /api/v1/telephony/<provider>/status/<run_id>` (the provider's own signature protects it). */
  statusCallbackUrl: string;
  /** `POST /api/v1/telephony/<provider>/answer/<run_id>` (TwiML-style instructions when the callee answers). */
  answerUrl: string;
  /** `wss://…/api/v1/telephony/<provider>/media/<run_id>?token=…`: carries a fresh per-run media token. */
  mediaUrl: string;
}

/** The query parameter of a transfer answer URL naming the target (`CallUrls.transferAnswer`). */
export const TRANSFER_TO_QUERY = 'transfer_to';

const telephonyBase = (publicUrl: string): string => `${publicUrl.replace(/\/+$/, '')}/api/v1/telephony`;

/** `POST /api/v1/telephony/<provider>/inbound`: where a provider sends the calls of the numbers bound to agents. */
export const inboundWebhookUrl = (publicUrl: string, provider: string): string => `${telephonyBase(publicUrl)}/${provider}/inbound`;

/**
 * The one builder of every URL of ours a telephony provider is given (docs/security.md): inbound webhook,
 * status callback, answer URL and media WebSocket. The media URL always carries a per-run HMAC token
 * (core/calls/media-token.ts), because some providers put it straight into the call (Vonage's NCCO, Telnyx's
 * `stream_url`) and the media endpoint refuses a URL without one; providers whose stream URLs cannot carry a
 * query string (Twilio) move the token into their markup. Pure apart from the token's expiry clock.
 */
export class CallUrls {
  private readonly base: string;

  constructor(
    private readonly publicUrl: string,
    private readonly tokens: Pick<MediaTokens, 'signUrl'>,
  ) {
    this.base = telephonyBase(publicUrl);
  }

  inbound(provider: string): string {
    return inboundWebhookUrl(this.publicUrl, provider);
  }

  status(provider: string, runId: number): string {
    return `${this.base}/${provider}/status/${runId}`;
  }

  answer(provider: string, runId: number): string {
    return `${this.base}/${provider}/answer/${runId}`;
  }

  /**
   * The answer URL of a hand-over (docs/voice.md "Transfers"): the run's answer URL with `?transfer_to=<target>`,
   * for carriers that move a live call to instructions fetched from a URL (Plivo); the provider's signature covers
   * the query, and the provider's `answerOutbound` answers it with the dial markup for that target.
   */
  transferAnswer(provider: string, runId: number, target: string): string {
    return `${this.answer(provider, runId)}?${TRANSFER_TO_QUERY}=${encodeURIComponent(target)}`;
  }

  /** The run's media WebSocket URL (`ws`/`wss` as the public URL is `http`/`https`) with a fresh token. */
  media(provider: string, runId: number): string {
    return this.tokens.signUrl(provider, runId, `${this.base.replace(/^http/, 'ws')}/${provider}/media/${runId}`);
  }

  /** Every URL of one call, the media URL signed. */
  forCall(provider: string, runId: number): CallUrlSet {
    return { statusCallbackUrl: this.status(provider, runId), answerUrl: this.answer(provider, runId), mediaUrl: this.media(provider, runId) };
  }
}
