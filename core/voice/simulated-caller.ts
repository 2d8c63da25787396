/**
 * A simulated caller (API.md 13; docs/voice.md "Making calls talk"): the other end of a call, for demos and CI.
 * It sends 20 ms μ-law 8 kHz frames on its own clock like a phone line (silence between its lines), listens to
 * the agent's audio, and speaks its next line once the agent's reply has finished (no agent voice for
 * `agentQuietMs` after the agent spoke). Each line is synthesized by the organization's TTS. After the scripted
 * `lines`, a `persona` (when given) is played by a language model that reads what the agent said (`agentSaid`)
 * and answers in one or two sentences, or `[hang up]`. It hangs up when the lines run out (after the agent's
 * last reply), when the agent stays silent for `agentTimeoutMs`, or when its TTS or model fails; it stops when
 * the agent ends the call (`agentEnded`).
 *
 * One timer per caller (the frame clock). Pure apart from its ports.
 */
import type { LanguageModel, ChatMessage } from '../ports/language-model.port.js';
import { silentLogger, type Logger } from '../ports/logger.port.js';
import type { CallerScript } from '../ports/simulated-callers.port.js';
import type { TextToSpeech } from '../ports/text-to-speech.port.js';
import type { TimerHandle, Timers } from '../ports/timers.port.js';
import { concatBytes } from './audio-format.js';
import { SESSION_FORMAT, toSessionAudio } from './carrier-audio.js';
import { MULAW_SILENCE, MULAW_TO_PCM } from './g711.js';

const FRAME_BYTES = 160;
const FRAME_MS = 20;
/** Mean absolute sample level above which an agent frame counts as voice. */
const VOICE_LEVEL = 200;
const HANG_UP = /\[\s*hang\s*up\s*\]/i;

export type SimulatedCallerEnd = 'lines_done' | 'agent_ended' | 'agent_silent' | 'failed';

/** Where the caller's frames go (the call's media path) and how it hangs up. */
export interface SimulatedCallerWire {
  /** One 20 ms μ-law 8 kHz frame. */
  send(frame: Uint8Array): void;
  hangUp(): void;
}

export interface SimulatedCallerOptions {
  script: CallerScript;
  tts: TextToSpeech;
  ttsOptions?: { voice?: string; model?: string };
  /** The model that plays `script.persona`; without it a persona is ignored. */
  persona?: { lm: LanguageModel; model: string };
  timers: Timers;
  /** Agent silence after its voice that ends its reply (ms). Default 700. */
  agentQuietMs?: number;
  /** The agent saying nothing this long after the caller's line (or at the start) ends the call (ms). Default 30000. */
  agentTimeoutMs?: number;
  /** Persona lines at most. Default 8. */
  maxPersonaLines?: number;
  log?: Logger;
}

export class SimulatedCaller {
  readonly ended: Promise<SimulatedCallerEnd>;
  /** When each line's last frame was sent (`timers` clock): the end of the caller's speech at the wire. */
  readonly lineEndsMs: number[] = [];
  /** When the first voiced agent frame after each line arrived (`timers` clock). */
  readonly agentFirstVoiceMs: number[] = [];
  private resolveEnded!: (end: SimulatedCallerEnd) => void;
  private readonly log: Logger;
  private wire: SimulatedCallerWire | null = null;
  private timer: TimerHandle | null = null;
  private startMs = 0;
  private frames = 0;
  private readonly queue: Uint8Array[] = [];
  private lineIndex = 0;
  private personaLines = 0;
  private agentSpoke = false;
  private lastAgentVoiceMs = 0;
  private waitingSinceMs = 0;
  private waiting = true;
  private preparing = false;
  private done = false;
  private lineEnding = false;
  private readonly history: ChatMessage[] = [];

  constructor(private readonly options: SimulatedCallerOptions) {
    this.log = options.log ?? silentLogger;
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
  }

  /** Starts the frame clock; the caller first waits for the agent's greeting. */
  start(wire: SimulatedCallerWire): void {
    this.wire = wire;
    this.startMs = this.options.timers.now();
    this.waitingSinceMs = this.startMs;
    this.schedule();
  }

  /** Agent audio as it arrives at the caller (μ-law 8 kHz). */
  agentAudio(mulaw: Uint8Array): void {
    if (this.done || mulaw.length === 0) return;
    let sum = 0;
    for (let i = 0; i < mulaw.length; i++) sum += Math.abs(MULAW_TO_PCM[mulaw[i]!]!);
    if (sum / mulaw.length < VOICE_LEVEL) return;
    const now = this.options.timers.now();
    if (this.waiting && !this.agentSpoke && this.lineEndsMs.length > this.agentFirstVoiceMs.length) this.agentFirstVoiceMs.push(now);
    this.agentSpoke = true;
    this.lastAgentVoiceMs = now;
  }

  /** What the agent said (heard text): the persona's model reads it. */
  agentSaid(text: string): void {
    if (text.trim()) this.history.push({ role: 'user', content: text });
  }

