/**
 * Telnyx Call Control as a `TelephonyProvider`. Pure apart from the `TelnyxApi` it is given (the
 * `TelnyxClient` in production, the fake in tests).
 *
 * Outbound: `placeCall` dials with the run's status URL as the call's `webhook_url` (Telnyx posts every event
 * of the call there) and its media WebSocket as `stream_url` (Telnyx streams once the callee answers); with
 * answering machine detection it asks for `detect`.
 * Inbound: Telnyx posts `call.initiated` (direction `incoming`) to the Call Control application's webhook URL,
 * our inbound webhook. Call Control takes no markup: `inboundAnswer` answers the call through the API with
 * the media `stream_url` and the run's status URL as `webhook_url` for the call's later events, and the HTTP
 * answer is a JSON acknowledgement.
 * Every webhook is checked with Ed25519 (`telnyx-signature-ed25519` over `telnyx-timestamp|raw body`, with the
 * configured public key) and a timestamp tolerance against replays.
 *
 * One side effect outside the API calls above: when answering machine detection reports a machine,
 * `parseStatusCallback` also sends a hang-up for that call (fire and forget, once per call), since Telnyx,
 * unlike Twilio, Vonage and Plivo, does not hang up on a machine by itself. The parse result stays the same.
 */
import { ProviderApiError } from '../../core/errors.js';
import { clampRingSeconds, dropUndefined, headerValue, requireCallerNumber, syncFailure, trimmedString } from '../../plugins/sdk.js';
import type { Logger } from '../../core/ports/logger.port.js';
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
import type { TransferTarget } from '../../core/calls/transfer-target.js';
import type { TransferOptions, TransferResult } from '../../core/ports/telephony-provider.port.js';
import type { TelnyxClient } from './telnyx.client.js';
import { telnyxPublicKey, verifyTelnyxSignature } from './telnyx-signature.js';
import { telnyxManifest } from './telnyx.manifest.js';
import { mapTelnyxHangup, TELNYX_PROGRESS_EVENTS, telnyxAmdResult } from './telnyx.status-map.js';

/** The part of `TelnyxClient` the provider uses. */
export type TelnyxApi = Pick<TelnyxClient, 'dial' | 'answer' | 'hangup' | 'getCall' | 'findPhoneNumber' | 'setPhoneNumberConnection' | 'getApplication' | 'setApplicationWebhook' | 'transfer'>;

export interface TelnyxProviderOptions {
  connectionId: string;
  webhookPublicKey: string;
  publicUrl: string;
  log: Logger;
  /** Seconds since the epoch (tests). */
  nowSeconds?: () => number;
  toleranceSeconds?: number;
}

/** Telnyx rings 5..600 seconds (timeout_secs). */
const MIN_RING_SECONDS = 5;
const MAX_RING_SECONDS = 600;


export class TelnyxProvider implements TelephonyProvider {
  readonly manifest: ProviderManifest = telnyxManifest;
  private readonly publicKey;
  private readonly hungUpMachines = new Set<string>();
  private closed = false;

  constructor(
    private readonly api: TelnyxApi,
    private readonly options: TelnyxProviderOptions,
  ) {
    this.publicKey = telnyxPublicKey(options.webhookPublicKey);
  }

  async placeCall(request: PlaceCallRequest): Promise<PlacedCall> {
    const from = requireCallerNumber('telnyx', 'Telnyx', request.from);
    const call = await this.api.dial({
      connectionId: this.options.connectionId,
      to: request.to,
      from,
      webhookUrl: request.statusCallbackUrl,
      streamUrl: toWebSocketUrl(request.mediaUrl),
      ...(request.machineDetection ? { answeringMachineDetection: 'detect' as const } : {}),
      timeoutSecs: clampRingSeconds(request.ringTimeoutSeconds, MIN_RING_SECONDS, MAX_RING_SECONDS),
      clientState: Buffer.from(JSON.stringify({ run_id: request.runId }), 'utf8').toString('base64'),
    });
    // Telnyx has no idempotency key for a dial: each accepted request is a new call.
    return { providerCallId: call.callControlId, alreadyPlaced: false };
  }

