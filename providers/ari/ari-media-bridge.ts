/**
 * The media of an ARI call (docs/voice.md "Carriers and media framing", docs/providers.md "Asterisk"): once the
 * caller's channel is answered, a mixing bridge holds it together with an **external media channel** over
 * chan_websocket (`POST /channels/externalMedia`, `transport=websocket`, `encapsulation=none`, `format=ulaw`,
 * `direction=both`). Asterisk connects out through the configuration's `websocket_client.conf` connection
 * (`ws_client_name`), whose URI is our `/api/v1/telephony/ari/media`; `transport_data` `v(run_id=…,token=…)` adds
 * the run and its media token (taken from the URL `CallUrls.media` signed) as query parameters. The media channel
 * enters our application (`StasisStart`, args `callplane-media,<run id>`) once its WebSocket is up; only then can
 * it join the bridge.
 *
 * Policy: a call whose media cannot be connected (a refused REST request, a WebSocket that never came up, a bridge
 * that refuses the channel) would be a silent line, so it **fails**: the run is reported `failed` with the reason
 * and the caller is hung up. When the media channel ends while the call is live (the agent hung up with
 * chan_websocket's `HANGUP`, or the stream was lost) the caller is hung up too, unless the caller left our bridge
 * (a transfer moved it): then only our bridge goes. When the caller's channel ends, the media channel is hung up
 * and the bridge destroyed. Nothing here throws: every Asterisk failure is logged, and contained.
 */
import type { Logger } from '../../core/ports/logger.port.js';
import type { AriClientLike } from './ari-connections.js';
import type { AriEvent } from './ari.client.js';

/** First Stasis argument of the external media channels Callplane creates; the second is the run id. */
export const MEDIA_MARK = 'callplane-media';

/** Characters a media token may have to travel inside a chan_websocket `v()` option (no `,`, `(`, `)` or `=`). */
const URI_SAFE = /^[A-Za-z0-9._~-]{1,512}$/;

type Client = Pick<AriClientLike, 'createBridge' | 'addChannelsToBridge' | 'destroyBridge' | 'getBridge' | 'externalMedia' | 'hangup' | 'getChannel'>;

/**
 * The chan_websocket `transport_data` that adds `run_id` and the run's media token to the connection's URI,
 * from the signed media URL of the run (`CallUrls.media`). Throws `Error` when the URL carries no usable token.
 */
export function mediaTransportData(mediaUrl: string, runId: number): string {
  let token: string | null;
  try {
    token = new URL(mediaUrl).searchParams.get('token');
  } catch {
    throw new Error('the run\'s media URL is not a URL');
  }
  if (!token || !URI_SAFE.test(token)) throw new Error('the run\'s media URL carries no media token');
  return `v(run_id=${runId},token=${token})`;
}

/** What the session does when a call's media fails (report the run failed, hang the caller up). */
export type MediaFailureHandler = (callId: string, reason: string) => Promise<void>;

interface Leg {
  callId: string;
  runId: number;
  bridgeId: string;
  mediaId: string;
  /** The media channel entered Stasis (its WebSocket is up) and joined the bridge. */
  up: boolean;
  /** The call ended or failed: the leg is being torn down; its events change nothing. */
  released: boolean;
}

export class AriMediaBridges {
  private readonly byCall = new Map<string, Leg>();
  private readonly byMedia = new Map<string, Leg>();

  constructor(
    private readonly client: Client,
    private readonly onFailure: MediaFailureHandler,
    private readonly log: () => Logger | undefined,
  ) {}

  /** Calls with media (tests, health). */
  get size(): number {
    return this.byCall.size;
  }

  /** The media leg of a call: its bridge and external media channel ids. */
  legOf(callId: string): { bridgeId: string; mediaChannelId: string; up: boolean } | undefined {
    const leg = this.byCall.get(callId);
    return leg && { bridgeId: leg.bridgeId, mediaChannelId: leg.mediaId, up: leg.up };
  }

  /**
   * Connects the media of the answered call `callId`: bridge, caller in it, external media channel (which joins
   * on its `StasisStart`, see `handle`). Idempotent per call. A failure goes to the failure handler. Never throws.
   */
  async connect(call: { callId: string; runId?: number; mediaUrl?: string }, settings: { app: string; connection: string }): Promise<void> {
    if (this.byCall.has(call.callId)) return;
    if (call.runId === undefined || !call.mediaUrl) {
      await this.fail(call.callId, 'no media URL for this call (placed before a restart?)');
      return;
    }
    let transportData: string;
    try {
      transportData = mediaTransportData(call.mediaUrl, call.runId);
    } catch (err) {
      await this.fail(call.callId, (err as Error).message);
      return;
    }
    const leg: Leg = { callId: call.callId, runId: call.runId, bridgeId: `${call.callId}-bridge`, mediaId: `${call.callId}-media`, up: false, released: false };
    this.byCall.set(leg.callId, leg);
    // known before Asterisk can announce it: its events are recognised from the first one
    this.byMedia.set(leg.mediaId, leg);
    try {
      await this.client.createBridge(leg.bridgeId);
      await this.client.addChannelsToBridge(leg.bridgeId, [leg.callId]);
      if (leg.released) return;
      await this.client.externalMedia({
        channelId: leg.mediaId,
        app: settings.app,
        connection: settings.connection,
        format: 'ulaw',
        transportData,
        appArgs: [MEDIA_MARK, String(leg.runId)],
      });
      this.log()?.info({ channel_id: leg.callId, run_id: leg.runId, media_channel_id: leg.mediaId, connection: settings.connection }, 'ARI external media channel created');
    } catch (err) {
      await this.fail(leg.callId, `Asterisk refused the call's media: ${(err as Error)?.message ?? String(err)}`);
    }
  }

