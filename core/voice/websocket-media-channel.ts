/**
 * The two-way `MediaChannel` over one carrier media WebSocket and its framing (docs/voice.md "Carriers and
 * media framing"). The voice session speaks μ-law 8 kHz on every carrier; this channel converts to and from
 * the carrier's wire format (Vonage: L16 16 kHz, cut into 640-byte frames), serializes audio, marks, clear
 * and hang-up through the framing, and reports marks:
 * - native marks (Twilio, Telnyx, Plivo, Asterisk): sent on the wire; the carrier's echo reports it played
 *   (and every mark sent before it, since playback is in order);
 * - emulated marks (Vonage, the simulator): a playout clock. Each audio chunk is due to finish playing at
 *   `max(now, end of what was sent before) + its duration`; a mark is played when the clock passes the end
 *   of the audio sent before it. One timer per channel, armed only while marks wait.
 * `clear` sends the carrier's clear, drops the not-yet-framed remainder and the converter state, resets the
 * playout clock and reports every pending mark as not played (`played` false), at once and in order; a late
 * echo of a cleared mark is ignored. Mark names must be unique per channel.
 *
 * Pure apart from the socket and timers it is given; never throws to its caller. The endpoint feeds it the
 * carrier's parsed messages (`receive`) and the socket's end (`closed`).
 */
import type { MediaFraming, MediaMessage, MediaStreamIds } from '../calls/media-session.js';
import type { Logger } from '../ports/logger.port.js';
import type { MediaChannel } from '../ports/media-channel.port.js';
import { bytesPerMs, type AudioFormat } from './audio-format.js';
import { fromSessionAudio, SESSION_FORMAT, toSessionAudio, type AudioConverter } from './carrier-audio.js';

/** The little a channel needs of a WebSocket. */
export interface MediaSocket {
  send(data: string | Uint8Array, binary: boolean): void;
  close(code: number, reason: string): void;
}

/** A monotonic millisecond clock and one-shot timers (the endpoint gives real ones; tests a fake). */
export interface PlayoutTimers {
  now(): number;
  setTimeout(fn: () => void, ms: number): { cancel(): void };
}

export interface WebSocketMediaChannelOptions {
  framing: Pick<MediaFraming, 'media' | 'serialize' | 'outFrameBytes'>;
  /** The ids the stream's start gave (outbound messages name them). */
  stream: MediaStreamIds;
  timers: PlayoutTimers;
  /**
   * The audio format the stream's `start` announced, when it differs from the manifest's declaration (an
   * Asterisk channel in `slin16`, a Telnyx stream in PCMA); used both ways. Default: the declaration's.
   */
  wireFormat?: AudioFormat;
  /** Hangs up through the carrier's call-control API when its stream is only a fork (`media.hangUp` `rest`). */
  hangUpCall?: (reason: string) => Promise<void>;
  log?: Logger;
}

/** The WebSocket close code of a hang-up from our side. */
export const HANG_UP_CLOSE_CODE = 1000;

interface PendingMark {
  name: string;
  /** Emulated marks: playout-clock time at which the audio before it has played. */
  dueMs?: number;
}

export class WebSocketMediaChannel implements MediaChannel {
  readonly inFormat: AudioFormat = SESSION_FORMAT;
  readonly outFormat: AudioFormat = SESSION_FORMAT;
  private readonly toSession: AudioConverter;
  private readonly toWire: AudioConverter;
  private readonly emulatedMarks: boolean;
  private readonly sessionBytesPerMs = bytesPerMs(SESSION_FORMAT);
  private remainder: Uint8Array = new Uint8Array(0);
  private playoutEndMs = 0;
  private readonly pending: PendingMark[] = [];
  private markTimer: { cancel(): void } | null = null;
  private closedReason: string | null = null;
  private hangingUp: Promise<void> | null = null;
  private readonly audioListeners: Array<(audio: Uint8Array) => void> = [];
  private readonly dtmfListeners: Array<(digit: string) => void> = [];
  private readonly markListeners: Array<(name: string, played: boolean) => void> = [];
  private readonly closeListeners: Array<(reason: string) => void> = [];
  private sentBytes = 0;

  constructor(
    private readonly socket: MediaSocket,
    private readonly options: WebSocketMediaChannelOptions,
  ) {
    const { media } = options.framing;
    this.toSession = toSessionAudio(options.wireFormat ?? media.inFormat);
    this.toWire = fromSessionAudio(options.wireFormat ?? media.outFormat);
    this.emulatedMarks = media.marks === 'emulated';
  }

  /** True once the stream ended (closed by either side or hung up). */
  get isClosed(): boolean {
    return this.closedReason !== null;
  }

  /** Session-format bytes of agent audio sent so far (tests, metrics). */
  get audioBytesSent(): number {
    return this.sentBytes;
  }

  /** Milliseconds of sent audio the carrier has not played yet by the playout clock. */
  get bufferedMs(): number {
    return Math.max(0, this.playoutEndMs - this.options.timers.now());
  }

