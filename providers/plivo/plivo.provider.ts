/**
 * Plivo Voice as a `TelephonyProvider`. Pure apart from the `PlivoApi` it is given (the `PlivoClient` in
 * production, the fake in tests): parsing, signatures and XML never touch the network.
 *
 * Outbound: `placeCall` makes the call with our answer URL (Plivo fetches XML there when the callee picks up;
 * `answerOutbound` returns a bidirectional `<Stream>` to the run's media WebSocket, or `<Hangup/>` for a
 * machine), the run's status URL as ring and hangup URL and, when asked, asynchronous machine detection
 * (`machine_detection=hangup`, verdict posted to the status URL). Plivo answers the request with a
 * `request_uuid`; the call's own `CallUUID` arrives in its callbacks and becomes the run's provider call id.
 * Inbound: the configured application's answer URL is our inbound webhook with `?auth_id=<Auth ID>` (Plivo's
 * callbacks do not name the account; the signed URL does); the webhook answers `inboundAnswer` (a `<Stream>`
 * whose status callback moves the run) or `inboundReject` (`<Speak>` + `<Hangup/>`).
 * Every webhook is checked with `X-Plivo-Signature-V3` against the exact public URL it was sent to.
 */
import { ProviderApiError } from '../../core/errors.js';
import { clampRingSeconds, dropUndefined, formParams, headerValue, lastParam, requireCallerNumber, syncFailure, withPlus } from '../../plugins/sdk.js';
import type {
  InboundCall,
  NormalizedCallEvent,
  PlaceCallRequest,
  PlacedCall,
  ProviderMarkup,
  TelephonyProvider,
  WebhookRequest,
} from '../../core/ports/telephony-provider.port.js';
import type { ProviderManifest } from '../../core/telephony/provider-manifest.js';
import type { PlivoClient } from './plivo.client.js';
import { verifyPlivoV3Signature, type PlivoParams } from './plivo-signature.js';
import { plivoManifest } from './plivo.manifest.js';
import { isPlivoMachine, mapPlivoCallStatus, outcomeOfHangupCause } from './plivo.status-map.js';
import { dialXml, hangupXml, PLIVO_XML_CONTENT_TYPE, politeHangupXml, streamXml } from './plivo.xml.js';
import { TRANSFER_TO_QUERY } from '../../core/calls/call-urls.js';
import { parseTransferTarget, type TransferTarget } from '../../core/calls/transfer-target.js';
import type { TransferOptions, TransferResult } from '../../core/ports/telephony-provider.port.js';

/** How long a transfer target rings when the answer URL is fetched (Plivo's `<Dial timeout>`). */
const TRANSFER_RING_SECONDS = 30;

/** The part of `PlivoClient` the provider uses (a fake implements it in unit tests). */
export type PlivoApi = Pick<
  PlivoClient,
  'createCall' | 'hangupCall' | 'cancelRequest' | 'getCall' | 'getLiveCall' | 'getNumber' | 'linkNumber' | 'getApplication' | 'setApplicationAnswerUrl' | 'getAccount' | 'transferCall'
>;

export interface PlivoProviderOptions {
  authId: string;
  authToken: string;
  /** The voice application that answers the account's numbers; null: numbers are linked by hand. */
  applicationId: string | null;
}

/** Plivo rings a call `ring_timeout` seconds; Callplane keeps it within 5..600. */
const MIN_RING_SECONDS = 5;
const MAX_RING_SECONDS = 600;
/** How many request → call id pairs an instance remembers (hang-ups and reconciliation by request id). */
const MAX_REMEMBERED_CALLS = 10_000;

/** The query parameter of our inbound URL that names the Plivo account (covered by the V3 signature). */
export const PLIVO_ACCOUNT_QUERY = 'auth_id';

export class PlivoProvider implements TelephonyProvider {
  readonly manifest: ProviderManifest = plivoManifest;
  /** request_uuid → CallUUID, learned from callbacks. */
  private readonly callOfRequest = new Map<string, string>();

