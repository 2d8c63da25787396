/**
 * Twilio as a `TelephonyProvider`. Pure apart from the `TwilioApi` it is given (the `TwilioClient` in
 * production, a fake in tests): parsing, signatures and TwiML never touch the network.
 *
 * Outbound: `placeCall` creates the call with our answer URL (Twilio fetches TwiML from it when the callee
 * picks up; `answerOutbound` returns `<Connect><Stream>` or, for an answering machine, `<Hangup/>`), a
 * status callback for initiated/ringing/answered/completed and, when asked, answering machine detection.
 * Inbound: the number's VoiceUrl points at our inbound webhook (`syncInboundWebhook`); the webhook answers
 * `inboundAnswer` or `inboundReject` TwiML. Every webhook is checked with `X-Twilio-Signature` against the
 * exact public URL it was sent to.
 */
import { clampRingSeconds, dropUndefined, formParams, headerValue, lastParam, requireCallerNumber, syncFailure } from '../../plugins/sdk.js';
import { ProviderApiError } from '../../core/errors.js';
import type { ProviderManifest } from '../../core/telephony/provider-manifest.js';
import type {
  InboundCall,
  NormalizedCallEvent,
  PlaceCallRequest,
  PlacedCall,
  ProviderMarkup,
  TelephonyProvider,
  WebhookRequest,
} from '../../core/ports/telephony-provider.port.js';
import type { TwilioClient } from './twilio.client.js';
import { verifyTwilioRequest, type TwilioParams } from './twilio-signature.js';
import { twilioManifest } from './twilio.manifest.js';
import { isMachineAnswer, mapTwilioStatus, twilioAmdResult } from './twilio.status-map.js';
import { TWIML_CONTENT_TYPE, connectStreamTwiml, dialTwiml, hangupTwiml, politeHangupTwiml } from './twilio.twiml.js';
import type { TransferTarget } from '../../core/calls/transfer-target.js';
import type { TransferOptions, TransferResult } from '../../core/ports/telephony-provider.port.js';

/** The part of `TwilioClient` the provider uses (a fake implements it in unit tests). */
export type TwilioApi = Pick<TwilioClient, 'createCall' | 'hangupCall' | 'getCallStatus' | 'findIncomingNumber' | 'setIncomingNumberVoiceUrl' | 'fetchAccount' | 'updateCallTwiml'>;

export interface TwilioProviderOptions {
  accountSid: string;
  authToken: string;
  /** Our public base URL (CALLPLANE_PUBLIC_URL): `syncInboundWebhook` only clears voice URLs that point at it. */
  publicUrl: string;
}

/** Twilio accepts a ring timeout of 5..600 seconds. */
const MIN_RING_SECONDS = 5;
const MAX_RING_SECONDS = 600;

export class TwilioProvider implements TelephonyProvider {
  readonly manifest: ProviderManifest = twilioManifest;

  constructor(
    private readonly api: TwilioApi,
    private readonly options: TwilioProviderOptions,
  ) {}

  async placeCall(request: PlaceCallRequest): Promise<PlacedCall> {
    const from = requireCallerNumber('twilio', 'Twilio', request.from);
    const created = await this.api.createCall({
      to: request.to,
      from,
      url: request.answerUrl,
      method: 'POST',
      statusCallback: request.statusCallbackUrl,
      statusCallbackEvents: ['initiated', 'ringing', 'answered', 'completed'],
      statusCallbackMethod: 'POST',
      // the agent's session acts on the verdict (docs/voicemail.md): async AMD to the status URL, the call stays
      // connected and the greeting's end (beep or silence) is reported; else the answer URL hangs up on a machine
      ...(request.asyncMachineDetection
        ? { machineDetection: 'DetectMessageEnd' as const, asyncAmd: true, asyncAmdStatusCallback: request.statusCallbackUrl }
        : request.machineDetection ? { machineDetection: 'Enable' as const } : {}),
      timeoutSeconds: clampRingSeconds(request.ringTimeoutSeconds, MIN_RING_SECONDS, MAX_RING_SECONDS),
    });
    // Twilio has no idempotency key for call creation: each accepted request is a new call.
    return { providerCallId: created.sid, alreadyPlaced: false };
  }

