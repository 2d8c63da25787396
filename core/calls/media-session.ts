/**
 * A call's media stream, normalized at the edge. Each provider frames its media WebSocket its own way; a pure
 * `MediaFraming.parse` per provider (providers/<id>/<id>-media.ts) turns every message into a `MediaMessage`
 * (and `serialize` gives what we send its shape: the two-way `MediaChannel` of core/voice/websocket-media-channel.ts),
 * and one `MediaSession` per connection does the rest for every provider alike: checks the token a `start`
 * carries, records the caller's audio as a μ-law 8 kHz mono WAV (converted from the carrier's format, e.g.
 * Vonage's L16 16 kHz), keeps a timeline of the stream (start,
 * marks, stop, byte counts), moves the run through the one status path and attaches what it stored to the run.
 *
 * No speech recognition or language model runs here: the session records audio and facts about the stream,
 * never a transcript.
 */
import type { Clock } from '../ports/clock.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { ObjectStore } from '../ports/object-store.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { NormalizedCallEvent } from '../ports/telephony-provider.port.js';
import type { Run } from '../runs/run.js';
import type { MediaDeclaration } from '../telephony/provider-manifest.js';
import type { AudioFormat } from '../voice/audio-format.js';
import { canConvert, toSessionAudio, type AudioConverter } from '../voice/carrier-audio.js';
import { MediaRecording, type MediaRecordingResult } from './media-recording.js';
import type { MediaTokens } from './media-token.js';

/** `inbound`: what the caller says (recorded); `outbound`: what is played to the caller. */
export type MediaTrack = 'inbound' | 'outbound';

export interface MediaFormat {
  /** MIME-style name, e.g. `audio/x-mulaw`. */
  encoding: string;
  sampleRate: number;
  channels: number;
}

export const MULAW_8K_MONO: MediaFormat = Object.freeze({ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 });

const AUDIO_RATES: ReadonlyArray<AudioFormat['sampleRate']> = [8000, 16000, 22050, 24000, 44100, 48000];

/**
 * A stream's MIME-style format as an `AudioFormat` (`audio/x-mulaw` → mulaw, `audio/x-alaw` → alaw,
 * `audio/l16` → l16); null when it is not mono, not one of those encodings or not a known rate.
 */
export function audioFormatOfMedia(f: MediaFormat): AudioFormat | null {
  const encoding = ({ 'audio/x-mulaw': 'mulaw', 'audio/x-alaw': 'alaw', 'audio/l16': 'l16' } as const)[f.encoding.toLowerCase() as 'audio/x-mulaw'];
  const rate = AUDIO_RATES.find((r) => r === f.sampleRate);
  if (!encoding || rate === undefined || f.channels !== 1) return null;
  return { encoding, sampleRate: rate };
}

export interface MediaStart {
  /** The provider's id of the stream (Twilio `streamSid`). */
  streamId?: string;
  /** The provider's id of the call (Twilio `callSid`). */
  providerCallId?: string;
  tracks: MediaTrack[];
  format: MediaFormat;
  /** Custom parameters the answer markup set (Twilio `<Parameter>`): where the token travels for some providers. */
  parameters: Record<string, string>;
}

/** One media WebSocket message, normalized. Unknown or malformed messages are `ignored` with a reason. */
export type MediaMessage =
  | { kind: 'connected' }
  | { kind: 'start'; start: MediaStart }
  | { kind: 'audio'; track: MediaTrack; payload: Uint8Array }
  | { kind: 'mark'; name: string }
  | { kind: 'dtmf'; digit: string }
  | { kind: 'stop'; reason?: string }
  /** The carrier acknowledged a clear (Plivo `clearedAudio`, Vonage `websocket:cleared`). */
  | { kind: 'cleared' }
  | { kind: 'ignored'; reason: string };

/**
 * What is sent to the carrier, before its framing gives it the wire's shape. `audio` is in the carrier's own
 * format (`MediaDeclaration.outFormat`); `hangup` is what the carrier needs said before the stream closes.
 */
export type OutboundMedia =
  | { kind: 'audio'; payload: Uint8Array }
  | { kind: 'mark'; name: string }
  | { kind: 'clear' }
  | { kind: 'hangup'; reason: string };

/** One WebSocket message to send: text (`binary` false) or binary. */
export interface WireFrame {
  data: string | Uint8Array;
  binary: boolean;
}

/** What outbound messages must name: the ids the stream's `start` gave (Twilio `streamSid`, Plivo `streamId`). */
export interface MediaStreamIds {
  streamId?: string;
  providerCallId?: string;
}