  constructor(
    private readonly api: PlivoApi,
    private readonly options: PlivoProviderOptions,
  ) {}

  async placeCall(request: PlaceCallRequest): Promise<PlacedCall> {
    const from = requireCallerNumber('plivo', 'Plivo', request.from);
    const created = await this.api.createCall({
      from,
      to: request.to,
      answerUrl: request.answerUrl,
      hangupUrl: request.statusCallbackUrl,
      ringUrl: request.statusCallbackUrl,
      ringTimeoutSeconds: clampRingSeconds(request.ringTimeoutSeconds, MIN_RING_SECONDS, MAX_RING_SECONDS),
      ...(request.machineDetection ? { machineDetection: 'hangup' as const, machineDetectionUrl: request.statusCallbackUrl } : {}),
    });
    // Plivo has no idempotency key for a call request: each accepted request is a new call.
    return { providerCallId: created.requestUuid, alreadyPlaced: false };
  }

  /**
   * Ends the call. The id is a CallUUID (once a callback named it) or the request id `placeCall` returned: a
   * live call is hung up, a call that is still being set up is canceled; a call Plivo no longer has is fine.
   */
  async hangup(providerCallId: string): Promise<void> {
    const callUuid = this.callOfRequest.get(providerCallId) ?? providerCallId;
    if ((await this.api.hangupCall(callUuid)) === 'ok') return;
    await this.api.cancelRequest(providerCallId);
  }

  /**
   * Reconciliation: an ended call's record decides the outcome (answered → completed with its duration, else
   * its hang-up cause); a live call is in progress (not final, the caller waits); null when Plivo knows neither.
   */
  async getCallStatus(providerCallId: string): Promise<NormalizedCallEvent | null> {
    const callUuid = this.callOfRequest.get(providerCallId) ?? providerCallId;
    const record = await this.api.getCall(callUuid);
    if (record) {
      const cause = record.hangupCauseName ?? undefined;
      const byCause = outcomeOfHangupCause(cause);
      const outcome = record.answered ? (byCause === 'voicemail' ? 'voicemail' : 'completed') : (byCause ?? 'failed');
      return dropUndefined({
        kind: 'status' as const,
        providerCallId: record.callUuid,
        status: outcome === 'failed' ? ('failed' as const) : ('completed' as const),
        outcome,
        durationSeconds: record.durationSeconds,
        detail: `hangup_cause=${cause ?? 'none'}`,
      });
    }
    const live = await this.api.getLiveCall(callUuid);
    if (!live) return null;
    const mapped = mapPlivoCallStatus(live.callStatus);
    const status = mapped && !mapped.outcome ? mapped.status : 'in_progress';
    return { kind: 'status', providerCallId: live.callUuid, status, detail: `live at Plivo (${live.callStatus})` };
  }

  /**
   * Binding: the number is linked to the configured application, whose answer URL must be our inbound webhook
   * (with `?auth_id=`): it is set when it points elsewhere (the application is Callplane's, named in the
   * configuration). Without `application_id` nothing can be pushed: the answer is a warning saying what to set.
   * Unbinding leaves the link in place (Callplane then politely refuses the number's calls).
   */
  /** Reads the account (GET /v1/Account/{auth_id}/) with the Auth ID and Auth Token. */
  async checkCredentials(): Promise<{ ok: boolean; message: string }> {
    try {
      const account = await this.api.getAccount();
      if (account.authId !== this.options.authId) return { ok: false, message: `Plivo answered for another account (${account.authId})` };
      return { ok: true, message: `Plivo account ${account.authId}${account.name ? ` (${account.name})` : ''} is readable with these credentials` };
    } catch (err) {
      return { ok: false, message: err instanceof ProviderApiError ? err.detail : 'Plivo could not be reached' };
    }
  }