  async hangup(providerCallId: string): Promise<void> {
    await this.api.hangupCall(providerCallId);
  }

  /**
   * Cold transfer (docs/voice.md "Transfers"): the live call's TwiML becomes `<Dial>` to the target (`<Number>` or
   * `<Sip>`), which ends our media stream and bridges the caller; the call ends when that dial does. Twilio's
   * refusal is a result: 21220 / 404 `call_not_active`, any other 4xx `carrier_refused`; unreachable after retries
   * `unreachable`.
   */
  async transfer(providerCallId: string, target: TransferTarget, options: TransferOptions): Promise<TransferResult> {
    const twiml = dialTwiml({ target, callerId: options.callerId, timeoutSeconds: clampRingSeconds(options.ringTimeoutSeconds, MIN_RING_SECONDS, MAX_RING_SECONDS) });
    try {
      const result = await this.api.updateCallTwiml(providerCallId, twiml);
      if (result.ok) return { ok: true, detail: `Twilio call ${result.status}` };
      const detail = `Twilio HTTP ${result.httpStatus}${result.code !== null ? ` error ${result.code}` : ''}: ${result.message}`;
      const gone = result.code === 21220 || result.httpStatus === 404;
      return { ok: false, reason: gone ? 'call_not_active' : 'carrier_refused', detail };
    } catch (err) {
      return { ok: false, reason: 'unreachable', detail: err instanceof ProviderApiError ? err.detail : 'Twilio could not be reached' };
    }
  }

  async getCallStatus(providerCallId: string): Promise<NormalizedCallEvent | null> {
    const info = await this.api.getCallStatus(providerCallId);
    if (!info) return null;
    const mapped = mapTwilioStatus(info.status, info.answeredBy);
    if (!mapped) return { kind: 'ignored', reason: `unknown Twilio call status "${info.status}"` };
    return dropUndefined({
      kind: 'status' as const,
      providerCallId: info.sid,
      status: mapped.status,
      outcome: mapped.outcome,
      durationSeconds: mapped.outcome ? info.durationSeconds : undefined,
      detail: info.answeredBy ? `answered_by=${info.answeredBy}` : undefined,
    });
  }

  /** Fetches the account with the SID and auth token: only an active account of that SID passes. */
  async checkCredentials(): Promise<{ ok: boolean; message: string }> {
    try {
      const account = await this.api.fetchAccount();
      if (account.sid !== this.options.accountSid) return { ok: false, message: `Twilio answered for another account (${account.sid})` };
      if (account.status !== 'active') return { ok: false, message: `Twilio account ${account.sid} is ${account.status || 'not active'}` };
      return { ok: true, message: `Twilio account ${account.sid}${account.friendlyName ? ` (${account.friendlyName})` : ''} is active` };
    } catch (err) {
      return { ok: false, message: err instanceof ProviderApiError ? err.detail : 'Twilio could not be reached' };
    }
  }

  async syncInboundWebhook(number: { address: string; addressNormalized: string; inboundUrl: string | null }): Promise<{ ok: boolean; message: string }> {
    const e164 = number.addressNormalized;
    if (!/^\+[1-9]\d{4,14}$/.test(e164)) {
      return { ok: false, message: `${number.address} is not an E.164 phone number; Twilio routes only phone numbers it owns` };
    }
    try {
      const found = await this.api.findIncomingNumber(e164);
      if (!found) {
        return { ok: false, message: `${e164} is not an incoming phone number of Twilio account ${this.options.accountSid}; set its voice webhook by hand` };
      }
      if (number.inboundUrl === null) {
        if (found.voiceUrl === null) return { ok: true, message: `${e164} has no voice webhook; nothing to clear` };
        if (!this.isOurs(found.voiceUrl)) {
          return { ok: true, message: `${e164} voice webhook points elsewhere (${found.voiceUrl}); left unchanged` };
        }
        await this.api.setIncomingNumberVoiceUrl(found.sid, null, 'POST');
        return { ok: true, message: `Cleared the voice webhook of ${e164}` };
      }
      if (found.voiceUrl === number.inboundUrl && found.voiceMethod.toUpperCase() === 'POST') {
        return { ok: true, message: `${e164} already sends calls to ${number.inboundUrl}` };
      }
      await this.api.setIncomingNumberVoiceUrl(found.sid, number.inboundUrl, 'POST');
      return { ok: true, message: `Set the voice webhook of ${e164} to ${number.inboundUrl} (POST)` };
    } catch (err) {
      return syncFailure(err, 'Twilio');
    }
  }

