/**
 * A simulated Twilio caller over a real loopback WebSocket (docs/voice.md "Making calls talk"; VOICE.md 5.2): it
 * speaks Twilio's Media Streams JSON (`connected`, `start` with the TwiML's custom parameters, one `media` frame of
 * 20 ms μ-law every 20 ms, `stop`), plays the agent's audio on its own playback clock and echoes each `mark` when
 * the audio before it has played (Twilio's behaviour; a `clear` echoes the pending marks at once), and measures at
 * the wire: when each voiced agent frame and each `clear` arrived, when its own speech started and ended.
 */
import WebSocket from 'ws';

const FRAME = 160;
const FRAME_MS = 20;
/** The mean absolute level (linear, of the decoded μ-law) from which a frame counts as voiced. */
export const VOICE_LEVEL = 200;

function mulawToLinear(byte: number): number {
  const u = ~byte & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  return u & 0x80 ? 0x84 - t : t - 0x84;
}

/**
 * Where the sound in a μ-law frame lies: the first non-silent sample and the one after the last (null: digital
 * silence throughout). The callers play fixtures with digital silence around their words, so this is where their
 * sound starts and stops, with no level to choose.
 */
export function soundSpan(frame: Uint8Array): { first: number; end: number } | null {
  let first = -1;
  let end = 0;
  for (let i = 0; i < frame.length; i++) {
    if (mulawToLinear(frame[i]!) !== 0) {
      if (first < 0) first = i;
      end = i + 1;
    }
  }
  return first < 0 ? null : { first, end };
}

/**
 * When the sound in a μ-law frame sent at `sentAtMs` began and ended: the frame holds the 20 ms of audio before
 * its send, so sample i sounded at `sentAtMs - 20 + i / 8`. Null for digital silence.
 */
export function soundInstants(frame: Uint8Array, sentAtMs: number): { onsetMs: number; endMs: number } | null {
  const span = soundSpan(frame);
  if (!span) return null;
  const msPerSample = FRAME_MS / FRAME;
  return { onsetMs: sentAtMs - (FRAME - span.first) * msPerSample, endMs: sentAtMs - (FRAME - span.end) * msPerSample };
}

/** True when a μ-law frame carries sound (mean absolute level above a low threshold). */
export function isVoiced(frame: Uint8Array): boolean {
  let sum = 0;
  for (const b of frame) sum += Math.abs(mulawToLinear(b));
  return sum / frame.length >= VOICE_LEVEL;
}

export interface TwilioCallerOptions {
  url: string;
  callSid: string;
  streamSid?: string;
  parameters: Record<string, string>;
}

export class TwilioMediaCaller {
  /** Arrival times (performance.now()) of voiced agent frames. */
  readonly agentVoiceAt: number[] = [];
  /** Arrival times of `clear` messages. */
  readonly clearsAt: number[] = [];
  /** Agent media frames received. */
  agentFrames = 0;
  /**
   * Per `speak`: when its first and its last voiced frame were sent (the level line, `isVoiced`), when its sound
   * began and ended (the instants of its first non-silent sample and just after its last one, `soundSpan`: a frame
   * sent at t holds the audio of [t - 20 ms, t)), and when its last frame was sent.
   */
  readonly spoke: Array<{ onsetMs: number | null; voicedEndMs: number | null; soundOnsetMs: number | null; soundEndMs: number | null; endMs: number | null }> = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly ws: WebSocket;
  private readonly streamSid: string;
  private timer: NodeJS.Timeout | null = null;
  private startMs = 0;
  private sent = 0;
  private seq = 1;
  private readonly queue: Array<{ frame: Uint8Array; line: number; last: boolean }> = [];
  private playEndMs = 0;
  private readonly pendingMarks: Array<{ name: string; timer: NodeJS.Timeout }> = [];
  private readonly waiters: Array<() => void> = [];

