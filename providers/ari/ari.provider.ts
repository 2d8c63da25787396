/**
 * Asterisk (ARI) as a `TelephonyProvider`. Asterisk sends no HTTP webhooks: everything arrives on the
 * configuration's one ARI WebSocket (see ari-connections.ts) and goes to the host through
 * `ProviderContext.reportStatus` (the same status use case as HTTP callbacks) and `reportInbound`.
 *
 * Outbound: originate into the configuration's Stasis application with `channelId` = the attempt key (Asterisk
 * refuses a second live channel with that id: a retry of the attempt cannot dial twice) and app args
 * `callplane-outbound,<run id>`; the dial string comes from `dial_template` (`PJSIP/{number}` by default).
 * Channel state changes and `ChannelDestroyed` (Q.850 cause, see ari.status-map.ts) become run statuses.
 * Inbound: a `StasisStart` that is not one of our originations is a call the dialplan sent to the app; it is
 * routed by its dialed extension (`to`) and caller number (`from`), then answered, or sent back to the dialplan
 * (`continue`, so a following `Playback`/`Hangup` can say goodbye) when refused.
 */
import { ProviderApiError } from '../../core/errors.js';
import type { ProviderManifest } from '../../core/telephony/provider-manifest.js';
import type {
  InboundCall,
  NormalizedCallEvent,
  PlaceCallRequest,
  PlacedCall,
  ProviderContext,
  ProviderMarkup,
  TelephonyProvider,
  WebhookRequest,
} from '../../core/ports/telephony-provider.port.js';
import type { RunStatus } from '../../core/runs/run.js';
import type { AriClientLike, AriLease } from './ari-connections.js';
import { normalizeEvent, type AriEvent, type AriHealth } from './ari.client.js';
import { ariManifest, DEFAULT_DIAL_TEMPLATE } from './ari.manifest.js';
import { ARI_CHANNEL_STATE, mapAriHangup } from './ari.status-map.js';
import { AriMediaBridges, MEDIA_MARK } from './ari-media-bridge.js';
import { AriTransfers, TRANSFER_MARK } from './ari-transfer.js';
import type { TransferTarget } from '../../core/calls/transfer-target.js';
import type { TransferOptions, TransferResult } from '../../core/ports/telephony-provider.port.js';

/** First Stasis argument of the channels Callplane originates; the second is the run id. */
export const OUTBOUND_MARK = 'callplane-outbound';

