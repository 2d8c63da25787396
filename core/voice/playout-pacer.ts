/**
 * Paced playout of agent audio (docs/voice.md "Turn-taking, barge-in and endings"). One `PlayoutPacer` serves
 * every call of a process with ONE timer: while any call has audio waiting, a tick every `tickMs` (20 ms)
 * tops up each call whose lead fell below `lowWaterMs` (100 ms) so that at most `aheadMs` (200 ms) of audio
 * sits beyond the playback clock: a call gets ~100 ms in one piece every ~100 ms (with a sink's `sendFrames`,
 * one carrier message) rather than a 20 ms frame every tick, which made each call's socket take a write per
 * frame. Keeping the carrier's buffer short is what lets a barge-in `clear` silence the agent at once; the
 * first frames of a reply (and any audio that arrives) go out when they arrive, not on the next tick.
 *
 * Each call's `Playout` plays segments (one a synthesized sentence) in order, in 20 ms frames of the
 * session format, with a mark after each segment's last frame: the channel's mark echo says the caller heard
 * it whole. `clear()` drops what is queued, clears the channel and reports, for every segment not yet played, how
 * much was heard by the playback clock (a segment half played gives half its words, cut at a word boundary); a
 * played segment was heard whole, and the playout lets go of it (it holds no more than a few whatever the call's length).
 * Pure: time and timers come from the `Timers` port.
 */
import type { TimerHandle, Timers } from '../ports/timers.port.js';
import { bytesPerMs, concatBytes } from './audio-format.js';
import { SESSION_FORMAT } from './carrier-audio.js';
import { MULAW_SILENCE } from './g711.js';
import { heardPrefix } from './sentence-chunker.js';

export const FRAME_MS = 20;
/** The most received audio converted at once (ms): conversion follows playout (see `Playout.write`). */
export const CONVERT_SLICE_MS = 100;
const SESSION_BYTES_PER_MS = bytesPerMs(SESSION_FORMAT);

/** Audio in another format than the session's, and how to convert it (a stateful converter, in order). */
export interface AudioSource {
  convert(bytes: Uint8Array): Uint8Array;
  /** Bytes per millisecond of the audio written. */
  bytesPerMs: number;
}

interface RawPiece {
  bytes: Uint8Array;
  convert: ((bytes: Uint8Array) => Uint8Array) | null;
  sliceBytes: number;
}
export const PACER_DEFAULTS = Object.freeze({ tickMs: 20, aheadMs: 200, lowWaterMs: 100 });

export interface PacerOptions {
  tickMs?: number;
  /** A call is topped up to at most this much audio beyond its playback clock. */
  aheadMs?: number;
  /**
   * A tick tops a call up only once its lead fell below this (new audio and ends are sent at once whatever the
   * lead): each top-up is then ~`aheadMs - lowWaterMs` of audio in one piece (one carrier message) instead of a
   * 20 ms frame every tick, and a tick touches only the calls whose lead ran low. `aheadMs` restores a top-up
   * every tick.
   */
  lowWaterMs?: number;
}

/** Where a playout's frames go (the session's channel, through its recorder tap). */
export interface PlayoutSink {
  /** One 20 ms frame in the session format; `playAtMs` is when the playback clock says it starts playing. */
  sendFrame(frame: Uint8Array, playAtMs: number): void;
  /**
   * When given, used instead of `sendFrame`: the frames of one segment that one pump sends (a top-up, or the
   * first 200 ms of a reply) in ONE call, a whole number of 20 ms frames that play back to back from
   * `playAtMs`, so a carrier that takes any length per media message gets one message, not one per frame.
   * `audio` may be a view into the playout's buffers: read it during the call, do not keep it.
   */
  sendFrames?(audio: Uint8Array, playAtMs: number): void;
  sendMark(name: string): void;
  /** Drops what the carrier buffered (the channel's clear). */
  clear(atMs: number): void;
}