/** How a provider frames its media stream both ways, and what the stream means for the call. */
export interface MediaFraming {
  provider: string;
  /** The manifest's media declaration: wire formats each way, native or emulated marks and clear, hang-up. */
  media: MediaDeclaration;
  /** Pure; never throws: anything unreadable is `{kind: 'ignored', reason}`. */
  parse(data: Uint8Array, isBinary: boolean): MediaMessage;
  /**
   * The WebSocket messages that say `message` to the carrier. Pure; never throws. Empty when the carrier has
   * nothing on the wire for it (an emulated mark or clear; a hang-up that is only the stream closing).
   */
  serialize(message: OutboundMedia, stream: MediaStreamIds): WireFrame[];
  /** Outbound audio must go in messages of exactly this many bytes (Vonage: 640, 20 ms of L16 16 kHz); absent: any size. */
  outFrameBytes?: number;
  /**
   * Where the media token arrives: `query` (`?token=` on the WebSocket URL, checked before the upgrade) or
   * `start` (the `start` message's parameters; Twilio, whose stream URLs cannot carry a query string).
   */
  tokenIn: 'query' | 'start';
  /** A `start` means the call is connected (`in_progress`). Idempotent with the provider's own callbacks. */
  startMeansInProgress: boolean;
  /** The stream's end is the call's end: only for providers that report no final status of their own. */
  stopMeansCompleted: boolean;
}

/** Why a stream ended; `hangup`: we hung up through its channel. */
export type MediaSessionEnd = 'stop' | 'closed' | 'hangup' | 'idle' | 'shutdown' | 'unauthorized' | 'start_timeout' | 'too_large' | 'error';

export interface MediaSessionSummary {
  runId: number;
  endReason: MediaSessionEnd;
  started: boolean;
  inboundBytes: number;
  outboundBytes: number;
  recording: MediaRecordingResult | null;
  ignoredMessages: number;
}

export interface MediaSessionDeps {
  runs: Pick<RunRepository, 'attachArtifacts'>;
  store: ObjectStore;
  applyStatus: { execute(provider: string, event: NormalizedCallEvent, runId?: number): Promise<unknown> };
  tokens: Pick<MediaTokens, 'verify'>;
  clock: Clock;
  log: Logger;
}

export interface MediaSessionOptions {
  /** The token was already checked on the WebSocket URL (otherwise the `start` must carry it). */
  authorizedByUrl: boolean;
  maxRecordingBytes: number;
  /** Audio bytes waiting for the store above which the transport pauses reading. */
  highWaterBytes: number;
}

/** Marks and other timeline entries kept at most (the rest are counted). */
const MAX_TIMELINE_ENTRIES = 100;
/** Ignored messages logged one by one at most (the rest are counted). */
const MAX_IGNORED_LOGS = 5;

export const recordingKeyOf = (run: Pick<Run, 'organizationId' | 'id'>): string => `runs/${run.organizationId}/${run.id}/recording.wav`;
const rawRecordingKeyOf = (run: Pick<Run, 'organizationId' | 'id'>): string => `runs/${run.organizationId}/${run.id}/recording.ulaw.part`;

export class MediaSession {
  private stateValue: 'awaiting_start' | 'streaming' | 'ended' = 'awaiting_start';
  private startInfo: MediaStart | null = null;
  private startedAt: Date | null = null;
  private recording: MediaRecording | null = null;
  /** The caller's audio as the recording keeps it (μ-law 8 kHz), converted from the stream's format. */
  private toRecording: AudioConverter | null = null;
  private notRecordedReason: string | null = null;
  /** A voice session records this call itself (stereo): the caller-only recording is neither kept nor attached. */
  private recordingHandedOver = false;
  private inboundBytes = 0;
  private outboundBytes = 0;
  private ignored = 0;
  private dtmfCount = 0;
  private readonly timeline: Array<{ event: string; at_ms: number; name?: string }> = [];
  private timelineDropped = 0;
  private readonly pending: Array<Promise<unknown>> = [];
  private ending: Promise<MediaSessionSummary> | null = null;
  private readonly openedAt: Date;
  private readonly log: Logger;

  constructor(
    private readonly deps: MediaSessionDeps,
    readonly run: Pick<Run, 'id' | 'organizationId'>,
    private readonly framing: Pick<MediaFraming, 'provider' | 'startMeansInProgress' | 'stopMeansCompleted'>,
    private readonly options: MediaSessionOptions,
    private readonly onEnded?: (session: MediaSession) => void,
  ) {
    this.openedAt = deps.clock.now();
    this.log = deps.log.child({ provider: framing.provider, run_id: run.id });
  }