/** Characters a called number may have inside a dial string (no `&`, `,` or `/` that would change the dial). */
const DIALABLE = /^[A-Za-z0-9+*#._:@=;-]{1,128}$/;

export interface AriProviderConfig {
  configurationId: number;
  accountId: string;
  app: string;
  dialTemplate: string;
  /** `ws_client_name`: the websocket_client.conf connection call media goes through; empty: calls carry no media. */
  wsClientName?: string;
}

/** The endpoint to originate to: `dial_template` with `{number}` replaced. Throws `ProviderApiError` for undialable input. */
export function dialString(template: string | undefined, to: string): string {
  const number = to.replace(/[\s()]/g, '');
  if (!DIALABLE.test(number)) throw new ProviderApiError('ari', `"${to}" cannot be dialed through Asterisk`, false);
  const t = template && template.includes('{number}') ? template : DEFAULT_DIAL_TEMPLATE;
  return t.split('{number}').join(number);
}

interface TrackedCall {
  direction: 'outbound' | 'inbound';
  runId?: number;
  answeredAt?: Date;
  hangupRequested?: boolean;
  /** Inbound: still waiting for the host's routing decision. */
  routing?: boolean;
  /** The run's signed media URL (`CallUrls.media`): its token reaches Asterisk's media connection. */
  mediaUrl?: string;
  /** The run's end was reported already (its media failed): the channel's own end reports nothing more. */
  endReported?: boolean;
}

type StatusEvent = NormalizedCallEvent & { kind: 'status' };

/**
 * A status event for one ARI event, pure. `tracked` is what the session knows about the channel (nothing after
 * a restart, or in `parseStatusCallback`). Inbound `StasisStart` is not a status: it is `ignored` here and
 * routed by the session.
 */
export function ariEventToStatus(event: AriEvent, tracked?: Pick<TrackedCall, 'runId' | 'answeredAt' | 'hangupRequested'>): NormalizedCallEvent {
  const at = new Date(event.timestamp);
  const base = { kind: 'status' as const, providerCallId: event.channelId, at, ...(tracked?.runId !== undefined ? { runId: tracked.runId } : {}) };
  switch (event.type) {
    case 'StasisStart': {
      const [mark, run] = event.args ?? [];
      if (mark === MEDIA_MARK) return { kind: 'ignored', reason: 'StasisStart of an external media channel Callplane created' };
      if (mark === OUTBOUND_MARK && /^\d+$/.test(run ?? '')) return { ...base, runId: tracked?.runId ?? Number(run), status: 'in_progress' };
      if (tracked?.runId !== undefined && tracked.answeredAt) return { ...base, status: 'in_progress' };
      return { kind: 'ignored', reason: 'StasisStart of a channel Callplane did not originate (an inbound call)' };
    }
    case 'ChannelStateChange': {
      const status: RunStatus | undefined = event.state ? ARI_CHANNEL_STATE[event.state] : undefined;
      if (!status) return { kind: 'ignored', reason: `unknown channel state "${event.state ?? ''}"` };
      if (status === 'queued') return { kind: 'ignored', reason: `channel state ${event.state} does not move a call` };
      return { ...base, status };
    }
    case 'ChannelDestroyed': {
      const answered = tracked?.answeredAt !== undefined || event.state === 'Up';
      const mapped = mapAriHangup(event.cause, answered, tracked?.hangupRequested ?? false);
      const out: StatusEvent = {
        ...base,
        status: mapped.status,
        outcome: mapped.outcome,
        detail: `cause ${event.cause ?? 'none'} (${event.causeText ?? mapped.label})`,
      };
      if (answered && tracked?.answeredAt) out.durationSeconds = Math.max(0, Math.round((at.getTime() - tracked.answeredAt.getTime()) / 1000));
      else if (!answered) out.durationSeconds = 0;
      return out;
    }
    default:
      return { kind: 'ignored', reason: `ARI ${event.type} events carry no call status` };
  }
}

/** Call tracking and event handling of one ARI connection (shared by the instances leasing it). */
export class AriSession {
  readonly calls = new Map<string, TrackedCall>();
  /** Transfer legs of this connection's calls (providers/ari/ari-transfer.ts). */
  readonly transfers: AriTransfers;
  /** Bridges and external media channels of this connection's calls (providers/ari/ari-media-bridge.ts). */
  readonly media: AriMediaBridges;
  private queue: Promise<void> = Promise.resolve();
  private readonly unsubscribe: Array<() => void> = [];
  private target?: { config: AriProviderConfig; context: ProviderContext };
  private connecting?: Promise<void>;

  constructor(private readonly client: AriClientLike) {
    this.transfers = new AriTransfers(client);
    this.media = new AriMediaBridges(client, (callId, reason) => this.mediaFailed(callId, reason), () => this.target?.context.log);
    this.unsubscribe.push(client.onEvent((event) => this.enqueue(() => this.handle(event))));
    this.unsubscribe.push(
      client.onHealthChange((health) => {
        this.logHealth(health);
        if (health.connected && health.reconnects > 0) this.enqueue(() => this.reconcile());
      }),
    );
  }

  /** Where events go: the latest instance's context (all instances of one configuration report alike). */
  bind(config: AriProviderConfig, context: ProviderContext): void {
    this.target = { config, context };
  }

  /** Starts the WebSocket once; a failure is retried in the background by the client and shows in `health()`. */
  start(): Promise<void> {
    this.connecting ??= this.client.connect().catch((err: unknown) => {
      this.target?.context.log.warn({ err: (err as Error)?.message }, 'ARI WebSocket did not connect; retrying in the background');
    });
    return this.connecting;
  }

  /** Resolves when every event received so far has been handled (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue;
  }

  dispose(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    this.media.clear();
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(task).catch((err: unknown) => {
      this.target?.context.log.error({ err: (err as Error)?.message }, 'ARI event handling failed');
    });
  }

  private async handle(event: AriEvent): Promise<void> {
    const target = this.target;
    if (!target) return;
    if (event.application && event.application !== target.config.app) return;
    if (await this.transfers.handle(event)) return;
    if (await this.media.handle(event)) return;
    const tracked = this.calls.get(event.channelId);
    if (event.type === 'StasisStart' && !tracked && (event.args ?? [])[0] !== OUTBOUND_MARK) {
      await this.routeInbound(event, target);
      return;
    }
    if (tracked?.routing) return; // an inbound call not routed yet: nothing to report
    if ((event.type === 'ChannelStateChange' && event.state === 'Up') || (event.type === 'StasisStart' && tracked?.direction !== 'inbound')) {
      const call = tracked ?? { direction: 'outbound' as const };
      call.answeredAt ??= new Date(event.timestamp);
      if (call.runId === undefined && event.type === 'StasisStart') {
        const run = (event.args ?? [])[1];
        if (run && /^\d+$/.test(run)) call.runId = Number(run);
      }
      if (!tracked) this.calls.set(event.channelId, call);
    }
    const current = this.calls.get(event.channelId);
    const status = ariEventToStatus(event, current);
    if (event.type === 'ChannelDestroyed') {
      this.calls.delete(event.channelId);
      await this.media.release(event.channelId);
      if (current?.endReported) return;
    }
    if (status.kind === 'status') await target.context.reportStatus(status);
    // an answered outbound call is in our application now: its media can be bridged
    if (event.type === 'StasisStart' && current?.direction === 'outbound' && status.kind === 'status') await this.connectMedia(event.channelId, current, target);
  }

  /** Bridges the answered call with an external media channel, when the configuration names a media connection. */
  private async connectMedia(channelId: string, call: TrackedCall, target: { config: AriProviderConfig; context: ProviderContext }): Promise<void> {
    const connection = target.config.wsClientName;
    if (!connection) {
      target.context.log.info({ channel_id: channelId, run_id: call.runId ?? null }, 'no ws_client_name configured: the ARI call carries no media');
      return;
    }
    await this.media.connect({ callId: channelId, runId: call.runId, mediaUrl: call.mediaUrl }, { app: target.config.app, connection });
  }

  /** The call's media could not be connected: its run fails with the reason and the caller is hung up. */
  private async mediaFailed(channelId: string, reason: string): Promise<void> {
    const target = this.target;
    const call = this.calls.get(channelId);
    if (!target || !call || call.endReported) return;
    call.endReported = true;
    const at = new Date();
    try {
      await target.context.reportStatus({
        kind: 'status', providerCallId: channelId, ...(call.runId !== undefined ? { runId: call.runId } : {}), at,
        status: 'failed', outcome: 'failed', detail: `call media failed: ${reason}`,
        ...(call.answeredAt ? { durationSeconds: Math.max(0, Math.round((at.getTime() - call.answeredAt.getTime()) / 1000)) } : {}),
      });
    } finally {
      await this.client.hangup(channelId, 'normal').catch((err: unknown) => {
        target.context.log.warn({ channel_id: channelId, err: (err as Error)?.message }, 'hanging up an ARI call whose media failed failed');
      });
    }
  }

  private async routeInbound(event: AriEvent, target: { config: AriProviderConfig; context: ProviderContext }): Promise<void> {
    const call: TrackedCall = { direction: 'inbound', routing: true };
    this.calls.set(event.channelId, call);
    let decision: { runId: number; mediaUrl?: string } | { refused: string };
    try {
      decision = await target.context.reportInbound({
        providerCallId: event.channelId,
        from: event.callerNumber ?? '',
        to: event.dialedExten ?? '',
        accountId: target.config.accountId,
        configurationId: target.config.configurationId,
      });
    } catch (err) {
      target.context.log.error({ err: (err as Error)?.message, channel_id: event.channelId }, 'inbound ARI call could not be routed');
      decision = { refused: 'routing_failed' };
    }
    if ('runId' in decision) {
      call.runId = decision.runId;
      call.routing = false;
      if (decision.mediaUrl) call.mediaUrl = decision.mediaUrl;
      try {
        await this.client.answer(event.channelId);
      } catch (err) {
        target.context.log.warn({ err: (err as Error)?.message, channel_id: event.channelId }, 'answering an inbound ARI call failed');
        return;
      }
      await this.connectMedia(event.channelId, call, target);
      return;
    }
    this.calls.delete(event.channelId);
    target.context.log.info({ channel_id: event.channelId, reason: decision.refused }, 'inbound ARI call refused');
    try {
      // Back to the dialplan, after Stasis(): it can play a message and hang up.
      await this.client.continueInDialplan(event.channelId);
    } catch {
      await this.client.hangup(event.channelId, 'normal').catch(() => undefined);
    }
  }

  /** After a re-connection: ask Asterisk about every tracked call (events of the gap are lost). */
  private async reconcile(): Promise<void> {
    const target = this.target;
    if (!target) return;
    for (const [channelId, call] of [...this.calls]) {
      if (call.routing) continue;
      let channel;
      try {
        channel = await this.client.getChannel(channelId);
      } catch {
        return; // Asterisk unreachable again: the next re-connection tries again
      }
      if (channel) {
        const status = ariEventToStatus({ type: 'ChannelStateChange', channelId, state: channel.state, timestamp: new Date().toISOString() }, call);
        if (channel.state === 'Up') call.answeredAt ??= new Date();
        if (status.kind === 'status') await target.context.reportStatus(status);
      } else if (call.answeredAt) {
        // Ended during the gap after being answered: it completed (its exact end time is unknown).
        this.calls.delete(channelId);
        await this.media.release(channelId);
        await target.context.reportStatus({
          kind: 'status', providerCallId: channelId, ...(call.runId !== undefined ? { runId: call.runId } : {}),
          status: 'completed', outcome: 'completed', detail: 'ended while the ARI WebSocket was down',
        });
      }
      // Never answered and gone: the cause is unknown; the host's reconciliation decides.
    }
    await this.media.reconcile();
  }

  private logHealth(health: AriHealth): void {
    const log = this.target?.context.log;
    if (!log) return;
    if (health.connected) log.info({ reconnects: health.reconnects }, 'ARI WebSocket connected');
    else log.warn({ last_error: health.lastError, retry_in_ms: health.nextRetryInMs, attempts: health.reconnectAttempts }, 'ARI WebSocket down');
  }
}

export class AriProvider implements TelephonyProvider {
  readonly manifest: ProviderManifest = ariManifest;
  private readonly client: AriClientLike;
  private readonly session: AriSession;

  constructor(
    private readonly lease: AriLease<AriSession>,
    private readonly config: AriProviderConfig,
    private readonly options: { connectWaitMs?: number } = {},
  ) {
    this.client = lease.client;
    this.session = lease.session;
  }

  async placeCall(request: PlaceCallRequest): Promise<PlacedCall> {
    const endpoint = dialString(this.config.dialTemplate, request.to);
    const existing = this.session.calls.get(request.attemptKey);
    if (!existing) this.session.calls.set(request.attemptKey, { direction: 'outbound', runId: request.runId, mediaUrl: request.mediaUrl });
    else existing.mediaUrl ??= request.mediaUrl;
    // Events of this call only arrive on a connected socket: give a starting socket a moment.
    await waitAtMost(this.session.start(), this.options.connectWaitMs ?? 3000);
    try {
      const result = await this.client.originate({
        channelId: request.attemptKey,
        endpoint,
        app: this.config.app,
        appArgs: [OUTBOUND_MARK, String(request.runId)],
        variables: { CALLPLANE_RUN_ID: String(request.runId) },
        ...(request.from ? { callerId: request.from } : {}),
        timeoutSeconds: request.ringTimeoutSeconds,
      });
      return { providerCallId: request.attemptKey, alreadyPlaced: result.outcome === 'already_exists' };
    } catch (err) {
      if (!existing) this.session.calls.delete(request.attemptKey);
      throw err;
    }
  }

  async hangup(providerCallId: string): Promise<void> {
    const call = this.session.calls.get(providerCallId);
    if (call) call.hangupRequested = call.answeredAt === undefined;
    await this.client.hangup(providerCallId, 'normal');
  }

  async getCallStatus(providerCallId: string): Promise<NormalizedCallEvent | null> {
    const channel = await this.client.getChannel(providerCallId);
    if (!channel) return null;
    const call = this.session.calls.get(providerCallId);
    const status = ARI_CHANNEL_STATE[channel.state] ?? 'queued';
    return { kind: 'status', providerCallId, status, ...(call?.runId !== undefined ? { runId: call.runId } : {}), detail: `channel state ${channel.state}` };
  }

  /**
   * Cold transfer (docs/voice.md "Transfers"): originate the target into our application and bridge it with the
   * caller's channel once it answers (providers/ari/ari-transfer.ts). Phone targets fill `{number}` of
   * `dial_template`; a SIP URI fills it as it is (`PJSIP/{number}` dials `PJSIP/sip:desk@pbx.example.com`).
   * Resolves when the target answered or the dial failed, with the Asterisk cause. Never throws.
   */
  async transfer(providerCallId: string, target: TransferTarget, options: TransferOptions): Promise<TransferResult> {
    let endpoint: string;
    try {
      endpoint = dialString(this.config.dialTemplate, target.address);
    } catch (err) {
      return { ok: false, reason: 'target_rejected', detail: (err as Error).message };
    }
    await waitAtMost(this.session.start(), this.options.connectWaitMs ?? 3000);
    return this.session.transfers.transfer({ callerChannelId: providerCallId, endpoint, app: this.config.app, target, options });
  }

  /** `GET /ari/asterisk/info` with the application's credentials (see `AriClient.checkCredentials`). */
  async checkCredentials(): Promise<{ ok: boolean; message: string }> {
    return this.client.checkCredentials();
  }

  async syncInboundWebhook(number: { address: string; addressNormalized: string; inboundUrl: string | null }): Promise<{ ok: boolean; message: string }> {
    return {
      ok: true,
      message: number.inboundUrl === null
        ? 'Nothing to detach on Asterisk: its dialplan decides which calls reach Stasis'
        : `Nothing to push to Asterisk: its dialplan must send calls for ${number.address} to Stasis(${this.config.app}); Callplane routes them by the dialed extension`,
    };
  }

  /** Asterisk sends no HTTP webhooks: anything posted to the ARI webhook routes is refused. */
  verifyWebhook(_request: WebhookRequest): boolean {
    return false;
  }

  /** Normalizes an ARI event given as JSON (the body); for replays and fixtures. Pure; never throws. */
  parseStatusCallback(request: WebhookRequest): NormalizedCallEvent {
    try {
      const event = normalizeEvent(request.body);
      if (!event) return { kind: 'ignored', reason: 'not an ARI channel event' };
      const status = ariEventToStatus(event);
      return status.kind === 'status' && request.runId !== undefined ? { ...status, runId: request.runId } : status;
    } catch {
      return { kind: 'ignored', reason: 'unreadable ARI event' };
    }
  }

  /** ARI inbound calls arrive as `StasisStart` on the WebSocket, never as a webhook. */
  parseInboundCall(request: WebhookRequest): InboundCall | { ignored: string } {
    return parseAriInbound(request.body);
  }

  /** Nothing to send Asterisk: the session answers the channel itself. Describes what happened. */
  inboundAnswer(input: { runId: number; providerCallId?: string; mediaUrl: string; statusCallbackUrl: string }): ProviderMarkup {
    return { contentType: 'application/json', body: JSON.stringify({ action: 'answer', run_id: input.runId }) };
  }

  inboundReject(reason: string): ProviderMarkup {
    return { contentType: 'application/json', body: JSON.stringify({ action: 'continue_in_dialplan', reason }) };
  }

  health(): { ok: boolean; detail?: Record<string, unknown> } {
    const h = this.client.health();
    return { ok: h.connected, detail: { ...h, app: this.config.app, tracked_calls: this.session.calls.size, media_calls: this.session.media.size } };
  }

  /** Resolves once every ARI event received so far has been handled. */
  idle(): Promise<void> {
    return this.session.idle();
  }

  async close(): Promise<void> {
    await this.lease.release();
  }
}

/** An ARI `StasisStart` (JSON) as an inbound call, or why it is not one. Pure; never throws. */
export function parseAriInbound(body: unknown): InboundCall | { ignored: string } {
  try {
    const event = normalizeEvent(body);
    if (!event || event.type !== 'StasisStart') return { ignored: 'not an ARI StasisStart event' };
    if ((event.args ?? [])[0] === OUTBOUND_MARK) return { ignored: 'a call Callplane originated' };
    if ((event.args ?? [])[0] === MEDIA_MARK) return { ignored: 'an external media channel Callplane created' };
    if ((event.args ?? [])[0] === TRANSFER_MARK) return { ignored: 'a transfer leg Callplane originated' };
    if (!event.dialedExten) return { ignored: 'no dialed extension on the channel' };
    return { providerCallId: event.channelId, from: event.callerNumber ?? '', to: event.dialedExten, accountId: null };
  } catch {
    return { ignored: 'unreadable ARI event' };
  }
}

async function waitAtMost(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); })]);
  if (timer) clearTimeout(timer);
}