  async hangup(providerCallId: string): Promise<void> {
    await this.api.hangup(providerCallId);
  }

  /**
   * Cold transfer (docs/voice.md "Transfers"): Telnyx's transfer command (`to` E.164 or SIP URI, `from` our number,
   * `command_id` per run so a repeat is a no-op). Accepted means Telnyx is dialing the target; a refusal is a result:
   * 90018 or 404 `call_not_active`, 10032 (a `to` Telnyx will not dial) `target_rejected`, else `carrier_refused`.
   */
  async transfer(providerCallId: string, target: TransferTarget, options: TransferOptions): Promise<TransferResult> {
    try {
      const result = await this.api.transfer(providerCallId, {
        to: target.address,
        ...(options.callerId ? { from: options.callerId } : {}),
        timeoutSecs: clampRingSeconds(options.ringTimeoutSeconds, MIN_RING_SECONDS, MAX_RING_SECONDS),
        commandId: `transfer-run-${options.runId}`,
      });
      if (result.ok) return { ok: true, detail: 'Telnyx accepted the transfer' };
      const gone = result.code === '90018' || result.status === 404;
      const reason = gone ? 'call_not_active' : result.code === '10032' ? 'target_rejected' : 'carrier_refused';
      return { ok: false, reason, detail: `Telnyx ${result.detail}` };
    } catch (err) {
      return { ok: false, reason: 'unreachable', detail: err instanceof ProviderApiError ? err.detail : 'Telnyx could not be reached' };
    }
  }

  /**
   * Telnyx keeps the live state of a call, not its outcome: a live call is `in_progress` (not final, the
   * caller waits), an ended one whose hang-up webhook never arrived is `failed` with that reason.
   */
  async getCallStatus(providerCallId: string): Promise<NormalizedCallEvent | null> {
    const call = await this.api.getCall(providerCallId);
    if (!call) return null;
    if (call.isAlive) return { kind: 'status', providerCallId, status: 'in_progress', detail: 'call is alive at Telnyx' };
    return { kind: 'status', providerCallId, status: 'failed', outcome: 'failed', detail: 'call ended at Telnyx; its hang-up webhook never arrived' };
  }

  /**
   * Binding: the number must belong to our Call Control application (`connection_id`), whose webhook URL must
   * be our inbound webhook. The number is moved to the application when it is elsewhere; the application's
   * webhook URL is set when it has none, and reported (not overwritten) when it points elsewhere.
   * Unbinding leaves the number on the application (Callplane then politely declines its calls).
   */
  /**
   * Reads the Call Control application `connection_id` (the account id) with the API key: proves the key is
   * valid and that the connection is one of its account's.
   */
  async checkCredentials(): Promise<{ ok: boolean; message: string }> {
    try {
      const app = await this.api.getApplication(this.options.connectionId);
      if (!app) return { ok: false, message: `This Telnyx API key's account has no Call Control application ${this.options.connectionId}` };
      return { ok: true, message: `Telnyx Call Control application ${app.id} is readable with this API key` };
    } catch (err) {
      return { ok: false, message: err instanceof ProviderApiError ? err.detail : 'Telnyx could not be reached' };
    }
  }