  get state(): 'awaiting_start' | 'streaming' | 'ended' {
    return this.stateValue;
  }

  /**
   * The stream's `start`. Without a token on the URL, its parameters must carry a valid one for this run
   * (`{ok: false}`: close the connection as a policy violation; nothing was recorded). On success the caller's
   * audio starts recording (mono μ-law or A-law 8 kHz, or L16: kept as μ-law 8 kHz) and, for providers where a stream means a connected call,
   * the run moves to `in_progress` through the one status path.
   */
  onStart(start: MediaStart): { ok: true } | { ok: false; reason: string } {
    if (this.stateValue === 'ended') return { ok: true };
    if (this.stateValue === 'streaming') {
      this.onIgnored('a second start on the same stream');
      return { ok: true };
    }
    if (!this.options.authorizedByUrl) {
      const check = this.deps.tokens.verify(this.framing.provider, this.run.id, start.parameters.token);
      if (check !== 'valid') {
        this.log.warn({ check }, `media stream refused: ${check === 'expired' ? 'token expired' : 'no valid token'} in start`);
        return { ok: false, reason: check === 'expired' ? 'token expired' : 'token invalid' };
      }
    }
    this.stateValue = 'streaming';
    this.startInfo = start;
    this.startedAt = this.deps.clock.now();
    this.note('start');
    const audio = audioFormatOfMedia(start.format);
    if (!start.tracks.includes('inbound') && start.tracks.length > 0) this.notRecordedReason = 'the stream carries no inbound (caller) track';
    else if (!audio || !canConvert(audio)) {
      this.notRecordedReason = `unsupported media format ${start.format.encoding}/${start.format.sampleRate}/${start.format.channels}`;
    } else {
      this.toRecording = toSessionAudio(audio);
      this.recording = new MediaRecording(this.deps.store, {
        rawKey: rawRecordingKeyOf(this.run), wavKey: recordingKeyOf(this.run),
        highWaterBytes: this.options.highWaterBytes, maxBytes: this.options.maxRecordingBytes,
      }, this.log);
    }
    if (this.notRecordedReason) this.log.warn({ reason: this.notRecordedReason }, 'media stream not recorded');
    this.log.info({ stream_id: start.streamId ?? null, tracks: start.tracks }, 'media stream started');
    if (this.framing.startMeansInProgress) {
      this.track(this.deps.applyStatus.execute(this.framing.provider, {
        kind: 'status', runId: this.run.id, status: 'in_progress', at: this.startedAt, detail: 'media stream started',
      }, this.run.id));
    }
    return { ok: true };
  }

  /**
   * Audio bytes of one track (owned by the session from now on). The caller's track is recorded. Returns
   * false when the store is behind: stop reading until `whenDrained`. Audio before an accepted `start` is
   * ignored.
   */
  onAudio(track: MediaTrack, bytes: Uint8Array): boolean {
    if (this.stateValue !== 'streaming') {
      if (this.stateValue === 'awaiting_start') this.onIgnored('media before start');
      return true;
    }
    if (track === 'outbound') {
      this.outboundBytes += bytes.length;
      return true;
    }
    this.inboundBytes += bytes.length;
    return this.recording && !this.recordingHandedOver ? this.recording.write(this.toRecording!.convert(bytes)) : true;
  }

  /**
   * A talking call's voice session records the call itself (caller left, agent right, docs/voice.md "Making
   * calls talk"): from now on the caller's audio is no longer stored here and no `recording_url` is attached by
   * this session (the stream's summary still is). Idempotent.
   */
  handOverRecording(): void {
    if (this.recordingHandedOver) return;
    this.recordingHandedOver = true;
    // the first frames it took before the hand-over would leave a caller-only WAV nothing points to
    void this.recording?.abandon();
  }

  whenDrained(cb: () => void): void {
    if (this.recording) this.recording.whenDrained(cb);
    else cb();
  }

  onMark(name: string): void {
    if (this.stateValue !== 'streaming') return this.onIgnored('mark outside a started stream');
    this.note('mark', name.slice(0, 100));
  }

  /** DTMF is counted, never stored: the digits may be a PIN. */
  onDtmf(): void {
    if (this.stateValue !== 'streaming') return this.onIgnored('dtmf outside a started stream');
    this.dtmfCount++;
  }

  /** A message the framing could not use: counted, the first few logged with their reason. Never an error. */
  onIgnored(reason: string): void {
    this.ignored++;
    if (this.ignored <= MAX_IGNORED_LOGS) this.log.info({ reason, ignored: this.ignored }, 'media message ignored');
  }