  /**
   * Consumes the events of our external media channels (true when the event was one of theirs): `StasisStart`
   * bridges it; `ChannelDestroyed` before that is a media failure, after it ends the call (see the file comment).
   * A media channel of an earlier process is hung up. Never throws.
   */
  async handle(event: AriEvent): Promise<boolean> {
    const leg = this.byMedia.get(event.channelId);
    if (!leg) {
      if (event.type === 'StasisStart' && (event.args ?? [])[0] === MEDIA_MARK) {
        this.log()?.warn({ media_channel_id: event.channelId }, 'an ARI media channel of no live call; hanging it up');
        await this.client.hangup(event.channelId, 'normal').catch(() => undefined);
        return true;
      }
      return false;
    }
    if (event.type === 'StasisStart') {
      if (leg.released) {
        await this.client.hangup(leg.mediaId, 'normal').catch(() => undefined);
        return true;
      }
      try {
        await this.client.addChannelsToBridge(leg.bridgeId, [leg.mediaId]);
        leg.up = true;
        this.log()?.info({ channel_id: leg.callId, run_id: leg.runId, bridge_id: leg.bridgeId }, 'ARI call media bridged');
      } catch (err) {
        await this.fail(leg.callId, `Asterisk did not bridge the call's media: ${(err as Error)?.message ?? String(err)}`);
      }
    } else if (event.type === 'ChannelDestroyed') {
      this.byMedia.delete(leg.mediaId);
      if (leg.released) return true;
      if (!leg.up) {
        await this.fail(leg.callId, `the media WebSocket did not connect (Asterisk cause ${event.cause ?? 'none'}: ${event.causeText ?? 'no text'})`);
        return true;
      }
      await this.mediaEnded(leg);
    }
    return true;
  }

  /** The call `callId` ended: hangs the media channel up and destroys the bridge. Idempotent; never throws. */
  async release(callId: string): Promise<void> {
    const leg = this.byCall.get(callId);
    if (!leg) return;
    this.byCall.delete(callId);
    leg.released = true;
    if (this.byMedia.has(leg.mediaId)) {
      const gone = await this.client.hangup(leg.mediaId, 'normal').catch(() => 'failed' as const);
      if (gone === 'not_found') this.byMedia.delete(leg.mediaId);
    }
    await this.client.destroyBridge(leg.bridgeId).catch((err: unknown) => {
      this.log()?.warn({ bridge_id: leg.bridgeId, err: (err as Error)?.message }, 'destroying an ARI media bridge failed');
    });
  }

  /**
   * After a re-connection of the event WebSocket (the events of the gap are lost): a media channel that came up
   * meanwhile joins its bridge; one that ended ends its call as its `ChannelDestroyed` would have. Stops at the
   * first Asterisk failure (the next re-connection tries again). Never throws.
   */
  async reconcile(): Promise<void> {
    for (const leg of [...this.byCall.values()]) {
      if (leg.released) continue;
      let channel;
      try {
        channel = await this.client.getChannel(leg.mediaId);
      } catch {
        return;
      }
      if (!channel) {
        this.byMedia.delete(leg.mediaId);
        if (leg.up) await this.mediaEnded(leg);
        else await this.fail(leg.callId, 'the media channel ended while the ARI WebSocket was down');
      } else if (!leg.up && channel.state === 'Up') {
        // answered: its WebSocket is up and it is in our application
        await this.handle({ type: 'StasisStart', channelId: leg.mediaId, args: [MEDIA_MARK, String(leg.runId)], timestamp: new Date().toISOString() });
      }
    }
  }

  /** Forgets everything (the connection is disposed). */
  clear(): void {
    this.byCall.clear();
    this.byMedia.clear();
  }

  /** The media channel ended while the call was live: the caller is hung up, unless a transfer moved it out of our bridge. */
  private async mediaEnded(leg: Leg): Promise<void> {
    let callerStays = true;
    try {
      const bridge = await this.client.getBridge(leg.bridgeId);
      callerStays = bridge !== null && bridge.channelIds.includes(leg.callId);
    } catch {
      // Asterisk unreachable: hang up, a caller must not stay on a silent line
    }
    if (!callerStays) {
      this.log()?.info({ channel_id: leg.callId, run_id: leg.runId }, 'ARI media ended after the caller left the bridge; the call goes on');
      await this.release(leg.callId);
      return;
    }
    this.log()?.info({ channel_id: leg.callId, run_id: leg.runId }, 'ARI media ended; hanging up the caller');
    await this.client.hangup(leg.callId, 'normal').catch((err: unknown) => {
      this.log()?.warn({ channel_id: leg.callId, err: (err as Error)?.message }, 'hanging up an ARI caller after its media ended failed');
    });
  }

  private async fail(callId: string, reason: string): Promise<void> {
    this.log()?.warn({ channel_id: callId, reason }, 'ARI call media failed; failing the call');
    await this.release(callId);
    try {
      await this.onFailure(callId, reason);
    } catch (err) {
      this.log()?.error({ channel_id: callId, err: (err as Error)?.message }, 'handling an ARI media failure failed');
    }
  }
}
