/**
 * Vonage Voice as a `TelephonyProvider`. Pure apart from the `VonageApi` it is given (the `VonageClient` in
 * production, the fake in tests).
 *
 * Outbound: `placeCall` creates the call with an inline NCCO that connects the callee to our media WebSocket,
 * the run's status URL as `event_url`, and `machine_detection: hangup` when asked (Vonage then hangs up on a
 * machine and reports `machine`, which ends the run as voicemail).
 * Inbound: the number is linked to the application (`syncInboundWebhook`), whose answer URL is our inbound
 * webhook (HTTP POST); the answer is the same connect NCCO, with the run's status URL for the connected leg's
 * events, or a short `talk` for a refused call.
 * Signed webhooks: every webhook must carry Vonage's HS256 JWT (signature secret) for this account, with a
 * `payload_hash` of the exact body.
 */
import { ProviderApiError } from '../../core/errors.js';
import { clampRingSeconds, dropUndefined, headerValue, requireCallerNumber, syncFailure, trimmedString, withPlus } from '../../plugins/sdk.js';
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
import type { VonageClient } from './vonage.client.js';
import { decodeJwtClaims, verifyVonageWebhook } from './vonage-jwt.js';
import { vonageManifest } from './vonage.manifest.js';
import { connectTargetNcco, connectWebsocketNcco, NCCO_CONTENT_TYPE } from './vonage.ncco.js';
import type { TransferTarget } from '../../core/calls/transfer-target.js';
import type { TransferOptions, TransferResult } from '../../core/ports/telephony-provider.port.js';
import { mapVonageStatus } from './vonage.status-map.js';

export type VonageApi = Pick<VonageClient, 'createCall' | 'hangup' | 'getCall' | 'findNumber' | 'linkNumber' | 'getApplication' | 'transferCall'>;

export interface VonageProviderOptions {
  applicationId: string;
  apiKey: string;
  signatureSecret: string;
  publicUrl: string;
  nowSeconds?: () => number;
}

/** Vonage's ringing_timer is 1..120 seconds. */
const MIN_RING_SECONDS = 1;
const MAX_RING_SECONDS = 120;

export class VonageProvider implements TelephonyProvider {
  readonly manifest: ProviderManifest = vonageManifest;

  constructor(
    private readonly api: VonageApi,
    private readonly options: VonageProviderOptions,
  ) {}

  async placeCall(request: PlaceCallRequest): Promise<PlacedCall> {
    const from = msisdn(requireCallerNumber('vonage', 'Vonage', request.from));
    const to = msisdn(request.to);
    if (!to) throw new ProviderApiError('vonage', 'Vonage calls phone numbers only: the called number is not an E.164 number');
    if (!from) throw new ProviderApiError('vonage', 'The caller number is not an E.164 number');
    const created = await this.api.createCall({
      to,
      from,
      ncco: connectWebsocketNcco({ mediaUrl: request.mediaUrl, runId: request.runId }),
      eventUrl: request.statusCallbackUrl,
      ...(request.machineDetection ? { machineDetection: 'hangup' as const } : {}),
      ringingTimer: clampRingSeconds(request.ringTimeoutSeconds, MIN_RING_SECONDS, MAX_RING_SECONDS),
    });
    // Vonage has no idempotency key for call creation: each accepted request is a new call.
    return { providerCallId: created.uuid, alreadyPlaced: false };
  }

  async hangup(providerCallId: string): Promise<void> {
    await this.api.hangup(providerCallId);
  }

  /**
   * Cold transfer (docs/voice.md "Transfers"): the caller's leg moves to an NCCO that connects it to the target
   * (`phone` or `sip` endpoint); our media leg is left behind. Refusals are results: 404 or a 400 about a call
   * not in progress `call_not_active`, other 4xx `carrier_refused`, unreachable after retries `unreachable`.
   */
  async transfer(providerCallId: string, target: TransferTarget, options: TransferOptions): Promise<TransferResult> {
    const ncco = connectTargetNcco({ target, from: options.callerId, timeoutSeconds: clampRingSeconds(options.ringTimeoutSeconds, 1, 120) });
    try {
      const result = await this.api.transferCall(providerCallId, ncco);
      if (result.ok) return { ok: true, detail: 'Vonage transferred the call to the connect NCCO' };
      const gone = result.status === 404 || (result.status === 400 && /not (in progress|active)|completed|ended/i.test(result.detail));
      return { ok: false, reason: gone ? 'call_not_active' : 'carrier_refused', detail: `Vonage ${result.detail}` };
    } catch (err) {
      return { ok: false, reason: 'unreachable', detail: err instanceof ProviderApiError ? err.detail : 'Vonage could not be reached' };
    }
  }

