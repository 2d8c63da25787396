/**
 * Answering-machine detection for one outbound call, as the voice session uses it (docs/voicemail.md "In the
 * voice session"). It runs our `AmdDetector` on what the session hears, asks the model once when the
 * heuristics are unsure, takes the carrier's verdict instead of ours where the carrier detects (`carrierAmd`),
 * and resolves `plan` (the voicemail policy's answer) exactly once:
 *  - `converse` at a human or unknown decision: the session lets the agent's first turn proceed;
 *  - `hang_up` at a machine decision with `action: hangup`;
 *  - `leave_message` at the greeting's end (beep ended, silence, or the carrier's "greeting ended").
 * The session feeds it (`audio`, `speechStarted`, `speechStopped`, `transcript`, `carrier`) with times from
 * the same `Timers`; it keeps a timer ticking while it waits so silence counts without audio. `close()` stops
 * the timer and any model request. Never throws; `plan` never rejects.
 */
import { silentLogger, type Logger } from '../../ports/logger.port.js';
import type { TimerHandle, Timers } from '../../ports/timers.port.js';
import { AmdDetector, type AmdDetectorOptions, type AmdEvent } from './amd-detector.js';
import type { AmdResult, VoicemailSettings } from './amd-result.js';
import { classifyGreeting, type GreetingClassifierOptions } from './greeting-classifier.js';
import { voicemailPlan, waitsForGreetingEnd, type VoicemailPlan } from './voicemail-policy.js';

export interface VoicemailGateOptions {
  settings: VoicemailSettings;
  timers: Timers;
  /** Fills the message template with the run's context. */
  render: (template: string) => string;
  /** The carrier detects (Twilio async AMD, Telnyx): its verdict decides; ours only finds the greeting's end. */
  carrierAmd?: boolean;
  /** With `carrierAmd`: no carrier verdict this long after start → our own decision (or unknown). */
  carrierTimeoutMs?: number;
  /** The one-shot model classification for unsure greetings; absent: word counts decide. */
  classifier?: GreetingClassifierOptions;
  detector?: Partial<Omit<AmdDetectorOptions, 'classifier' | 'startMs'>>;
  tickMs?: number;
  logger?: Logger;
}

export const VOICEMAIL_GATE_DEFAULTS = Object.freeze({ carrierTimeoutMs: 8000, tickMs: 100 });

export class VoicemailGate {
  readonly plan: Promise<VoicemailPlan>;
  /** Every decision-related event in order (`decision`, `beep`, `greeting_ended`), for the run's log. */
  readonly log: AmdEvent[] = [];
  private resolvePlan!: (plan: VoicemailPlan) => void;
  private readonly detector: AmdDetector;
  private readonly startMs: number;
  private readonly logger: Logger;
  private readonly controller = new AbortController();
  private decided: AmdResult | null = null;
  private settled = false;
  private timer: TimerHandle | null = null;

  constructor(private readonly options: VoicemailGateOptions) {
    this.startMs = options.timers.now();
    this.logger = options.logger ?? silentLogger;
    this.plan = new Promise((resolve) => (this.resolvePlan = resolve));
    this.detector = new AmdDetector({ ...options.detector, classifier: options.classifier !== undefined, startMs: this.startMs });
    this.arm();
  }

  /** The decision, once made (the carrier's or ours). */
  get result(): AmdResult | null {
    return this.decided;
  }

  get done(): boolean {
    return this.settled;
  }

  audio(pcm: Int16Array, atMs: number): void {
    if (!this.settled) this.handle(this.detector.audio(pcm, atMs));
  }

  speechStarted(atMs: number): void {
    if (!this.settled) this.handle(this.detector.speechStarted(atMs));
  }

  speechStopped(atMs: number): void {
    if (!this.settled) this.handle(this.detector.speechStopped(atMs));
  }

  transcript(text: string, final: boolean, atMs: number): void {
    if (!this.settled) this.handle(this.detector.transcript(text, final, atMs));
  }

  /** The carrier's AMD verdict (normalized by the provider). Decides unless a decision was already acted on. */
  carrier(result: AmdResult): void {
    if (this.settled) return;
    const now = this.options.timers.now();
    if (this.decided && this.decided.source === 'carrier') {
      // a later carrier message about the same machine: only its news about the greeting's end matters
      if (result.verdict === 'machine' && result.greetingEnded) this.greetingEnded(now);
      return;
    }
    this.decide({ ...result, source: 'carrier', decidedAtMs: now });
    if (this.settled) return;
    if (result.verdict === 'machine' && result.greetingEnded) {
      this.greetingEnded(now);
      return;
    }
    this.handle(this.detector.adopt(this.decided!, now));
  }

  /** Stops the timer and any model request; `plan` stays as it is (unresolved if nothing was decided). */
  close(): void {
    this.settled = true;
    this.timer?.cancel();
    this.timer = null;
    this.controller.abort();
  }

  // -------------------------------------------------------------------------------------------------------

  private arm(): void {
    this.timer = this.options.timers.setTimeout(() => this.tick(), this.options.tickMs ?? VOICEMAIL_GATE_DEFAULTS.tickMs);
  }

  private tick(): void {
    this.timer = null;
    if (this.settled) return;
    const now = this.options.timers.now();
    if (this.options.carrierAmd && !this.decided && now - this.startMs >= (this.options.carrierTimeoutMs ?? VOICEMAIL_GATE_DEFAULTS.carrierTimeoutMs)) {
      const ours = this.detector.result;
      this.decide(ours ?? { verdict: 'unknown', source: 'timeout', reason: 'no answering-machine verdict from the carrier', decidedAtMs: Math.round(now) });
      if (!this.settled) this.handle(this.detector.adopt(this.decided!, now));
    }
    if (!this.settled) this.handle(this.detector.advance(now));
    if (!this.settled) this.arm();
  }

  private handle(events: AmdEvent[]): void {
    for (const event of events) {
      if (this.settled) return;
      if (event.type === 'decision') {
        this.log.push(event);
        // where the carrier detects, our verdict only stands in when the carrier stays silent (tick)
        if (!this.options.carrierAmd) this.decide(event.result);
      } else if (event.type === 'classify') {
        void this.classify(event.text);
      } else if (event.type === 'beep') {
        this.log.push(event);
      } else if (event.type === 'greeting_ended') {
        this.log.push(event);
        if (this.decided?.verdict === 'machine') this.greetingEnded(event.atMs);
      }
    }
  }

  private async classify(text: string): Promise<void> {
    const classifier = this.options.classifier;
    if (!classifier) return;
    const verdict = await classifyGreeting(classifier, text, this.controller.signal);
    if (this.settled) return;
    this.logger.info({ verdict }, 'the model classified the greeting');
    this.handle(this.detector.classified(verdict, this.options.timers.now()));
  }

  private decide(result: AmdResult): void {
    if (this.decided) return;
    this.decided = result;
    this.logger.info({ verdict: result.verdict, source: result.source, reason: result.reason }, 'answering-machine detection decided');
    if (!waitsForGreetingEnd(result, this.options.settings)) this.settle(voicemailPlan(result, this.options.settings, this.options.render));
  }

  private greetingEnded(atMs: number): void {
    if (!this.decided || this.settled) return;
    this.logger.info({ at_ms: Math.round(atMs - this.startMs) }, 'the voicemail greeting ended');
    this.settle(voicemailPlan(this.decided, this.options.settings, this.options.render));
  }

  private settle(plan: VoicemailPlan): void {
    if (this.settled) return;
    this.settled = true;
    this.timer?.cancel();
    this.timer = null;
    this.controller.abort();
    this.resolvePlan(plan);
  }
}
