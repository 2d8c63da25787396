/**
 * Our answering-machine detector (docs/voicemail.md "What decides"): a pure state machine over the first
 * seconds of an outbound call. It is fed what the voice session already has, each with its time in ms on one
 * clock (the session's audio time, 0 = the call's audio began):
 *  - `audio(pcm, atMs)`: 8 kHz PCM frames (the beep detector runs on them; time advances with them);
 *  - `speechStarted(atMs)` / `speechStopped(atMs)`: the VAD's events (`atMs` = onset / end of speech);
 *  - `transcript(text, final, atMs)`: the STT's interims and finals;
 *  - `classified(verdict, atMs)`: the answer to a `classify` event (the optional one-shot model call);
 *  - `advance(nowMs)`: time passing without audio (a timer).
 * Each returns the events it caused, in order: `decision` exactly once (human, machine or unknown with a reason),
 * `classify` at most once (the heuristics are unsure and a model may judge the greeting's text), `beep`, and,
 * after a `machine` decision, `greeting_ended` exactly once (the beep ended, or silence followed the greeting,
 * or the wait ran out): the moment a voicemail message may start.
 *
 * The rules, first match wins (learned from Jambonz's amd-utils, LiveKit's amd.ts and Asterisk's AMD()):
 *  1. a strong voicemail phrase in the transcript → machine;
 *  2. a beep → machine;
 *  3. speech lasting `machineGreetingMs` without a pause of `greetingGapMs` → machine (people say "Hello?"
 *     and wait; recorded greetings go on), unless a configured model, asked once with the words so far, says
 *     human;
 *  4. a greeting of at most `humanGreetingMaxMs` followed by `greetingGapMs` of silence → human;
 *  5. a longer greeting followed by silence: a weak phrase ("you've reached") → machine; else the model when one
 *     is configured; else `machineWordCount` words or more, or an initial silence of `initialSilenceMs` before
 *     it, → machine; otherwise human;
 *  6. no speech for `noSpeechMs` → unknown; nothing decided by `decisionTimeoutMs` → unknown.
 */
import type { AmdResult, AmdVerdict } from './amd-result.js';
import { BeepDetector, type BeepDetectorOptions } from './beep-detector.js';
import { findVoicemailPhrase, wordCount } from './voicemail-phrases.js';

export interface AmdDetectorOptions {
  machineGreetingMs: number;
  humanGreetingMaxMs: number;
  /** A pause at least this long ends the greeting. */
  greetingGapMs: number;
  machineWordCount: number;
  initialSilenceMs: number;
  noSpeechMs: number;
  decisionTimeoutMs: number;
  /** After a machine decision: silence this long after the last speech, with no beep sounding, ends the greeting. */
  greetingEndSilenceMs: number;
  /** After a machine decision: the greeting counts as ended this long after the decision whatever is heard. */
  greetingEndTimeoutMs: number;
  /** True: rule 5 asks the model (a `classify` event) before falling back to word counts. */
  classifier: boolean;
  /** When the call's audio began on the caller's clock: the timeouts and the initial silence count from it. */
  startMs: number;
  beep?: Partial<BeepDetectorOptions>;
}

export const AMD_DEFAULTS: Readonly<Omit<AmdDetectorOptions, 'beep'>> = Object.freeze({
  machineGreetingMs: 2600,
  humanGreetingMaxMs: 1500,
  greetingGapMs: 700,
  machineWordCount: 9,
  initialSilenceMs: 2500,
  noSpeechMs: 4000,
  decisionTimeoutMs: 5000,
  greetingEndSilenceMs: 1500,
  greetingEndTimeoutMs: 20000,
  classifier: false,
  startMs: 0,
});

export type AmdEvent =
  | { type: 'decision'; result: AmdResult }
  /** Rule 5 with a classifier: judge `text` and answer with `classified()`; the decision waits (until the timeout). */
  | { type: 'classify'; text: string; atMs: number }
  | { type: 'beep'; onsetMs: number; frequencyHz: number; atMs: number }
  | { type: 'greeting_ended'; atMs: number; beep: boolean; reason: string };

export class AmdDetector {
  private readonly options: AmdDetectorOptions;
  private readonly beeps: BeepDetector;
  private nowMs = 0;
  private decided: AmdResult | null = null;
  private greetingDone = false;
  private classifyAsked = false;
  private classifyAnswered = false;
  private speaking = false;
  private greetingStartMs: number | null = null;
  private speechStartMs: number | null = null;
  private lastSpeechEndMs: number | null = null;
  private finals: string[] = [];
  private interim = '';
  private beepSounding = false;
  /** Audio was fed: the long-greeting rule uses the last loud frame, not the VAD's hangover-delayed state. */
  private audioSeen = false;
  private lastVoicedMs: number | null = null;