  verifyWebhook(request: WebhookRequest): boolean {
    try {
      const signature = headerValue(request.headers, 'x-twilio-signature');
      // Twilio signs the POST form fields; a GET webhook carries them in the URL, which is signed as is; a JSON
      // body is signed through the URL's bodySHA256 (twilio-signature.ts)
      const params: TwilioParams = request.method.toUpperCase() === 'POST' ? formParams(request.body) : {};
      return verifyTwilioRequest({ authToken: this.options.authToken, url: request.publicUrl, params, rawBody: request.rawBody, signature });
    } catch {
      return false;
    }
  }

  parseStatusCallback(request: WebhookRequest): NormalizedCallEvent {
    try {
      const body = formParams(request.body);
      const accountSid = lastParam(body.AccountSid);
      if (accountSid && accountSid !== this.options.accountSid) return { kind: 'ignored', reason: 'callback of another Twilio account' };
      const callStatus = lastParam(body.CallStatus);
      const callSid = lastParam(body.CallSid);
      if (!callStatus && lastParam(body.StreamEvent)) return this.parseStreamEvent(body, request.runId);
      const answeredBy = lastParam(body.AnsweredBy);
      // the async AMD callback (AsyncAmdStatusCallback): a verdict on an answered call, no CallStatus
      const amd = twilioAmdResult(answeredBy, lastParam(body.MachineDetectionDuration));
      if (!callStatus && amd) {
        return dropUndefined({ kind: 'status' as const, runId: request.runId, providerCallId: callSid, status: 'in_progress' as const, amd, detail: `answered_by=${answeredBy}` });
      }
      if (!callStatus) return { kind: 'ignored', reason: 'no CallStatus in the callback' };
      const mapped = mapTwilioStatus(callStatus, answeredBy);
      if (!mapped) return { kind: 'ignored', reason: `unknown Twilio CallStatus "${callStatus}"` };
      const duration = lastParam(body.CallDuration);
      const at = parseTimestamp(lastParam(body.Timestamp));
      const details: string[] = [];
      if (answeredBy) details.push(`answered_by=${answeredBy}`);
      const sipCode = lastParam(body.SipResponseCode);
      if (sipCode) details.push(`sip=${sipCode}`);
      const errorCode = lastParam(body.ErrorCode);
      if (errorCode) details.push(`twilio_error=${errorCode}`);
      return dropUndefined({
        kind: 'status' as const,
        runId: request.runId,
        providerCallId: callSid,
        status: mapped.status,
        outcome: mapped.outcome,
        durationSeconds: mapped.outcome && duration && /^\d+$/.test(duration) ? Number(duration) : undefined,
        at,
        detail: details.length > 0 ? details.join(' ') : undefined,
        // a verdict on a live call reaches its session too; on a final status it is the outcome (voicemail)
        amd: mapped.outcome ? undefined : amd ?? undefined,
      });
    } catch {
      return { kind: 'ignored', reason: 'unreadable Twilio callback' };
    }
  }

  parseInboundCall(request: WebhookRequest): InboundCall | { ignored: string } {
    return parseTwilioInboundCall(request);
  }