  async syncInboundWebhook(number: { address: string; addressNormalized: string; inboundUrl: string | null }): Promise<{ ok: boolean; message: string }> {
    const e164 = number.addressNormalized;
    if (!/^\+[1-9]\d{4,14}$/.test(e164)) {
      return { ok: false, message: `${number.address} is not an E.164 phone number; Plivo routes only phone numbers it rents to you` };
    }
    const appId = this.options.applicationId;
    try {
      const found = await this.api.getNumber(e164);
      if (!found) return { ok: false, message: `${e164} is not a number of Plivo account ${this.options.authId}; add it in the Console or fix the address` };
      if (number.inboundUrl === null) {
        return { ok: true, message: `${e164} stays linked to application ${found.applicationId ?? '(none)'}; Callplane no longer answers it` };
      }
      const answerUrl = this.inboundAnswerUrl(number.inboundUrl);
      if (!appId) {
        return {
          ok: false,
          message: `No application_id in this configuration: link ${e164} to a Plivo application whose answer URL is ${answerUrl} (POST), or set application_id`,
        };
      }
      const app = await this.api.getApplication(appId);
      if (!app) return { ok: false, message: `Plivo application ${appId} was not found in account ${this.options.authId}` };
      const steps: string[] = [];
      if (app.answerUrl !== answerUrl || (app.answerMethod ?? 'POST').toUpperCase() !== 'POST') {
        await this.api.setApplicationAnswerUrl(appId, answerUrl);
        steps.push(`set the answer URL of application ${appId} to ${answerUrl} (POST)`);
      }
      if (found.applicationId !== appId) {
        await this.api.linkNumber(e164, appId);
        steps.push(`linked ${e164} to application ${appId}`);
      }
      return { ok: true, message: steps.length ? `${steps.join('; ')}` : `${e164} is linked to application ${appId}, which answers at ${answerUrl}` };
    } catch (err) {
      return syncFailure(err, 'Plivo');
    }
  }

  verifyWebhook(request: WebhookRequest): boolean {
    try {
      const method = typeof request?.method === 'string' ? request.method.toUpperCase() : 'POST';
      return verifyPlivoV3Signature({
        authToken: this.options.authToken,
        method,
        url: request.publicUrl,
        params: method === 'POST' ? formParams(request.body) : {},
        signature: headerValue(request.headers, 'x-plivo-signature-v3'),
        nonce: headerValue(request.headers, 'x-plivo-signature-v3-nonce'),
      });
    } catch {
      return false;
    }
  }

  parseStatusCallback(request: WebhookRequest): NormalizedCallEvent {
    try {
      const body = formParams(request?.body);
      const callUuid = lastParam(body.CallUUID);
      const requestUuid = lastParam(body.RequestUUID) ?? lastParam(body.ALegRequestUUID);
      if (callUuid && requestUuid) this.remember(requestUuid, callUuid);
      const runId = typeof request.runId === 'number' ? request.runId : undefined;
      // placing returned the request id: a run that recorded it matches the call's own CallUUID through callIds
      const common = dropUndefined({ kind: 'status' as const, runId, providerCallId: callUuid, callIds: requestUuid ? [requestUuid] : undefined });

      const machine = isPlivoMachine(lastParam(body.Machine));
      const callStatus = lastParam(body.CallStatus);
      if (machine !== undefined && (!callStatus || callStatus.toLowerCase() === 'in-progress')) {
        // the asynchronous machine detection verdict (machine_detection_url)
        if (machine) return { ...common, status: 'completed', outcome: 'voicemail', detail: 'answered_by=machine' };
        return { ...common, status: 'in_progress', detail: 'answered_by=human' };
      }
      const streamEvent = lastParam(body.Event);
      if (!callStatus && streamEvent && lastParam(body.StreamID)) return this.parseStreamEvent(common, streamEvent, body);
      if (!callStatus) return { kind: 'ignored', reason: 'no CallStatus in the callback' };
      const mapped = mapPlivoCallStatus(callStatus);
      if (!mapped) return { kind: 'ignored', reason: `unknown Plivo CallStatus "${callStatus}"` };
      const cause = lastParam(body.HangupCause) ?? lastParam(body.HangupCauseName);
      const duration = lastParam(body.Duration);
      const seconds = duration && /^\d+$/.test(duration) ? Number(duration) : undefined;
      let outcome = mapped.outcome;
      if (outcome === 'completed') {
        // Plivo may report an unanswered call as `completed`: the cause (and no talk time) says what it was.
        const byCause = outcomeOfHangupCause(cause);
        if (machine) outcome = 'voicemail';
        else if (byCause && (byCause === 'voicemail' || !seconds)) outcome = byCause;
      }
      const details: string[] = [];
      if (cause) details.push(`hangup_cause=${cause}`);
      const source = lastParam(body.HangupSource);
      if (source) details.push(`hangup_source=${source}`);
      if (machine !== undefined) details.push(`answered_by=${machine ? 'machine' : 'human'}`);
      return dropUndefined({
        ...common,
        status: mapped.status,
        outcome,
        durationSeconds: outcome ? seconds : undefined,
        detail: details.length ? details.join(' ') : undefined,
      });
    } catch {
      return { kind: 'ignored', reason: 'unreadable Plivo callback' };
    }
  }