  constructor(options: Partial<AmdDetectorOptions> = {}) {
    this.options = { ...AMD_DEFAULTS, ...options };
    this.beeps = new BeepDetector(options.beep);
  }

  /** The decision, once made. */
  get result(): AmdResult | null {
    return this.decided;
  }

  get greetingEnded(): boolean {
    return this.greetingDone;
  }

  /** The greeting's text as heard so far (finals, then the current interim). */
  get text(): string {
    return [...this.finals, this.interim].filter((t) => t !== '').join(' ');
  }

  audio(pcm: Int16Array, atMs: number): AmdEvent[] {
    const events: AmdEvent[] = [];
    for (const e of this.beeps.push(pcm, atMs)) {
      if (e.type === 'beep') {
        this.beepSounding = true;
        events.push({ type: 'beep', onsetMs: e.onsetMs, frequencyHz: e.frequencyHz, atMs: e.atMs });
        this.decide('machine', 'heuristic', `a ${e.frequencyHz} Hz beep at ${Math.round(e.onsetMs)} ms`, e.atMs, events);
      } else {
        this.beepSounding = false;
        // a beep is the machine's cue: the greeting is over when it stops
        if (this.decided?.verdict === 'machine') this.endGreeting(e.endMs, true, 'the beep ended', events);
      }
    }
    const endMs = atMs + (pcm.length / 8000) * 1000;
    this.audioSeen = true;
    if (isLoud(pcm)) this.lastVoicedMs = endMs;
    this.step(endMs, events);
    return events;
  }

  speechStarted(atMs: number): AmdEvent[] {
    const events: AmdEvent[] = [];
    this.step(atMs, events);
    if (this.speaking) return events;
    this.speaking = true;
    const gap = this.lastSpeechEndMs === null ? Infinity : atMs - this.lastSpeechEndMs;
    // a short pause inside a greeting does not start a new one
    if (this.greetingStartMs === null || (gap >= this.options.greetingGapMs && this.decided !== null)) this.greetingStartMs = atMs;
    this.speechStartMs = atMs;
    return events;
  }

  speechStopped(atMs: number): AmdEvent[] {
    const events: AmdEvent[] = [];
    if (this.speaking) {
      // judge the speech that just ended against the long-greeting rule before the silence counts
      this.step(atMs, events);
      this.speaking = false;
      this.lastSpeechEndMs = atMs;
    }
    this.step(Math.max(atMs, this.nowMs), events);
    return events;
  }

  transcript(text: string, final: boolean, atMs: number): AmdEvent[] {
    const events: AmdEvent[] = [];
    if (final) {
      if (text.trim() !== '') this.finals.push(text.trim());
      this.interim = '';
    } else {
      this.interim = text.trim();
    }
    const phrase = findVoicemailPhrase(this.text);
    if (phrase?.strength === 'strong') this.decide('machine', 'heuristic', `voicemail phrase "${phrase.label}"`, atMs, events);
    this.step(atMs, events);
    return events;
  }

  /** The model's answer to `classify` (null when it failed or was not asked): decides, or falls back to the word rule. */
  classified(verdict: AmdVerdict | null, atMs: number): AmdEvent[] {
    const events: AmdEvent[] = [];
    this.classifyAnswered = true;
    if (verdict === 'human' || verdict === 'machine') this.decide(verdict, 'llm', `the model classified the greeting as ${verdict}`, atMs, events);
    this.step(atMs, events);
    return events;
  }

  /**
   * A decision made elsewhere (the carrier's AMD) replaces ours, so the greeting's end is still found for it
   * (`greeting_ended` follows a `machine`). Emits no `decision` event.
   */
  adopt(result: AmdResult, atMs: number): AmdEvent[] {
    const events: AmdEvent[] = [];
    this.decided = { ...result, decidedAtMs: result.decidedAtMs ?? Math.round(atMs) };
    this.step(atMs, events);
    return events;
  }

  advance(nowMs: number): AmdEvent[] {
    const events: AmdEvent[] = [];
    this.step(nowMs, events);
    return events;
  }

  // -------------------------------------------------------------------------------------------------------