export interface SegmentInfo {
  text: string;
  nodeId: string;
}

export interface Segment extends SegmentInfo {
  readonly mark: string;
  /** Audio received so far (ms). */
  receivedMs: number;
  /** Audio sent to the channel so far (ms). */
  sentMs: number;
  /** Playback-clock time its first frame plays; undefined until sent. */
  startPlayMs?: number;
  /** No more audio will come. */
  closed: boolean;
  /** Its mark went out (every frame sent). */
  marked: boolean;
  /** The channel reported its mark played. */
  played: boolean;
}

export interface HeardSegment {
  segment: Segment;
  /** The words the caller heard ('' when none). */
  heard: string;
  /** Whether the segment was heard whole. */
  whole: boolean;
}

export class PlayoutPacer {
  readonly tickMs: number;
  readonly aheadMs: number;
  readonly lowWaterMs: number;
  private readonly active = new Set<Playout>();
  private timer: TimerHandle | null = null;
  private readonly frameBytes = bytesPerMs(SESSION_FORMAT) * FRAME_MS;

  constructor(
    readonly timers: Timers,
    options: PacerOptions = {},
  ) {
    this.tickMs = options.tickMs ?? PACER_DEFAULTS.tickMs;
    this.aheadMs = options.aheadMs ?? PACER_DEFAULTS.aheadMs;
    this.lowWaterMs = Math.min(this.aheadMs, options.lowWaterMs ?? PACER_DEFAULTS.lowWaterMs);
  }

  /** A playout for one call. */
  open(sink: PlayoutSink, name = 'p'): Playout {
    return new Playout(this, sink, name, this.frameBytes);
  }

  /** Calls with audio waiting (tests, metrics). */
  get activeCount(): number {
    return this.active.size;
  }

  /** Whether the shared timer is armed. */
  get ticking(): boolean {
    return this.timer !== null;
  }

  /** @internal a playout has new audio: send what fits now and keep it ticking. */
  wake(playout: Playout): void {
    playout.pump(this.timers.now());
    if (playout.hasWork) this.active.add(playout);
    else this.active.delete(playout);
    this.arm();
  }

  /** @internal */
  forget(playout: Playout): void {
    this.active.delete(playout);
  }

  private arm(): void {
    if (this.timer !== null || this.active.size === 0) return;
    this.timer = this.timers.setTimeout(() => this.tick(), this.tickMs);
  }

  private tick(): void {
    this.timer = null;
    const now = this.timers.now();
    for (const playout of this.active) {
      // a call with enough audio at the carrier waits (its top-up comes as one piece when the lead runs low)
      if (playout.aheadOf(now) >= this.lowWaterMs) continue;
      playout.pump(now);
      if (!playout.hasWork) this.active.delete(playout);
    }
    this.arm();
  }
}

/** Played segments a playout lets pile up before it drops them (see `Playout.dropPlayed`). */
const PLAYED_KEPT_MAX = 16;

export class Playout {
  /**
   * The segments since the last clear not yet played, in order (a clear reports each), after at most
   * PLAYED_KEPT_MAX played ones: a played segment is dropped, so what a call holds does not grow with its length
   * (a call with no barge-in never clears).
   */
  private segments: Segment[] = [];
  /** `pump` / `markReported` frames on the stack, which index into `segments`: no dropping then. */
  private depth = 0;
  /**
   * Index of the first segment not yet marked (segments are marked in order): a tick starts here, so its work
   * is the frames it sends, not the call's history.
   */
  private sendFrom = 0;
  /** Index of the first segment not yet played (everything before it has played). */
  private playFrom = 0;
  private readonly queues = new Map<Segment, Uint8Array[]>();
  private readonly remainders = new Map<Segment, Uint8Array>();
  /** Audio received and not yet framed, per segment, in order. */
  private readonly raw = new Map<Segment, RawPiece[]>();
  private playEndMs = -Infinity;
  /** The frames one pump sends of the current segment (with `sendFrames`), and when the first plays. */
  private readonly batch: Uint8Array[] = [];
  private batchAtMs = 0;
  private seq = 0;
  private closedForGood = false;
  private readonly playedListeners: Array<(segment: Segment) => void> = [];
  private readonly idleListeners: Array<() => void> = [];
  private readonly firstFrameListeners: Array<(segment: Segment, atMs: number) => void> = [];