  /**
   * `<Connect><Stream>` for an inbound call. Twilio has no per-call status callback for inbound calls, so the
   * stream's status callback (`stream-started`/`stream-stopped`) goes to the run's status URL.
   */
  inboundAnswer(input: { runId: number; providerCallId?: string; mediaUrl: string; statusCallbackUrl: string }): ProviderMarkup {
    return {
      contentType: TWIML_CONTENT_TYPE,
      body: connectStreamTwiml({ mediaUrl: input.mediaUrl, runId: input.runId, streamStatusCallbackUrl: input.statusCallbackUrl }),
    };
  }

  inboundReject(_reason: string): ProviderMarkup {
    return { contentType: TWIML_CONTENT_TYPE, body: politeHangupTwiml() };
  }

  /**
   * The TwiML of an outbound call's answer URL. With answering machine detection on, Twilio's request
   * carries `AnsweredBy`: a machine gets `<Hangup/>` (the completed callback then reports `voicemail`),
   * anyone else is connected to the agent's media stream.
   */
  answerOutbound(request: WebhookRequest, input: { runId: number; mediaUrl: string; statusCallbackUrl?: string }): ProviderMarkup {
    const answeredBy = lastParam(formParams(request.body).AnsweredBy) ?? request.query?.AnsweredBy;
    if (isMachineAnswer(answeredBy)) return { contentType: TWIML_CONTENT_TYPE, body: hangupTwiml() };
    // outbound calls have their own status callback: no stream status callback here
    return { contentType: TWIML_CONTENT_TYPE, body: connectStreamTwiml({ runId: input.runId, mediaUrl: input.mediaUrl }) };
  }

  async close(): Promise<void> {
    // Stateless: nothing to release.
  }

  /**
   * A `<Stream>` status callback (inbound calls): the stream is the whole call, so `stream-started` means
   * connected and `stream-stopped` means the call ended normally. Its duration comes from the run's times.
   */
  private parseStreamEvent(body: Record<string, string | string[]>, runId: number | undefined): NormalizedCallEvent {
    const streamEvent = lastParam(body.StreamEvent);
    const at = parseTimestamp(lastParam(body.Timestamp));
    const common = dropUndefined({ kind: 'status' as const, runId, providerCallId: lastParam(body.CallSid), at });
    if (streamEvent === 'stream-started') return { ...common, status: 'in_progress', detail: 'media stream started' };
    if (streamEvent === 'stream-stopped') return { ...common, status: 'completed', outcome: 'completed', detail: 'media stream stopped' };
    const error = lastParam(body.StreamError);
    return { kind: 'ignored', reason: `media stream event ${streamEvent ?? ''}${error ? `: ${error}` : ''}`.trim() };
  }

  private isOurs(url: string): boolean {
    const base = this.options.publicUrl.replace(/\/+$/, '');
    return url === base || url.startsWith(`${base}/`);
  }
}

// ---------------------------------------------------------------------------------------------------------

/** Twilio's inbound voice webhook (From, To, CallSid, AccountSid) as an inbound call. Pure; never throws. */
export function parseTwilioInboundCall(request: WebhookRequest): InboundCall | { ignored: string } {
  try {
    const body = formParams(request.body);
    const callSid = lastParam(body.CallSid);
    const from = lastParam(body.From);
    const to = lastParam(body.To) ?? lastParam(body.Called);
    if (!callSid) return { ignored: 'no CallSid in the inbound webhook' };
    if (!to) return { ignored: 'no To in the inbound webhook' };
    const direction = lastParam(body.Direction);
    if (direction && direction !== 'inbound') return { ignored: `not an inbound call (Direction ${direction})` };
    return { providerCallId: callSid, from: from ?? '', to, accountId: lastParam(body.AccountSid) ?? null };
  } catch {
    return { ignored: 'unreadable Twilio inbound webhook' };
  }
}

/** Twilio's `Timestamp` is RFC 2822 (`Mon, 16 Aug 2010 03:45:01 +0000`). */
function parseTimestamp(value: string | undefined): Date | undefined {
  if (!value) return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : new Date(t);
}
