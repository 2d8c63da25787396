/**
 * Cold transfers on Asterisk (docs/voice.md "Transfers"), the way that needs nothing of the PBX's dialplan: our
 * Stasis application originates a new channel to the target into itself (`TRANSFER_MARK`), and once that channel
 * enters Stasis (the target answered) it creates a mixing bridge and puts the caller and the target in it. The
 * dial's own result decides the transfer: answered → `{ok: true}`; the new channel destroyed first → `{ok: false}`
 * with the Asterisk cause (17 `busy`, 18/19/16 `no_answer`, 21 `target_rejected`, 1/28 ... `target_rejected`,
 * others `carrier_refused`); not answered within the ring timeout (plus a margin) → the leg is hung up, `no_answer`.
 * An originate Asterisk refuses → `carrier_refused` with its words; a caller channel that is gone → `call_not_active`.
 *
 * Afterwards the two legs stay paired: when either is destroyed, the other is hung up and the bridge destroyed,
 * so nobody is left alone in a bridge. The caller's own events keep flowing through the session (its final
 * status ends the run); the transfer leg's events are consumed here and never reported as a call of their own.
 */
import { ProviderApiError } from '../../core/errors.js';
import type { TransferTarget } from '../../core/calls/transfer-target.js';
import type { TransferOptions, TransferResult } from '../../core/ports/telephony-provider.port.js';
import type { AriClientLike } from './ari-connections.js';
import type { AriEvent } from './ari.client.js';
import { ARI_UNANSWERED_CAUSE } from './ari.status-map.js';

/** First Stasis argument of a transfer leg; the second is the run id, the third the caller's channel id. */
export const TRANSFER_MARK = 'callplane-transfer';
/** Seconds past the ring timeout before an unanswered transfer leg is given up on. */
const ANSWER_MARGIN_SECONDS = 5;

type Client = Pick<AriClientLike, 'originate' | 'hangup' | 'getChannel' | 'createBridge' | 'addChannelsToBridge' | 'destroyBridge'>;

interface PendingLeg {
  callerId: string;
  bridgeId: string;
  settle?: (result: TransferResult) => void;
  bridged: boolean;
}

/** The reason word of an Asterisk cause that ended a transfer leg before it was answered. */
export function transferReasonOfCause(cause: number | undefined): string {
  if (cause === 17) return 'busy';
  if (cause === 21) return 'target_rejected';
  const outcome = cause === undefined ? undefined : ARI_UNANSWERED_CAUSE[cause]?.outcome;
  if (outcome === 'no_answer') return 'no_answer';
  if (cause === 1 || cause === 3 || cause === 22 || cause === 28) return 'target_rejected';
  return 'carrier_refused';
}

export class AriTransfers {
  /** Transfer leg channel id → its pairing. */
  private readonly legs = new Map<string, PendingLeg>();
  /** Caller channel id → its transfer leg, once bridged. */
  private readonly partners = new Map<string, string>();

  constructor(
    private readonly client: Client,
    private readonly options: { setTimer?: (fn: () => void, ms: number) => { cancel(): void } } = {},
  ) {}