  private constructor(private readonly options: TwilioCallerOptions, ws: WebSocket) {
    this.ws = ws;
    this.streamSid = options.streamSid ?? `MZ${options.callSid.slice(2)}`;
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => {
      this.stopClock();
      resolve({ code, reason: reason.toString() });
    }));
    ws.on('message', (data) => this.onMessage(JSON.parse(data.toString())));
  }

  static async connect(options: TwilioCallerOptions): Promise<TwilioMediaCaller> {
    const ws = new WebSocket(options.url);
    ws.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('unexpected-response', (_q, res) => reject(new Error(`media upgrade refused ${res.statusCode}`)));
    });
    const caller = new TwilioMediaCaller(options, ws);
    caller.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    caller.send({
      event: 'start', sequenceNumber: String(caller.seq++), streamSid: caller.streamSid,
      start: {
        streamSid: caller.streamSid, accountSid: 'AC00000000000000000000000000000000', callSid: options.callSid, tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }, customParameters: options.parameters,
      },
    });
    caller.startClock();
    return caller;
  }

  /** Queues μ-law audio to say (sent in 20 ms frames on the caller's clock). Returns its index in `spoke`. */
  speak(mulaw: Uint8Array): number {
    const line = this.spoke.length;
    this.spoke.push({ onsetMs: null, voicedEndMs: null, soundOnsetMs: null, soundEndMs: null, endMs: null });
    for (let at = 0; at < mulaw.length; at += FRAME) {
      const frame = new Uint8Array(FRAME).fill(0xff);
      frame.set(mulaw.subarray(at, Math.min(mulaw.length, at + FRAME)));
      this.queue.push({ frame, line, last: at + FRAME >= mulaw.length });
    }
    return line;
  }

  /** Resolves once `test` holds (checked on every message and frame), or rejects after `timeoutMs`. */
  async until(what: string, test: () => boolean, timeoutMs = 8000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 20);
      });
    }
  }

  /** Sends Twilio's `stop` (the caller hung up) and closes the socket. */
  async hangUp(): Promise<void> {
    this.stopClock();
    if (this.ws.readyState === WebSocket.OPEN) {
      this.send({ event: 'stop', sequenceNumber: String(this.seq++), streamSid: this.streamSid, stop: { accountSid: 'AC0', callSid: this.options.callSid } });
    }
  }

  close(): void {
    this.stopClock();
    for (const m of this.pendingMarks.splice(0)) clearTimeout(m.timer);
    this.ws.terminate();
  }

  private startClock(): void {
    this.startMs = performance.now();
    const tick = () => {
      const now = performance.now();
      while (this.startMs + (this.sent + 1) * FRAME_MS <= now + 1) {
        this.sent++;
        const item = this.queue.shift();
        const frame = item?.frame ?? new Uint8Array(FRAME).fill(0xff);
        if (item) {
          const spoke = this.spoke[item.line]!;
          const at = performance.now();
          if (isVoiced(frame)) {
            spoke.onsetMs ??= at;
            spoke.voicedEndMs = at;
          }
          const sound = soundInstants(frame, at);
          if (sound) {
            spoke.soundOnsetMs ??= sound.onsetMs;
            spoke.soundEndMs = sound.endMs;
          }
          if (item.last) spoke.endMs = at;
        }
        this.send({
          event: 'media', sequenceNumber: String(this.seq++), streamSid: this.streamSid,
          media: { track: 'inbound', chunk: String(this.sent), timestamp: String(this.sent * FRAME_MS), payload: Buffer.from(frame).toString('base64') },
        });
      }
      this.wake();
      this.timer = setTimeout(tick, Math.max(0, this.startMs + (this.sent + 1) * FRAME_MS - performance.now()));
    };
    this.timer = setTimeout(tick, FRAME_MS);
  }

  private stopClock(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private onMessage(m: { event: string; media?: { payload: string }; mark?: { name: string } }): void {
    const now = performance.now();
    if (m.event === 'media' && m.media) {
      const audio = Buffer.from(m.media.payload, 'base64');
      for (let at = 0; at < audio.length; at += FRAME) {
        this.agentFrames++;
        if (isVoiced(audio.subarray(at, at + FRAME))) this.agentVoiceAt.push(now);
      }
      this.playEndMs = Math.max(now, this.playEndMs) + (audio.length / 8000) * 1000;
    } else if (m.event === 'mark' && m.mark) {
      const name = m.mark.name;
      const timer = setTimeout(() => {
        const i = this.pendingMarks.findIndex((p) => p.name === name);
        if (i >= 0) this.pendingMarks.splice(i, 1);
        this.echoMark(name);
      }, Math.max(0, this.playEndMs - now));
      this.pendingMarks.push({ name, timer });
    } else if (m.event === 'clear') {
      this.clearsAt.push(now);
      this.playEndMs = now;
      for (const p of this.pendingMarks.splice(0)) {
        clearTimeout(p.timer);
        this.echoMark(p.name);
      }
    }
    this.wake();
  }

  private echoMark(name: string): void {
    if (this.ws.readyState === WebSocket.OPEN) this.send({ event: 'mark', sequenceNumber: String(this.seq++), streamSid: this.streamSid, mark: { name } });
  }

  private send(m: unknown): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(m));
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}