  sendAudio(audio: Uint8Array): void {
    if (this.closedReason !== null || audio.length === 0) return;
    let wire = this.toWire.convert(audio);
    const frameBytes = this.options.framing.outFrameBytes;
    if (frameBytes) {
      if (this.remainder.length > 0) {
        const joined = new Uint8Array(this.remainder.length + wire.length);
        joined.set(this.remainder, 0);
        joined.set(wire, this.remainder.length);
        wire = joined;
      }
      const whole = wire.length - (wire.length % frameBytes);
      this.remainder = wire.slice(whole);
      for (let at = 0; at < whole; at += frameBytes) this.send({ kind: 'audio', payload: wire.subarray(at, at + frameBytes) });
    } else {
      this.send({ kind: 'audio', payload: wire });
    }
    this.sentBytes += audio.length;
    const now = this.options.timers.now();
    this.playoutEndMs = Math.max(this.playoutEndMs, now) + audio.length / this.sessionBytesPerMs;
  }

  sendMark(name: string): void {
    if (this.closedReason !== null) {
      queueMicrotask(() => this.emitMark(name, false));
      return;
    }
    if (!this.emulatedMarks) {
      this.pending.push({ name });
      this.send({ kind: 'mark', name });
      return;
    }
    this.pending.push({ name, dueMs: Math.max(this.playoutEndMs, this.options.timers.now()) });
    this.armMarkTimer();
  }

  clear(): void {
    if (this.closedReason !== null) return;
    this.send({ kind: 'clear' });
    this.remainder = new Uint8Array(0);
    this.toWire.reset();
    this.playoutEndMs = this.options.timers.now();
    this.dropPendingMarks();
  }

  hangUp(reason: string): Promise<void> {
    this.hangingUp ??= (async () => {
      if (this.closedReason === null) {
        this.send({ kind: 'hangup', reason });
        try {
          this.socket.close(HANG_UP_CLOSE_CODE, reason.slice(0, 100));
        } catch (e) {
          this.options.log?.warn({ err: (e as Error)?.message }, 'media socket could not be closed');
        }
        this.closed('hangup');
      }
      if (this.options.framing.media.hangUp === 'rest' && this.options.hangUpCall) {
        await this.options.hangUpCall(reason).catch((e: unknown) => this.options.log?.warn({ err: (e as Error)?.message }, 'carrier hang-up failed'));
      }
    })();
    return this.hangingUp;
  }

  onAudio(listener: (audio: Uint8Array) => void): void {
    this.audioListeners.push(listener);
  }

  onDtmf(listener: (digit: string) => void): void {
    this.dtmfListeners.push(listener);
  }

  onMark(listener: (name: string, played: boolean) => void): void {
    this.markListeners.push(listener);
  }

  onClose(listener: (reason: string) => void): void {
    if (this.closedReason !== null) {
      const reason = this.closedReason;
      queueMicrotask(() => this.safely(() => listener(reason)));
      return;
    }
    this.closeListeners.push(listener);
  }

  /** One parsed carrier message (the endpoint calls this for every message of a started stream). */
  receive(message: MediaMessage): void {
    if (this.closedReason !== null) return;
    switch (message.kind) {
      case 'audio': {
        if (message.track !== 'inbound' || this.audioListeners.length === 0) return;
        const audio = this.toSession.convert(message.payload);
        if (audio.length === 0) return;
        for (const l of this.audioListeners) this.safely(() => l(audio));
        return;
      }
      case 'dtmf':
        for (const l of this.dtmfListeners) this.safely(() => l(message.digit));
        return;
      case 'mark':
        return this.markEchoed(message.name);
      case 'stop':
        return this.closed('stop');
      default:
        return;
    }
  }

  /** The stream ended (`stop`, the socket closed, shutdown): pending marks are reported not played. Idempotent. */
  closed(reason: string): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    this.dropPendingMarks();
    for (const l of this.closeListeners.splice(0)) this.safely(() => l(reason));
  }

  private markEchoed(name: string): void {
    if (this.emulatedMarks) return;
    const i = this.pending.findIndex((m) => m.name === name);
    if (i < 0) return; // cleared before, or never ours
    for (const m of this.pending.splice(0, i + 1)) this.emitMark(m.name, true);
  }

  private armMarkTimer(): void {
    if (this.markTimer || this.pending.length === 0) return;
    const wait = Math.max(0, this.pending[0]!.dueMs! - this.options.timers.now());
    this.markTimer = this.options.timers.setTimeout(() => {
      this.markTimer = null;
      const now = this.options.timers.now();
      while (this.pending.length > 0 && this.pending[0]!.dueMs! <= now) this.emitMark(this.pending.shift()!.name, true);
      this.armMarkTimer();
    }, wait);
  }

  private dropPendingMarks(): void {
    this.markTimer?.cancel();
    this.markTimer = null;
    for (const m of this.pending.splice(0)) this.emitMark(m.name, false);
  }

  private emitMark(name: string, played: boolean): void {
    for (const l of this.markListeners) this.safely(() => l(name, played));
  }

  private send(message: Parameters<WebSocketMediaChannelOptions['framing']['serialize']>[0]): void {
    for (const frame of this.options.framing.serialize(message, this.options.stream)) {
      try {
        this.socket.send(frame.data, frame.binary);
      } catch (e) {
        this.options.log?.warn({ err: (e as Error)?.message }, 'media message could not be sent');
        return;
      }
    }
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.options.log?.error({ err: (e as Error)?.message }, 'media channel listener failed');
    }
  }
}