  /**
   * Ends the session (the provider's `stop`, the socket closing, a timeout, shutdown): finalizes the
   * recording, attaches it and the stream's timeline to the run, and, only for providers whose stream is the
   * whole call and that report no final status, completes the run. Idempotent: later calls return the same
   * summary.
   */
  onStop(reason: MediaSessionEnd): Promise<MediaSessionSummary> {
    this.ending ??= this.end(reason);
    return this.ending;
  }

  private async end(reason: MediaSessionEnd): Promise<MediaSessionSummary> {
    const started = this.stateValue === 'streaming';
    this.stateValue = 'ended';
    const endedAt = this.deps.clock.now();
    if (started) this.note(reason === 'stop' ? 'stop' : `end:${reason}`);
    let recording: MediaRecordingResult | null = null;
    try {
      recording = this.recording ? await this.recording.finish() : null;
      if (started) await this.attach(reason, endedAt, recording);
      if (started && this.framing.stopMeansCompleted) {
        const durationSeconds = Math.max(0, Math.round((endedAt.getTime() - this.startedAt!.getTime()) / 1000));
        this.track(this.deps.applyStatus.execute(this.framing.provider, {
          kind: 'status', runId: this.run.id, status: 'completed', outcome: 'completed', durationSeconds, at: endedAt, detail: 'media stream ended',
        }, this.run.id));
      }
      await Promise.all(this.pending);
    } catch (e) {
      this.log.error({ err: (e as Error)?.message }, 'media session could not be finalized');
    } finally {
      this.onEnded?.(this);
    }
    this.log.info({ reason, inbound_bytes: this.inboundBytes, recorded_bytes: recording?.dataBytes ?? 0, ignored: this.ignored }, 'media stream ended');
    return {
      runId: this.run.id, endReason: reason, started, inboundBytes: this.inboundBytes, outboundBytes: this.outboundBytes,
      recording, ignoredMessages: this.ignored,
    };
  }

  /** The recording key and a summary of the stream (`annotations.media_stream`) go on the run, with a log entry. */
  private async attach(reason: MediaSessionEnd, endedAt: Date, recording: MediaRecordingResult | null): Promise<void> {
    const start = this.startInfo!;
    const summary: Record<string, unknown> = {
      provider: this.framing.provider,
      stream_id: start.streamId ?? null,
      started_at: this.startedAt!.toISOString(),
      ended_at: endedAt.toISOString(),
      duration_ms: endedAt.getTime() - this.startedAt!.getTime(),
      end_reason: reason,
      media_format: { encoding: start.format.encoding, sample_rate: start.format.sampleRate, channels: start.format.channels },
      tracks: start.tracks,
      inbound_bytes: this.inboundBytes,
      outbound_bytes: this.outboundBytes,
      recorded_bytes: recording?.dataBytes ?? 0,
      recording_truncated: recording?.truncated ?? false,
      not_recorded_reason: recording ? null : this.recordingHandedOver ? 'recorded by the voice session' : this.notRecordedReason ?? (this.inboundBytes === 0 ? 'no caller audio arrived' : 'the recording could not be stored'),
      dtmf_count: this.dtmfCount,
      ignored_messages: this.ignored,
      timeline: this.timeline,
      timeline_dropped: this.timelineDropped,
    };
    await this.deps.runs.attachArtifacts(this.run.organizationId, this.run.id, {
      ...(recording && !this.recordingHandedOver ? { recordingKey: recording.key } : {}),
      annotations: { media_stream: summary },
      logs: [{
        ts: endedAt.toISOString(),
        event: 'media_stream_ended',
        message: this.recordingHandedOver ? 'recorded by the voice session' : recording ? `recorded ${recording.dataBytes} bytes of caller audio` : 'no recording',
        details: { provider: this.framing.provider, end_reason: reason, duration_ms: summary.duration_ms },
      }],
      now: endedAt,
    });
  }

  private note(event: string, name?: string): void {
    if (this.timeline.length >= MAX_TIMELINE_ENTRIES) {
      this.timelineDropped++;
      return;
    }
    const at = this.deps.clock.now().getTime() - (this.startedAt ?? this.openedAt).getTime();
    this.timeline.push(name === undefined ? { event, at_ms: at } : { event, at_ms: at, name });
  }

  private track(p: Promise<unknown>): void {
    this.pending.push(p.catch((e: unknown) => this.log.error({ err: (e as Error)?.message }, 'media stream status could not be applied')));
  }
}