  async syncInboundWebhook(number: { address: string; addressNormalized: string; inboundUrl: string | null }): Promise<{ ok: boolean; message: string }> {
    const e164 = number.addressNormalized;
    if (!/^\+[1-9]\d{4,14}$/.test(e164)) {
      return { ok: false, message: `${number.address} is not an E.164 phone number; Telnyx routes only phone numbers it owns` };
    }
    const connectionId = this.options.connectionId;
    try {
      const found = await this.api.findPhoneNumber(e164);
      if (!found) return { ok: false, message: `${e164} is not a phone number of this Telnyx account; assign it to Call Control application ${connectionId} by hand` };
      if (number.inboundUrl === null) {
        return { ok: true, message: `${e164} stays on Call Control application ${found.connectionId ?? '(none)'}; Callplane no longer answers it` };
      }
      const steps: string[] = [];
      if (found.connectionId !== connectionId) {
        await this.api.setPhoneNumberConnection(found.id, connectionId);
        steps.push(`Assigned ${e164} to Call Control application ${connectionId}`);
      } else {
        steps.push(`${e164} already belongs to Call Control application ${connectionId}`);
      }
      const app = await this.api.getApplication(connectionId);
      if (!app) return { ok: false, message: `${steps.join('; ')}; but Call Control application ${connectionId} was not found` };
      if (app.webhookEventUrl === number.inboundUrl) return { ok: true, message: `${steps.join('; ')}; its webhook URL is ${number.inboundUrl}` };
      if (app.webhookEventUrl === null) {
        await this.api.setApplicationWebhook(app, number.inboundUrl);
        return { ok: true, message: `${steps.join('; ')}; set its webhook URL to ${number.inboundUrl}` };
      }
      return {
        ok: false,
        message: `${steps.join('; ')}; but the application's webhook URL is ${app.webhookEventUrl}: set it to ${number.inboundUrl} (Portal → Voice → Programmable Voice → the application)`,
      };
    } catch (err) {
      return syncFailure(err, 'Telnyx');
    }
  }

  verifyWebhook(request: WebhookRequest): boolean {
    try {
      const headers = request?.headers;
      return verifyTelnyxSignature({
        publicKey: this.publicKey,
        rawBody: Buffer.isBuffer(request?.rawBody) ? request.rawBody : undefined,
        signature: headerValue(headers, 'telnyx-signature-ed25519'),
        timestamp: headerValue(headers, 'telnyx-timestamp'),
        nowSeconds: this.options.nowSeconds?.() ?? Math.floor(Date.now() / 1000),
        ...(this.options.toleranceSeconds !== undefined ? { toleranceSeconds: this.options.toleranceSeconds } : {}),
      });
    } catch {
      return false;
    }
  }

  parseStatusCallback(request: WebhookRequest): NormalizedCallEvent {
    try {
      const event = telnyxEvent(request?.body);
      if (!event) return { kind: 'ignored', reason: 'not a Telnyx Call Control webhook' };
      const { type, payload } = event;
      const connectionId = trimmedString(payload.connection_id);
      if (connectionId && connectionId !== this.options.connectionId) return { kind: 'ignored', reason: 'webhook of another Telnyx connection' };
      const callControlId = trimmedString(payload.call_control_id);
      const common = dropUndefined({ kind: 'status' as const, runId: request.runId, providerCallId: callControlId, at: event.at });

      const progress = TELNYX_PROGRESS_EVENTS[type];
      if (progress) return { ...common, status: progress.status };
      if (type === 'call.hangup') {
        const cause = trimmedString(payload.hangup_cause);
        const mapped = mapTelnyxHangup(cause);
        const details = [`hangup_cause=${cause ?? 'none'}`];
        const source = trimmedString(payload.hangup_source);
        if (source) details.push(`hangup_source=${source}`);
        const sip = trimmedString(payload.sip_hangup_cause);
        if (sip) details.push(`sip=${sip}`);
        return { ...common, status: mapped.status, ...(mapped.outcome ? { outcome: mapped.outcome } : {}), detail: details.join(' ') };
      }
      if (type === 'call.machine.detection.ended' || type === 'call.machine.premium.detection.ended') {
        const result = trimmedString(payload.result) ?? 'unknown';
        const amd = telnyxAmdResult(type, result)!;
        if (amd.verdict === 'machine') {
          if (callControlId) this.hangUpMachine(callControlId);
          return { ...common, status: 'completed', outcome: 'voicemail', detail: `answered_by=${result}`, amd };
        }
        return { ...common, status: 'in_progress', detail: `answered_by=${result}`, amd };
      }
      if (type === 'call.machine.greeting.ended' || type === 'call.machine.premium.greeting.ended') {
        // the machine's greeting is over (with or without a beep): news for a session waiting to leave a message
        const result = trimmedString(payload.result) ?? 'unknown';
        return { ...common, status: 'in_progress', detail: `greeting_ended=${result}`, amd: telnyxAmdResult(type, result)! };
      }
      return { kind: 'ignored', reason: `Telnyx event ${type} does not change the call status` };
    } catch {
      return { kind: 'ignored', reason: 'unreadable Telnyx webhook' };
    }
  }