  async getCallStatus(providerCallId: string): Promise<NormalizedCallEvent | null> {
    const info = await this.api.getCall(providerCallId);
    if (!info) return null;
    const mapped = mapVonageStatus(info.status);
    if (!mapped) return { kind: 'ignored', reason: `unknown Vonage call status "${info.status}"` };
    return dropUndefined({
      kind: 'status' as const,
      providerCallId: info.uuid,
      status: mapped.status,
      outcome: mapped.outcome,
      durationSeconds: mapped.outcome ? info.durationSeconds : undefined,
    });
  }

  /**
   * Binding links the number to the application (Numbers API `app_id`); the application's answer URL must be
   * our inbound webhook (POST), which is checked and reported, not rewritten (an application update replaces
   * all its settings). Unbinding leaves the link (Callplane then politely refuses the number's calls).
   */
  /**
   * Reads the application with api_key/api_secret (Basic auth): proves the secret belongs to the api_key (the
   * account id) and that the application is one of that account's.
   */
  async checkCredentials(): Promise<{ ok: boolean; message: string }> {
    try {
      const app = await this.api.getApplication();
      if (!app) return { ok: false, message: `Vonage account ${this.options.apiKey} has no application ${this.options.applicationId}` };
      return { ok: true, message: `Vonage account ${this.options.apiKey} opened application ${app.id}` };
    } catch (err) {
      return { ok: false, message: err instanceof ProviderApiError ? err.detail : 'Vonage could not be reached' };
    }
  }

  async syncInboundWebhook(number: { address: string; addressNormalized: string; inboundUrl: string | null }): Promise<{ ok: boolean; message: string }> {
    const digits = msisdn(number.addressNormalized);
    if (!digits) return { ok: false, message: `${number.address} is not an E.164 phone number; Vonage routes only numbers it owns` };
    try {
      const found = await this.api.findNumber(digits);
      if (!found) return { ok: false, message: `${number.addressNormalized} is not a number of Vonage account ${this.options.apiKey}; link it to application ${this.options.applicationId} by hand` };
      if (number.inboundUrl === null) {
        return { ok: true, message: `${number.addressNormalized} stays linked to application ${found.appId ?? '(none)'}; Callplane no longer answers it` };
      }
      const steps: string[] = [];
      if (found.appId === this.options.applicationId) {
        steps.push(`${number.addressNormalized} is already linked to application ${this.options.applicationId}`);
      } else {
        await this.api.linkNumber(found, this.options.applicationId);
        steps.push(`Linked ${number.addressNormalized} to application ${this.options.applicationId}`);
      }
      const app = await this.api.getApplication();
      if (!app) return { ok: false, message: `${steps.join('; ')}; but application ${this.options.applicationId} was not found` };
      const problems: string[] = [];
      if (app.answerUrl !== number.inboundUrl || (app.answerMethod ?? 'GET').toUpperCase() !== 'POST') {
        problems.push(`set its Answer URL to ${number.inboundUrl} with HTTP POST (now ${app.answerUrl ?? 'none'})`);
      }
      if (!app.signedCallbacks) problems.push('enable signed callbacks (signed_callbacks) on its voice capability');
      if (problems.length) return { ok: false, message: `${steps.join('; ')}; in the application, ${problems.join(' and ')}` };
      return { ok: true, message: `${steps.join('; ')}; its answer URL is ${number.inboundUrl}` };
    } catch (err) {
      return syncFailure(err, 'Vonage');
    }
  }

  verifyWebhook(request: WebhookRequest): boolean {
    try {
      return verifyVonageWebhook({
        authorization: headerValue(request?.headers, 'authorization'),
        signatureSecret: this.options.signatureSecret,
        apiKey: this.options.apiKey,
        applicationId: this.options.applicationId,
        rawBody: Buffer.isBuffer(request?.rawBody) ? request.rawBody : undefined,
        nowSeconds: this.options.nowSeconds?.() ?? Math.floor(Date.now() / 1000),
      });
    } catch {
      return false;
    }
  }