  constructor(
    private readonly pacer: PlayoutPacer,
    private readonly sink: PlayoutSink,
    private readonly name: string,
    private readonly frameBytes: number,
  ) {}

  onSegmentPlayed(listener: (segment: Segment) => void): void {
    this.playedListeners.push(listener);
  }

  /** Everything queued has played (every mark echoed). */
  onIdle(listener: () => void): void {
    this.idleListeners.push(listener);
  }

  onFirstFrame(listener: (segment: Segment, atMs: number) => void): void {
    this.firstFrameListeners.push(listener);
  }

  /** Starts a segment; its audio follows with `write`, its end with `end`. */
  begin(info: SegmentInfo): Segment {
    const segment: Segment = { ...info, mark: `${this.name}-${++this.seq}`, receivedMs: 0, sentMs: 0, closed: false, marked: false, played: false };
    this.segments.push(segment);
    this.queues.set(segment, []);
    return segment;
  }

  /**
   * Audio of `segment` (any length). Without `source` it is in the session format; with one, `source.convert`
   * turns it into the session format (a stateful converter, fed in order) and `source.bytesPerMs` says how long
   * it is. Conversion is lazy: audio is converted in slices of at most CONVERT_SLICE_MS as the pacer needs
   * frames, so a reply synthesized faster than real time costs its CPU while it plays, not all at once when
   * it arrives (with many calls answering at the same moment, that burst delayed the others' first frames),
   * and audio cut by a barge-in is never converted. The playout keeps `audio` until it is sent: do not write
   * into it afterwards. Ignored after `clear` or `close`.
   */
  write(segment: Segment, audio: Uint8Array, source?: AudioSource): void {
    const queue = this.queues.get(segment);
    if (!queue || segment.closed || audio.length === 0) return;
    const perMs = source ? source.bytesPerMs : SESSION_BYTES_PER_MS;
    segment.receivedMs += audio.length / perMs;
    let raw = this.raw.get(segment);
    if (!raw) this.raw.set(segment, (raw = []));
    raw.push({ bytes: audio, convert: source ? source.convert : null, sliceBytes: Math.max(2, Math.floor((perMs * CONVERT_SLICE_MS) / 2) * 2) });
    this.pacer.wake(this);
  }

  /** No more audio for `segment`: a last partial frame is padded with silence, then its mark follows. */
  end(segment: Segment): void {
    const queue = this.queues.get(segment);
    if (!queue || segment.closed) return;
    segment.closed = true;
    this.pacer.wake(this);
  }

  /**
   * Frames the next slice of `segment`'s received audio into `queue` (converting it); once everything
   * received is framed and the segment is closed, its partial last frame padded with silence. Whether the
   * queue got a frame.
   */
  private refill(segment: Segment, queue: Uint8Array[]): boolean {
    const raw = this.raw.get(segment);
    while (queue.length === 0 && raw && raw.length > 0) {
      const piece = raw[0]!;
      let bytes = piece.bytes;
      if (bytes.length > piece.sliceBytes) {
        piece.bytes = bytes.subarray(piece.sliceBytes);
        bytes = bytes.subarray(0, piece.sliceBytes);
      } else {
        raw.shift();
      }
      this.frame(segment, queue, piece.convert ? piece.convert(bytes) : bytes);
    }
    if (queue.length === 0 && segment.closed) {
      const rest = this.remainders.get(segment);
      if (rest) {
        const frame = new Uint8Array(this.frameBytes).fill(MULAW_SILENCE);
        frame.set(rest, 0);
        queue.push(frame);
        this.remainders.delete(segment);
      }
    }
    return queue.length > 0;
  }