  private step(nowMs: number, events: AmdEvent[]): void {
    if (nowMs > this.nowMs) this.nowMs = nowMs;
    const now = this.nowMs;
    const o = this.options;
    if (!this.decided) {
      // with audio, speech lasts to the last loud frame (the VAD reports its end a hangover later)
      const voicedUntil = this.audioSeen ? this.lastVoicedMs : now;
      if (this.speaking && this.greetingStartMs !== null && voicedUntil !== null && voicedUntil - this.greetingStartMs >= o.machineGreetingMs) {
        // a person who talks on is the long-greeting rule's mistake: a model, when there is one, judges the words first
        if (!this.askModel(now, events)) this.decide('machine', 'heuristic', `a greeting longer than ${o.machineGreetingMs} ms`, now, events);
      } else if (!this.speaking && this.greetingStartMs !== null && this.lastSpeechEndMs !== null && now - this.lastSpeechEndMs >= o.greetingGapMs) {
        this.judgeEndedGreeting(this.lastSpeechEndMs + o.greetingGapMs, events);
      } else if (this.greetingStartMs === null && !this.speaking && now - o.startMs >= o.noSpeechMs) {
        this.decide('unknown', 'timeout', `no speech in ${o.noSpeechMs} ms`, o.startMs + o.noSpeechMs, events);
      }
      if (!this.decided && now - o.startMs >= o.decisionTimeoutMs) {
        this.decide('unknown', 'timeout', `no decision in ${o.decisionTimeoutMs} ms`, o.startMs + o.decisionTimeoutMs, events);
      }
    }
    if (this.decided?.verdict === 'machine' && !this.greetingDone) {
      const decidedAt = this.decided.decidedAtMs ?? now;
      if (!this.speaking && !this.beepSounding && this.lastSpeechEndMs !== null && now - this.lastSpeechEndMs >= o.greetingEndSilenceMs) {
        this.endGreeting(this.lastSpeechEndMs + o.greetingEndSilenceMs, false, `${o.greetingEndSilenceMs} ms of silence after the greeting`, events);
      } else if (now - decidedAt >= o.greetingEndTimeoutMs) {
        this.endGreeting(decidedAt + o.greetingEndTimeoutMs, false, `no end of the greeting heard in ${o.greetingEndTimeoutMs} ms`, events);
      }
    }
  }

  /** Rules 4 and 5: speech followed by a pause long enough to end the greeting. */
  private judgeEndedGreeting(atMs: number, events: AmdEvent[]): void {
    const o = this.options;
    const start = this.greetingStartMs!;
    const length = this.lastSpeechEndMs! - start;
    if (length <= o.humanGreetingMaxMs) {
      this.decide('human', 'heuristic', `a short greeting (${Math.round(length)} ms) then silence`, atMs, events);
      return;
    }
    const text = this.text;
    const phrase = findVoicemailPhrase(text);
    if (phrase) {
      this.decide('machine', 'heuristic', `voicemail phrase "${phrase.label}" in a ${Math.round(length)} ms greeting`, atMs, events);
      return;
    }
    // no text yet: the STT's final may still come; the timeout decides otherwise
    if (this.askModel(atMs, events) || (o.classifier && !this.classifyAnswered && text === '')) return;
    const words = wordCount(text);
    if (words >= o.machineWordCount) {
      this.decide('machine', 'heuristic', `a ${Math.round(length)} ms greeting of ${words} words`, atMs, events);
    } else if (start - o.startMs >= o.initialSilenceMs) {
      this.decide('machine', 'heuristic', `a ${Math.round(length)} ms greeting after ${Math.round(start - o.startMs)} ms of silence`, atMs, events);
    } else {
      this.decide('human', 'heuristic', `a ${Math.round(length)} ms greeting of ${words} words then silence`, atMs, events);
    }
  }

  /** With a classifier not yet answered: asks once (when there is text) and returns true while its answer is awaited. */
  private askModel(atMs: number, events: AmdEvent[]): boolean {
    if (!this.options.classifier || this.classifyAnswered) return false;
    if (!this.classifyAsked) {
      const text = this.text;
      if (text === '') return false;
      this.classifyAsked = true;
      events.push({ type: 'classify', text, atMs });
    }
    return true;
  }

  private decide(verdict: AmdVerdict, source: AmdResult['source'], reason: string, atMs: number, events: AmdEvent[]): void {
    if (this.decided) return;
    this.decided = { verdict, source, reason, decidedAtMs: Math.round(atMs) };
    events.push({ type: 'decision', result: this.decided });
  }

  private endGreeting(atMs: number, beep: boolean, reason: string, events: AmdEvent[]): void {
    if (this.greetingDone) return;
    this.greetingDone = true;
    events.push({ type: 'greeting_ended', atMs: Math.round(atMs), beep, reason });
  }
}

/** A frame louder than -40 dBFS RMS (the energy VAD's speech level). */
const LOUD_SUM_PER_SAMPLE = (32768 * 10 ** (-40 / 20)) ** 2;

function isLoud(pcm: Int16Array): boolean {
  if (pcm.length === 0) return false;
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!;
  return sum / pcm.length >= LOUD_SUM_PER_SAMPLE;
}