  parseInboundCall(request: WebhookRequest): InboundCall | { ignored: string } {
    return parsePlivoInboundCall(request);
  }

  /**
   * A `<Stream>` for an inbound call. Plivo calls no per-call hangup URL of ours for inbound calls, so the
   * stream's status callback (started/stopped) goes to the run's status URL.
   */
  inboundAnswer(input: { runId: number; providerCallId?: string; mediaUrl: string; statusCallbackUrl: string }): ProviderMarkup {
    return { contentType: PLIVO_XML_CONTENT_TYPE, body: streamXml({ mediaUrl: input.mediaUrl, statusCallbackUrl: input.statusCallbackUrl }) };
  }

  /**
   * The XML of an outbound call's answer URL. With asynchronous machine detection the verdict arrives at the
   * status URL (and Plivo hangs up on a machine); a `Machine=true` already present here hangs up at once.
   */
  answerOutbound(request: WebhookRequest, input: { runId: number; mediaUrl: string; statusCallbackUrl: string }): ProviderMarkup {
    const body = formParams(request?.body);
    const callUuid = lastParam(body.CallUUID);
    const requestUuid = lastParam(body.RequestUUID) ?? lastParam(body.ALegRequestUUID);
    if (callUuid && requestUuid) this.remember(requestUuid, callUuid);
    if (isPlivoMachine(lastParam(body.Machine))) return { contentType: PLIVO_XML_CONTENT_TYPE, body: hangupXml() };
    const transferTo = request?.query?.[TRANSFER_TO_QUERY];
    if (transferTo !== undefined) {
      // a transfer's aleg_url (CallUrls.transferAnswer): dial the target; the signature covered the query
      const target = parseTransferTarget(transferTo);
      // the target sees our number: the one the caller dialed (inbound), or the one we called from (outbound)
      const from = (lastParam(body.Direction) === 'outbound' ? lastParam(body.From) : lastParam(body.To)) ?? null;
      return {
        contentType: PLIVO_XML_CONTENT_TYPE,
        body: target ? dialXml({ target, callerId: from, timeoutSeconds: TRANSFER_RING_SECONDS }) : hangupXml(),
      };
    }
    return { contentType: PLIVO_XML_CONTENT_TYPE, body: streamXml({ mediaUrl: input.mediaUrl }) };
  }