  /** Cuts session-format `audio` (after the last partial frame) into whole frames on `queue`. */
  private frame(segment: Segment, queue: Uint8Array[], audio: Uint8Array): void {
    if (audio.length === 0) return;
    let bytes = audio;
    const rest = this.remainders.get(segment);
    if (rest) {
      bytes = new Uint8Array(rest.length + audio.length);
      bytes.set(rest, 0);
      bytes.set(audio, rest.length);
      this.remainders.delete(segment);
    }
    const whole = bytes.length - (bytes.length % this.frameBytes);
    // views, not copies: converted audio is fresh, and written audio is not to be changed by its writer
    for (let at = 0; at < whole; at += this.frameBytes) queue.push(bytes.subarray(at, at + this.frameBytes));
    if (whole < bytes.length) this.remainders.set(segment, bytes.slice(whole));
  }

  /** Whether frames or marks are waiting to be sent. */
  get hasWork(): boolean {
    return this.sendFrom < this.segments.length;
  }

  /** Whether anything queued or sent has yet to be heard. */
  get busy(): boolean {
    while (this.playFrom < this.segments.length && this.segments[this.playFrom]!.played) this.playFrom++;
    return this.playFrom < this.segments.length;
  }

  /** How far sent audio runs ahead of `now` (ms). */
  aheadOf(now: number): number {
    return Math.max(0, this.playEndMs - now);
  }

  /** @internal the pacer's tick: send frames until `aheadMs` is buffered, marks as segments complete. */
  pump(now: number): void {
    this.depth++;
    try {
      this.pumpSegments(now);
    } finally {
      this.depth--;
    }
    this.dropPlayed();
  }

  private pumpSegments(now: number): void {
    const segments = this.segments; // a listener or the sink may clear (a new array): stop then
    const batching = this.sink.sendFrames !== undefined;
    while (this.sendFrom < segments.length) {
      const segment = segments[this.sendFrom]!;
      const queue = this.queues.get(segment)!;
      let full = false;
      while (queue.length > 0 || this.refill(segment, queue)) {
        const startAt = Math.max(this.playEndMs, now);
        if (startAt + FRAME_MS - now > this.pacer.aheadMs) {
          full = true;
          break;
        }
        const frame = queue.shift()!;
        if (segment.startPlayMs === undefined) {
          segment.startPlayMs = startAt;
          for (const l of this.firstFrameListeners) l(segment, now);
          if (this.segments !== segments) return;
        }
        this.playEndMs = startAt + FRAME_MS;
        segment.sentMs += FRAME_MS;
        if (batching) {
          if (this.batch.length === 0) this.batchAtMs = startAt;
          this.batch.push(frame);
        } else {
          this.sink.sendFrame(frame, startAt);
          if (this.segments !== segments) return;
        }
      }
      if (this.batch.length > 0) {
        const audio = joinFrames(this.batch);
        this.batch.length = 0;
        this.sink.sendFrames!(audio, this.batchAtMs);
        if (this.segments !== segments) return;
      }
      if (full || !segment.closed) return; // more audio of this segment is coming: later segments wait
      segment.marked = true;
      this.queues.delete(segment);
      this.raw.delete(segment);
      this.sendFrom++;
      if (segment.sentMs === 0) {
        this.markPlayed(segment); // nothing to hear: "played" at once
      } else {
        this.sink.sendMark(segment.mark);
      }
      if (this.segments !== segments) return;
    }
  }


  /** The channel's mark report. */
  markReported(name: string, played: boolean): void {
    this.depth++;
    try {
      this.markSegments(name, played);
    } finally {
      this.depth--;
    }
    this.dropPlayed();
  }