  parseStatusCallback(request: WebhookRequest): NormalizedCallEvent {
    try {
      const body = request?.body && typeof request.body === 'object' && !Array.isArray(request.body) ? (request.body as Record<string, unknown>) : {};
      const status = trimmedString(body.status);
      if (!status) return { kind: 'ignored', reason: 'no status in the Vonage event' };
      const mapped = mapVonageStatus(status);
      if (!mapped) return { kind: 'ignored', reason: `Vonage status "${status}" does not change the call status` };
      const details: string[] = [];
      if (status === 'machine' || status === 'human') details.push(`answered_by=${status}`);
      const subState = trimmedString(body.sub_state);
      if (subState) details.push(`sub_state=${subState}`);
      const detail = trimmedString(body.detail);
      if (detail) details.push(`detail=${detail}`);
      const duration = trimmedString(typeof body.duration === 'number' ? String(body.duration) : body.duration);
      const at = trimmedString(body.timestamp) ? Date.parse(trimmedString(body.timestamp)!) : Number.NaN;
      return dropUndefined({
        kind: 'status' as const,
        runId: request.runId,
        providerCallId: trimmedString(body.uuid),
        // the conversation both legs of one run share (an inbound call and its media leg): see parseVonageInboundCall
        callIds: trimmedString(body.conversation_uuid) ? [trimmedString(body.conversation_uuid)!] : undefined,
        status: mapped.status,
        outcome: mapped.outcome,
        durationSeconds: mapped.outcome && duration && /^\d+$/.test(duration) ? Number(duration) : undefined,
        at: Number.isNaN(at) ? undefined : new Date(at),
        detail: details.length ? details.join(' ') : undefined,
      });
    } catch {
      return { kind: 'ignored', reason: 'unreadable Vonage event' };
    }
  }

  parseInboundCall(request: WebhookRequest): InboundCall | { ignored: string } {
    return parseVonageInboundCall(request);
  }

  inboundAnswer(input: { runId: number; providerCallId?: string; mediaUrl: string; statusCallbackUrl: string }): ProviderMarkup {
    return { contentType: NCCO_CONTENT_TYPE, body: JSON.stringify(connectWebsocketNcco({ mediaUrl: input.mediaUrl, runId: input.runId, eventUrl: input.statusCallbackUrl })) };
  }

  async close(): Promise<void> {
    // Stateless: nothing to release.
  }
}

// ---------------------------------------------------------------------------------------------------------

/**
 * Vonage's answer webhook (POST JSON `{to, from, uuid, conversation_uuid}`) as an inbound call. Vonage writes
 * numbers as E.164 digits without '+', which are given back with it. The account is the `api_key` claim of
 * the webhook's JWT (read here for routing only; the configuration found then verifies the signature).
 * Events posted to the same URL (they carry a `status`) are ignored. The run's provider call id is the call's
 * `conversation_uuid` (its `uuid` when absent): the events that move an inbound run come from the media leg our
 * NCCO connects, which has a `uuid` of its own but the same conversation. Pure; never throws.
 */
export function parseVonageInboundCall(request: WebhookRequest): InboundCall | { ignored: string } {
  try {
    const body = request?.body && typeof request.body === 'object' && !Array.isArray(request.body) ? (request.body as Record<string, unknown>) : {};
    if (trimmedString(body.status)) return { ignored: `a call event (status ${trimmedString(body.status)}), not a new call` };
    const uuid = trimmedString(body.uuid);
    const to = trimmedString(body.to);
    if (!uuid) return { ignored: 'no uuid in the answer webhook' };
    if (!to) return { ignored: 'no "to" in the answer webhook' };
    const token = /^Bearer\s+(\S+)$/i.exec(headerValue(request.headers, 'authorization') ?? '')?.[1];
    const apiKey = decodeJwtClaims(token)?.api_key;
    const conversation = trimmedString(body.conversation_uuid);
    return { providerCallId: conversation ?? uuid, from: withPlus(trimmedString(body.from) ?? ''), to: withPlus(to), accountId: typeof apiKey === 'string' && apiKey ? apiKey : null };
  } catch {
    return { ignored: 'unreadable Vonage answer webhook' };
  }
}

/** Vonage's number form: E.164 digits without '+'; null for anything that is not an E.164 number. */
function msisdn(e164: string): string | null {
  const compact = e164.replace(/[\s().-]/g, '');
  const m = /^\+?([1-9]\d{6,14})$/.exec(compact);
  return m ? m[1]! : null;
}