  /** Dials the target for `callerChannelId`'s call and bridges them when it answers (see the file comment). Never throws. */
  async transfer(input: { callerChannelId: string; endpoint: string; app: string; target: TransferTarget; options: TransferOptions }): Promise<TransferResult> {
    const { callerChannelId, options } = input;
    try {
      if (!(await this.client.getChannel(callerChannelId))) return { ok: false, reason: 'call_not_active', detail: `Asterisk has no channel ${callerChannelId}` };
    } catch (err) {
      return { ok: false, reason: 'unreachable', detail: detailOf(err) };
    }
    const legId = `${callerChannelId}-transfer-${Date.now().toString(36)}`;
    const leg: PendingLeg = { callerId: callerChannelId, bridgeId: `${legId}-bridge`, bridged: false };
    const outcome = new Promise<TransferResult>((resolve) => {
      leg.settle = resolve;
    });
    this.legs.set(legId, leg);
    try {
      await this.client.originate({
        channelId: legId,
        endpoint: input.endpoint,
        app: input.app,
        appArgs: [TRANSFER_MARK, String(options.runId), callerChannelId],
        ...(options.callerId ? { callerId: options.callerId } : {}),
        timeoutSeconds: options.ringTimeoutSeconds,
      });
    } catch (err) {
      this.legs.delete(legId);
      const retryable = err instanceof ProviderApiError && err.retryable;
      return { ok: false, reason: retryable ? 'unreachable' : 'carrier_refused', detail: detailOf(err) };
    }
    const timer = this.timer(() => {
      this.finish(legId, { ok: false, reason: 'no_answer', detail: `the target did not answer within ${options.ringTimeoutSeconds} s` });
      void this.client.hangup(legId, 'no_answer').catch(() => undefined);
    }, (options.ringTimeoutSeconds + ANSWER_MARGIN_SECONDS) * 1000);
    const result = await outcome;
    timer.cancel();
    return result;
  }

  /** Consumes the events of transfer legs and ends a bridged pair together. True when the event was a transfer leg's. */
  async handle(event: AriEvent): Promise<boolean> {
    const leg = this.legs.get(event.channelId);
    if (leg) {
      if (event.type === 'StasisStart' && !leg.bridged) await this.bridge(event.channelId, leg);
      else if (event.type === 'ChannelDestroyed') {
        this.legs.delete(event.channelId);
        if (leg.bridged) {
          this.partners.delete(leg.callerId);
          await this.endPair(leg.callerId, leg.bridgeId);
        }
        else this.finish(event.channelId, { ok: false, reason: transferReasonOfCause(event.cause), detail: `Asterisk cause ${event.cause ?? 'none'} (${event.causeText ?? 'no text'})` }, leg);
      }
      return true;
    }
    if ((event.type === 'StasisStart' && (event.args ?? [])[0] === TRANSFER_MARK)) return true; // a leg of an earlier process
    if (event.type === 'ChannelDestroyed') {
      const partner = this.partners.get(event.channelId);
      if (partner) {
        this.partners.delete(event.channelId);
        const bridged = this.legs.get(partner);
        await this.endPair(partner, bridged?.bridgeId);
      }
    }
    return false; // the caller's own events still move its run
  }

  private async bridge(legId: string, leg: PendingLeg): Promise<void> {
    try {
      await this.client.createBridge(leg.bridgeId);
      await this.client.addChannelsToBridge(leg.bridgeId, [leg.callerId, legId]);
      leg.bridged = true;
      this.partners.set(leg.callerId, legId);
      this.finish(legId, { ok: true, detail: `bridged ${leg.callerId} with ${legId}` }, leg);
    } catch (err) {
      this.finish(legId, { ok: false, reason: 'carrier_refused', detail: detailOf(err) }, leg);
      await this.client.hangup(legId, 'normal').catch(() => undefined);
      await this.client.destroyBridge(leg.bridgeId).catch(() => undefined);
    }
  }

  private async endPair(channelId: string, bridgeId: string | undefined): Promise<void> {
    await this.client.hangup(channelId, 'normal').catch(() => undefined);
    if (bridgeId) await this.client.destroyBridge(bridgeId).catch(() => undefined);
  }

  private finish(legId: string, result: TransferResult, leg = this.legs.get(legId)): void {
    const settle = leg?.settle;
    if (!leg || !settle) return;
    leg.settle = undefined;
    settle(result);
  }

  private timer(fn: () => void, ms: number): { cancel(): void } {
    if (this.options.setTimer) return this.options.setTimer(fn, ms);
    const t = setTimeout(fn, ms);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  }
}

function detailOf(err: unknown): string {
  return err instanceof ProviderApiError ? err.detail : err instanceof Error ? err.message : String(err);
}