  /**
   * Drops the played segments before the first one not played once more than PLAYED_KEPT_MAX of them piled up
   * (not while a pump or a mark report walks `segments` by index). A played segment was heard whole: a clear
   * need not report it (`segment.played` says so), and nothing else reads it again.
   */
  private dropPlayed(): void {
    if (this.depth > 0) return;
    while (this.playFrom < this.segments.length && this.segments[this.playFrom]!.played) this.playFrom++;
    if (this.playFrom <= PLAYED_KEPT_MAX) return;
    this.segments.splice(0, this.playFrom); // the same array: only a clear replaces it (what a pump checks for)
    this.sendFrom -= this.playFrom;
    this.playFrom = 0;
  }

  /** Segments held (played ones not yet dropped included): bounded whatever the call's length. */
  get heldSegments(): number {
    return this.segments.length;
  }

  private markSegments(name: string, played: boolean): void {
    if (!played || !this.busy) return;
    // Segments before playFrom have played already; an echo of one of them changes nothing.
    let at = this.playFrom;
    while (at < this.segments.length && this.segments[at]!.mark !== name) at++;
    const segment = this.segments[at];
    if (!segment) return;
    // Playback is in order: a mark played means every earlier segment played too.
    const segments = this.segments;
    for (let k = this.playFrom; k <= at && this.segments === segments; k++) {
      const s = segments[k]!;
      if (s.played) continue;
      if (!s.marked) break;
      this.markPlayed(s);
      if (s === segment) break;
    }
  }

  /**
   * Barge-in: drops everything not yet sent, clears the channel, and says what the caller heard of each
   * segment by `now` on the playback clock: every segment since the last clear that had not played (a played one
   * was heard whole, and may have been dropped already: see `dropPlayed`). The playout is empty afterwards.
   */
  clear(now: number): HeardSegment[] {
    const heard = this.segments.map((segment) => heardOf(segment, now));
    this.segments = [];
    this.sendFrom = 0;
    this.playFrom = 0;
    this.queues.clear();
    this.remainders.clear();
    this.raw.clear();
    this.playEndMs = -Infinity;
    this.pacer.forget(this);
    this.sink.clear(now);
    return heard;
  }

  /** Nothing more will play (the call ended). */
  close(): void {
    this.closedForGood = true;
    this.segments = [];
    this.sendFrom = 0;
    this.playFrom = 0;
    this.queues.clear();
    this.remainders.clear();
    this.raw.clear();
    this.pacer.forget(this);
  }

  private markPlayed(segment: Segment): void {
    if (segment.played || this.closedForGood) return;
    segment.played = true;
    for (const l of this.playedListeners) l(segment);
    if (!this.busy) for (const l of this.idleListeners) l();
  }
}

/**
 * Frames that play back to back as one buffer: a view when they lie back to back in one buffer (frames cut
 * from one converted slice do), else a copy.
 */
function joinFrames(frames: Uint8Array[]): Uint8Array {
  const first = frames[0]!;
  if (frames.length === 1) return first;
  let total = first.length;
  for (let i = 1; i < frames.length; i++) {
    const f = frames[i]!;
    const prev = frames[i - 1]!;
    if (f.buffer !== first.buffer || f.byteOffset !== prev.byteOffset + prev.length) return concatBytes(frames);
    total += f.length;
  }
  return new Uint8Array(first.buffer, first.byteOffset, total);
}

function heardOf(segment: Segment, now: number): HeardSegment {
  if (segment.played) return { segment, heard: segment.text, whole: true };
  if (segment.startPlayMs === undefined || now <= segment.startPlayMs) return { segment, heard: '', whole: false };
  const total = segment.closed ? segment.receivedMs : Math.max(segment.receivedMs, segment.sentMs);
  const fraction = total > 0 ? (now - segment.startPlayMs) / total : 0;
  const heard = heardPrefix(segment.text, fraction);
  return { segment, heard, whole: fraction >= 1 };
}