  /** The agent ended the call. */
  agentEnded(): void {
    this.finish('agent_ended', false);
  }

  /** Stops without hanging up (the call is already over). Idempotent. */
  stop(): void {
    this.finish('agent_ended', false);
  }

  private schedule(): void {
    if (this.done) return;
    const due = this.startMs + (this.frames + 1) * FRAME_MS;
    this.timer = this.options.timers.setTimeout(() => this.tick(), Math.max(0, due - this.options.timers.now()));
  }

  private tick(): void {
    this.timer = null;
    if (this.done) return;
    // catch up on frames the event loop delayed, as a line's jitter buffer would
    const now = this.options.timers.now();
    while (!this.done && this.startMs + (this.frames + 1) * FRAME_MS <= now + 1) {
      this.frames++;
      const frame = this.queue.shift();
      this.wire!.send(frame ?? new Uint8Array(FRAME_BYTES).fill(MULAW_SILENCE));
      if (frame && this.queue.length === 0 && this.lineEnding) {
        this.lineEnding = false;
        this.lineEndsMs.push(this.options.timers.now());
        this.waiting = true;
        this.agentSpoke = false;
        this.waitingSinceMs = this.options.timers.now();
      }
    }
    this.checkTurn(now);
    this.schedule();
  }

  private checkTurn(now: number): void {
    if (!this.waiting || this.preparing || this.done) return;
    if (this.agentSpoke && now - this.lastAgentVoiceMs >= (this.options.agentQuietMs ?? 700)) {
      this.waiting = false;
      void this.nextLine();
      return;
    }
    if (!this.agentSpoke && now - this.waitingSinceMs >= (this.options.agentTimeoutMs ?? 30_000)) {
      this.log.warn({ waited_ms: Math.round(now - this.waitingSinceMs) }, 'simulated caller: the agent stayed silent; hanging up');
      this.finish('agent_silent', true);
    }
  }

  private async nextLine(): Promise<void> {
    this.preparing = true;
    try {
      const text = await this.lineToSay();
      if (this.done) return;
      if (text === null) return this.finish('lines_done', true);
      this.history.push({ role: 'assistant', content: text });
      const audio = await this.synthesize(text);
      if (this.done) return;
      for (let at = 0; at < audio.length; at += FRAME_BYTES) {
        const frame = new Uint8Array(FRAME_BYTES).fill(MULAW_SILENCE);
        frame.set(audio.subarray(at, Math.min(audio.length, at + FRAME_BYTES)));
        this.queue.push(frame);
      }
      if (this.queue.length === 0) this.queue.push(new Uint8Array(FRAME_BYTES).fill(MULAW_SILENCE));
      this.lineEnding = true;
    } catch (e) {
      this.log.error({ err: (e as Error)?.message }, 'simulated caller failed; hanging up');
      this.finish('failed', true);
    } finally {
      this.preparing = false;
    }
  }

  /** The next scripted line, else the persona's next line; null: nothing more to say. */
  private async lineToSay(): Promise<string | null> {
    const { script } = this.options;
    if (this.lineIndex < script.lines.length) return script.lines[this.lineIndex++]!;
    const persona = this.options.persona;
    if (!script.persona || !persona || this.personaLines >= (this.options.maxPersonaLines ?? 8)) return null;
    this.personaLines++;
    let text = '';
    const messages: ChatMessage[] = [
      {
        role: 'system',
        content: `You are a person taking part in a phone call with an automated agent. Stay in character: ${script.persona}\n` +
          'Answer the agent\'s last words with one or two short spoken sentences, no stage directions. ' +
          'When the call is over for you, answer exactly [hang up].',
      },
      ...this.history,
    ];
    for await (const event of persona.lm.stream({ model: persona.model, messages })) {
      if (event.type === 'text') text += event.text;
    }
    text = text.trim();
    return text === '' || HANG_UP.test(text) ? null : text;
  }

  private async synthesize(text: string): Promise<Uint8Array> {
    const result = await this.options.tts.synthesize({ text, ...this.options.ttsOptions, preferredFormat: SESSION_FORMAT });
    const convert = toSessionAudio(result.format);
    const parts: Uint8Array[] = [];
    let carry = new Uint8Array(0);
    const whole = result.format.encoding === 'l16' ? 2 : 1;
    for await (const chunk of result.chunks) {
      // keep 16-bit samples whole across chunks
      const joined = carry.length ? concatBytes([carry, chunk]) : chunk;
      const usable = joined.length - (joined.length % whole);
      parts.push(convert.convert(joined.subarray(0, usable)));
      carry = joined.slice(usable);
    }
    return concatBytes(parts);
  }

  private finish(end: SimulatedCallerEnd, hangUp: boolean): void {
    if (this.done) return;
    this.done = true;
    this.timer?.cancel();
    this.timer = null;
    this.queue.length = 0;
    if (hangUp) this.wire?.hangUp();
    this.resolveEnded(end);
  }
}