  /**
   * Cold transfer (docs/voice.md "Transfers"): Plivo's transfer of the A leg to `options.answerUrl` (our answer
   * route with `?transfer_to=`), which `answerOutbound` answers with `<Dial>` to the target. The id may be the
   * request id `placeCall` returned: the CallUUID learned from callbacks is used. Refusals are results: 404
   * `call_not_active`, other 4xx `carrier_refused`, unreachable after retries `unreachable`.
   */
  async transfer(providerCallId: string, _target: TransferTarget, options: TransferOptions): Promise<TransferResult> {
    const callUuid = this.callOfRequest.get(providerCallId) ?? providerCallId;
    try {
      const result = await this.api.transferCall(callUuid, options.answerUrl);
      if (result.ok) return { ok: true, detail: 'Plivo transferred the call to the dial instructions' };
      return { ok: false, reason: result.status === 404 ? 'call_not_active' : 'carrier_refused', detail: `Plivo ${result.detail}` };
    } catch (err) {
      return { ok: false, reason: 'unreachable', detail: err instanceof ProviderApiError ? err.detail : 'Plivo could not be reached' };
    }
  }

  inboundReject(_reason: string): ProviderMarkup {
    return { contentType: PLIVO_XML_CONTENT_TYPE, body: politeHangupXml() };
  }

  async close(): Promise<void> {
    this.callOfRequest.clear();
  }

  /** Our inbound URL as the application's answer URL: with the account in the (signed) query. */
  inboundAnswerUrl(inboundUrl: string): string {
    const u = new URL(inboundUrl);
    u.searchParams.set(PLIVO_ACCOUNT_QUERY, this.options.authId);
    return u.toString();
  }

  /** The `<Stream>` status callback of an inbound call: the stream is the whole call. */
  private parseStreamEvent(common: { kind: 'status'; runId?: number; providerCallId?: string }, event: string, body: PlivoParams): NormalizedCallEvent {
    const e = event.toLowerCase();
    if (e === 'started' || e === 'startstream') return { ...common, status: 'in_progress', detail: 'media stream started' };
    if (e === 'stopped' || e === 'stopstream') {
      const duration = lastParam(body.Duration);
      return dropUndefined({ ...common, status: 'completed' as const, outcome: 'completed' as const, durationSeconds: duration && /^\d+$/.test(duration) ? Number(duration) : undefined, detail: 'media stream stopped' });
    }
    const reason = lastParam(body.StatusReason);
    return { kind: 'ignored', reason: `media stream event ${event}${reason ? `: ${reason}` : ''}` };
  }

  private remember(requestUuid: string, callUuid: string): void {
    if (this.callOfRequest.get(requestUuid) === callUuid) return;
    this.callOfRequest.set(requestUuid, callUuid);
    if (this.callOfRequest.size > MAX_REMEMBERED_CALLS) this.callOfRequest.delete(this.callOfRequest.keys().next().value as string);
  }
}

// ---------------------------------------------------------------------------------------------------------

/**
 * Plivo's answer-URL request for an incoming call (CallUUID, From, To, Direction=inbound) as an inbound call.
 * The account is the `auth_id` query parameter of our inbound URL (see `inboundAnswerUrl`). Pure; never throws.
 */
export function parsePlivoInboundCall(request: WebhookRequest): InboundCall | { ignored: string } {
  try {
    const body = formParams(request?.body);
    const callUuid = lastParam(body.CallUUID);
    const to = lastParam(body.To);
    if (!callUuid) return { ignored: 'no CallUUID in the inbound webhook' };
    if (!to) return { ignored: 'no To in the inbound webhook' };
    const direction = lastParam(body.Direction);
    if (direction && direction.toLowerCase() !== 'inbound') return { ignored: `not an inbound call (Direction ${direction})` };
    const query = request.query && typeof request.query === 'object' ? request.query : {};
    const account = typeof query[PLIVO_ACCOUNT_QUERY] === 'string' && query[PLIVO_ACCOUNT_QUERY] ? query[PLIVO_ACCOUNT_QUERY] : null;
    return { providerCallId: callUuid, from: withPlus(lastParam(body.From) ?? ''), to: withPlus(to), accountId: account };
  } catch {
    return { ignored: 'unreadable Plivo inbound webhook' };
  }
}