  parseInboundCall(request: WebhookRequest): InboundCall | { ignored: string } {
    return parseTelnyxInboundCall(request);
  }

  /**
   * Answers the call through the API (media stream + the run's status URL for later events); the webhook
   * itself only needs a 2xx. A failed answer is logged: the caller hears ringing until Telnyx gives up.
   */
  inboundAnswer(input: { runId: number; providerCallId: string; mediaUrl: string; statusCallbackUrl: string }): ProviderMarkup {
    if (!this.closed && input.providerCallId) {
      this.api
        .answer(input.providerCallId, {
          streamUrl: toWebSocketUrl(input.mediaUrl),
          webhookUrl: input.statusCallbackUrl,
          clientState: Buffer.from(JSON.stringify({ run_id: input.runId }), 'utf8').toString('base64'),
          commandId: `answer-${input.runId}`,
        })
        .catch((err: unknown) => {
          this.options.log.warn({ run_id: input.runId, err: err instanceof ProviderApiError ? err.detail : 'error' }, 'Telnyx answer command failed');
        });
    }
    return { contentType: 'application/json', body: JSON.stringify({ received: true, run_id: input.runId }) };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private hangUpMachine(callControlId: string): void {
    if (this.closed || this.hungUpMachines.has(callControlId)) return;
    this.hungUpMachines.add(callControlId);
    if (this.hungUpMachines.size > 10_000) this.hungUpMachines.delete(this.hungUpMachines.values().next().value as string);
    this.api.hangup(callControlId).catch((err: unknown) => {
      this.options.log.warn({ err: err instanceof ProviderApiError ? err.detail : 'error' }, 'Telnyx hang-up after a machine answer failed');
    });
  }
}

// ---------------------------------------------------------------------------------------------------------

interface TelnyxEvent {
  type: string;
  payload: Record<string, unknown>;
  at?: Date;
}

/** `{data: {event_type, occurred_at, payload}}` (API v2 webhooks); null when the body is not one. */
function telnyxEvent(body: unknown): TelnyxEvent | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const data = (body as Record<string, unknown>).data;
  if (!data || typeof data !== 'object' || Array.isArray(data)) return null;
  const d = data as Record<string, unknown>;
  const type = trimmedString(d.event_type);
  if (!type) return null;
  const payload = d.payload && typeof d.payload === 'object' && !Array.isArray(d.payload) ? (d.payload as Record<string, unknown>) : {};
  const occurred = trimmedString(d.occurred_at);
  const t = occurred ? Date.parse(occurred) : Number.NaN;
  return { type, payload, ...(Number.isNaN(t) ? {} : { at: new Date(t) }) };
}

/** An incoming `call.initiated` as an inbound call; the account is the Call Control application. Pure; never throws. */
export function parseTelnyxInboundCall(request: WebhookRequest): InboundCall | { ignored: string } {
  try {
    const event = telnyxEvent(request?.body);
    if (!event) return { ignored: 'not a Telnyx Call Control webhook' };
    if (event.type !== 'call.initiated') return { ignored: `Telnyx event ${event.type} is not a new call` };
    const p = event.payload;
    const direction = trimmedString(p.direction);
    if (direction !== 'incoming') return { ignored: `not an incoming call (direction ${direction ?? 'none'})` };
    const callControlId = trimmedString(p.call_control_id);
    const to = trimmedString(p.to);
    if (!callControlId) return { ignored: 'no call_control_id in the webhook' };
    if (!to) return { ignored: 'no "to" in the webhook' };
    return { providerCallId: callControlId, from: trimmedString(p.from) ?? '', to, accountId: trimmedString(p.connection_id) ?? null };
  } catch {
    return { ignored: 'unreadable Telnyx webhook' };
  }
}

function toWebSocketUrl(url: string): string {
  return url.replace(/^http(s?):\/\//i, (_m, s: string) => `ws${s}://`);
}
