/**
 * One call's voice session (docs/voice.md "Turn-taking, barge-in and endings"): wires the carrier's
 * MediaChannel ↔ VAD ↔ STT ↔ the conversation engine ↔ TTS ↔ the shared playout pacer.
 *
 * - States: LISTENING (the caller's turn), THINKING (a reply is being prepared, nothing audible yet),
 *   SPEAKING (agent audio is playing); each agent turn is cancelled through its own AbortController, which
 *   stops the model stream and the TTS of every sentence of that turn.
 * - The greeting (the engine's `open`, templated) is the first thing said; pieces synthesized while the call
 *   rang (`greeting`, prepared-speech.ts) are played from that audio.
 * - Caller turns end by endpointing (VAD stop → `stt.finalize()` → `Endpointer`); the model's text is cut by
 *   the `SentenceChunker`, each piece synthesized in order, converted to μ-law 8 kHz and paced out with a mark
 *   per piece.
 * - Barge-in: caller speech sustained for `interruptionMinSpeechMs` (on the VAD's per-window verdicts, so
 *   noise never counts) while the agent speaks at a node that allows it clears the carrier at once, aborts the
 *   turn and tells the engine only the words heard (`agentInterrupted`). With an STT that streams interims,
 *   backchannel words ("uh-huh") never interrupt and the first words are awaited until the speech is
 *   `interruptionMinSpeechMs + interruptionWordWaitMs` old at most (not at all once the call showed that its
 *   STT's words come later than that). A barge-in whose utterance proves to be only a backchannel or noise
 *   is a false interruption: the rest of the cut reply is said (`agentResumed`). A barge-in while the model
 *   still streams the reply mutes it instead of aborting it (`muteTurn`): the stream runs on, the engine held,
 *   until the utterance is judged: false, the rest is said as it streams and the turn completes as if never
 *   cut; real (or the timeout, or MUTED_REPLY_MAX_CHARS), the stream is aborted and only heard words are kept.
 *   Speech while THINKING cancels the reply; the next commit restarts it with the new words (the transcript
 *   merges both). DTMF is user text `[DTMF 5]`.
 * - Endings: idle (check-in, then goodbye → `user_idle`), the time limit (goodbye → `max_duration`, cut
 *   short after `goodbyeGraceMs`), caller hang-up, an endCall node (hung up only once its last words were
 *   heard: the final mark played), a provider failing for good (`failed`). Each one hands the record and the
 *   artifacts to the sink BEFORE hanging up.
 * - Answering-machine detection (`voicemail`, outbound calls; docs/voicemail.md): the greeting waits for the
 *   `VoicemailGate`'s plan (the caller's words meanwhile are not a turn); `converse` opens the conversation,
 *   `hang_up` ends the call `voicemail`, `leave_message` speaks the message once the greeting ended (no
 *   barge-in) and ends it `voicemail_left`.
 * Pure: no I/O but its ports; time from `Timers` and the engine's `Clock`.
 */
import type { Conversation, ConversationTurn, TurnOptions } from '../conversation/conversation.js';
import { isAbortError } from '../conversation/conversation.js';
import type { ConversationEvent } from '../conversation/conversation-state.js';
import { runLogEntryOf } from '../conversation/conversation-record.js';
import { systemClock, type Clock } from '../ports/clock.port.js';
import type { ConversationRecord } from '../ports/conversation-record.port.js';
import { silentLogger, type Logger } from '../ports/logger.port.js';
import type { MediaChannel } from '../ports/media-channel.port.js';
import type { SpeechToText, SttStream } from '../ports/speech-to-text.port.js';
import type { TextToSpeech } from '../ports/text-to-speech.port.js';
import type { TimerHandle, Timers } from '../ports/timers.port.js';
import type { VadEvent, VoiceActivityDetector, VoiceActivityDetectorFactory } from '../ports/voice-activity-detector.port.js';
import type { RunLogEntry } from '../runs/run.js';
import type { WorkflowGraph } from '../workflows/workflow-graph.js';
import { bytesPerMs, sameFormat } from './audio-format.js';
import { isBackchannel, textAfterWords, wordCount, wordsAfter } from './backchannel.js';
import { CallRecorder } from './call-recorder.js';
import { fromSessionAudio, SESSION_FORMAT, toSessionAudio, type AudioConverter } from './carrier-audio.js';
import { Endpointer, type CommittedUtterance } from './endpointing.js';
import { ReusedMulawDecoder } from './g711.js';
import { type HeardSegment, type Playout, type PlayoutPacer, type Segment } from './playout-pacer.js';
import { SentenceChunker } from './sentence-chunker.js';
import { SustainedSpeech } from './sustained-speech.js';
import { VAD_WINDOW_MS } from './vad-hysteresis.js';
import { TranscriptBuilder } from './transcript-builder.js';
import { TurnMetricsCollector } from './turn-metrics.js';
import { VoiceSessionEvents, type TurnLatency, type VoiceState } from './voice-session-events.js';
import type { VoiceSessionArtifacts, VoiceSessionOutcome, VoiceSessionSink } from './voice-session-sink.js';
import { VOICE_DEFAULTS, type VoiceSettings } from './voice-settings.js';
import { VoicemailGate, type VoicemailGateOptions } from './amd/voicemail-gate.js';
import type { VoicemailPlan } from './amd/voicemail-policy.js';
import type { AmdResult } from './amd/amd-result.js';
import type { PreparedSpeech } from './prepared-speech.js';
import { UtteranceGate } from './utterance-gate.js';

/** A per-utterance STT gets its utterance from this long before the VAD's speech start (soft onsets, the start's judgement). */
const UTTERANCE_PREROLL_MS = 300;
/** The caller's audio kept meanwhile for that (it covers the VAD's lag in judging a start, batched Silero's too). */
const UTTERANCE_KEEP_MS = 1000;
/**
 * A reply muted by a barge-in (its model call still streaming) keeps at most this much text arriving after the
 * cut while the interruption is judged; past it the reply is dropped as on a real interruption (~30 s of speech:
 * a reply that long is not worth resuming, and the buffer stays bounded).
 */
export const MUTED_REPLY_MAX_CHARS = 2000;
/**
 * The barge-in's last stretch: once the caller's armed speech is this close to `interruptionMinSpeechMs` (as its
 * loud frames count it), the VAD is asked to score its windows at once (`VoiceActivityDetector.expedite`): the
 * verdict on one of them decides the `clear`. Two VAD windows: the one that completes the duration and the one
 * before it (frames are 20 ms, windows 32 ms, so either can be the one).
 */
const BARGE_IN_EXPEDITE_MS = 2 * VAD_WINDOW_MS;

export interface VoiceSessionOptions {
  /** Names marks and log lines (the call's id). */
  id: string;
  channel: MediaChannel;
  /** Started (`Conversation.start`), not yet opened. The session owns it from now on. */
  conversation: Conversation;
  /** The conversation's graph (for each node's `allow_interrupt`). */
  graph: WorkflowGraph;
  stt: SpeechToText;
  sttOptions?: { model?: string; language?: string };
  tts: TextToSpeech;
  ttsOptions?: { voice?: string; model?: string };
  vad: VoiceActivityDetectorFactory;
  /** The process's one pacer. */
  pacer: PlayoutPacer;
  timers: Timers;
  /** The engine's clock (run log timestamps); default the system clock. */
  clock?: Clock;
  sink: VoiceSessionSink;
  settings?: Partial<VoiceSettings>;
  logger?: Logger;
  /** Answering-machine detection (outbound calls whose agent has `voicemail.detect`); the session adds its timers and logger. */
  voicemail?: Omit<VoicemailGateOptions, 'timers' | 'logger'>;
  /**
   * The greeting synthesized while the call rang (prepared-speech.ts): the opening turn's pieces are taken from
   * it when their text matches (else synthesized as usual). The session aborts it when the call ends.
   */
  greeting?: Pick<PreparedSpeech, 'take' | 'abort'>;
}

type TurnKind = 'open' | 'send' | 'retry' | 'idle' | 'max_duration' | 'voicemail' | 'resume';

/** A reply a barge-in cut, resumable if the caller's utterance proves the interruption false. */
interface Resumable {
  nodeId: string;
  /** What the caller heard of the reply before the cut (the engine's line now). */
  cutText: string;
  /** The rest to say: from the word being played at the cut to the reply's end. */
  text: string;
}

interface Reply {
  nodeId: string;
  text: string;
  segments: Segment[];
  chunker: SentenceChunker;
  /** A reply resumed after a muted cut: what the caller heard of the model's line before (the engine's line is both). */
  heardBefore?: string;
}

/** A turn a barge-in cut while its model call still ran: muted, the engine held, until the caller's utterance is judged. */
interface MutedTurn {
  turn: AgentTurn;
  /** The engine's last line as heard (it becomes this if the interruption proves real). */
  lineHeard: string;
  /** The cut turn's last reply had a line in the engine (text). */
  hasLine: boolean;
  /** Characters the model streamed since the cut (bounded by MUTED_REPLY_MAX_CHARS). */
  chars: number;
  /** falseInterruptionTimeoutMs after the caller's speech ended: the interruption is real. */
  timer: TimerHandle | null;
  /** The model call failed while muted: nothing is left to resume; a false interruption retries the reply. */
  failed?: boolean;
}

class AgentTurn {
  /** Aborts the whole turn: the model call and the speech. */
  readonly controller = new AbortController();
  /** The speech only (TTS of the pieces): a muted cut stops it and lets the model call go on. */
  private audio = new AbortController();
  replies: Reply[] = [];
  open: Reply | null = null;
  speaking: Promise<void> = Promise.resolve();
  ended: { reason: VoiceSessionOutcome['reason']; disposition: string } | null = null;
  failed = false;
  /** The model's stream ended: every reply's text is whole. */
  streamDone = false;
  /** A resumed reply (kind `resume`): what was heard before the cut it continues. */
  resumeCut: string | undefined;
  /** Muted by a barge-in: its model call streams on, nothing is spoken, until the judgement. */
  muted = false;
  /** Spoken again after a muted cut proved a false interruption. */
  resumed = false;
  /** The run log's `false_interruption` entry of that resume (its resumed text grows as the model streams). */
  resumeLog: RunLogEntry | null = null;
  firstTokenAtMs: number | undefined;
  firstAudioAtMs: number | undefined;
  ttsFirstAudioMs: number | undefined;
  /** The turn's latency entry was reported (once per turn, resumed or not). */
  latencyReported = false;

  constructor(
    readonly kind: TurnKind,
    readonly startedAtMs: number,
    readonly user: CommittedUtterance | null,
  ) {
    this.controller.signal.addEventListener('abort', () => this.audio.abort(), { once: true });
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** The signal the speech queued now is synthesized under. */
  get audioSignal(): AbortSignal {
    return this.audio.signal;
  }

  /** A muted cut: the speech stops, the model call goes on. */
  mute(): void {
    this.muted = true;
    this.audio.abort();
  }

  /** The muted turn speaks again. */
  unmute(): void {
    this.muted = false;
    this.audio = new AbortController();
    if (this.aborted) this.audio.abort();
  }
}

export class VoiceSession {
  readonly events: VoiceSessionEvents;
  /** Resolves once the session ended (record persisted, call hung up). Never rejects. */
  readonly ended: Promise<VoiceSessionOutcome>;
  private resolveEnded!: (outcome: VoiceSessionOutcome) => void;

  private readonly settings: VoiceSettings;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly conversation: Conversation;
  private readonly channel: MediaChannel;
  private readonly timers: Timers;
  private readonly playout: Playout;
  private readonly endpointer: Endpointer;
  private readonly vad: VoiceActivityDetector;
  private readonly recorder: CallRecorder;
  private readonly transcript: TranscriptBuilder;
  private readonly metrics: TurnMetricsCollector;
  private readonly inbound: AudioConverter;
  private readonly outbound: AudioConverter | null;
  /** Per-frame PCM for the events (valid during the emit only: the listeners copy). */
  private readonly callerPcm = new ReusedMulawDecoder();
  private readonly agentPcm = new ReusedMulawDecoder();
  private readonly sessionController = new AbortController();
  private readonly startMs: number;
  private readonly turnLogs: RunLogEntry[] = [];

  private state_: VoiceState = 'listening';
  private turn: AgentTurn | null = null;
  private stt: SttStream | null = null;
  /** A per-utterance STT hears the caller's speech only (core/voice/utterance-gate.ts); null: it hears the whole stream. */
  private sttGate: UtteranceGate | null = null;
  private vadStreamMs = 0;
  /** Clock time at which the caller audio up to `vadStreamMs` (VAD stream time) had arrived. */
  private vadClockMs = 0;
  /** Stream time up to which the VAD's window verdicts went to `sustained`. */
  private judgedUntilMs = 0;
  /** Inside `vad.push` (onCallerAudio checks the barge-in after it; a verdict then needs no check of its own). */
  private pushingToVad = false;
  /** The caller's current speech goes to the endpointer (it is a turn, not speech over the agent). */
  private speechCounts = false;
  private speechOnsetMs = 0;
  /** No new caller turns: the call is ending (engine ended, time limit). */
  private closing = false;
  private finishing: Promise<void> | null = null;
  /** A reply cancelled while THINKING: the next commit restarts it. */
  private pendingRestart: CommittedUtterance | null = null;
  private speakingNodeId: string;
  private readonly segmentReplies = new Map<Segment, Reply>();
  private readonly playedAt = new Map<Segment, number>();
  private idleWaiters: Array<() => void> = [];
  private idleTimer: TimerHandle | null = null;
  private maxTimer: TimerHandle | null = null;
  /** The caller's sustained speech in stream time: loud frames the VAD calls speech (barge-in needs it to last, not the VAD's hangover). */
  private readonly sustained = new SustainedSpeech();
  /** The caller's speech during the agent's audio may interrupt it (the node allowed it at its onset). */
  private bargeInArmed = false;
  /** What the VAD was last told with `expedite` (BARGE_IN_EXPEDITE_MS). */
  private vadExpedited = false;
  /** The caller's words heard since the armed speech began (settled ones, then the current hypothesis). */
  private bargeFinals: string[] = [];
  private bargeInterim = '';
  /** The armed speech's onset once it lasted interruptionMinSpeechMs (undefined: not yet). */
  private bargeHeldOnsetMs: number | undefined;
  /** The bounded wait for the first words (streaming STT only): running, then over. */
  private bargeWaitTimer: TimerHandle | null = null;
  private bargeWaitOver = false;
  /**
   * When the STT's first words of the current speech came (clock), and what this call's speeches long enough
   * to tell have shown: words within `interruptionMinSpeechMs + interruptionWordWaitMs` of the onset (the wait
   * for words can tell a backchannel), or only later (it cannot: it is skipped, see checkBargeIn).
   */
  private speechWordsAtMs: number | undefined;
  private wordsInTimeSeen = false;
  private wordsLateSeen = false;
  /** The reply the last barge-in cut, until the caller's next utterance is committed. */
  private resumable: Resumable | null = null;
  /** The turn the last barge-in cut while its model call still streamed, until the interruption is judged. */
  private muted: MutedTurn | null = null;
  private graceTimer: TimerHandle | null = null;
  /** Answering-machine detection, while it runs. */
  private amd: VoicemailGate | null = null;
  /** The caller's speech is not a turn and silence is not idleness: AMD undecided, or a voicemail being left. */
  private holdTurns = false;

  constructor(private readonly options: VoiceSessionOptions) {
    this.settings = {
      ...VOICE_DEFAULTS,
      ...options.settings,
      endpointing: { ...VOICE_DEFAULTS.endpointing, ...options.settings?.endpointing },
    };
    this.logger = (options.logger ?? silentLogger).child({ call: options.id });
    this.clock = options.clock ?? systemClock;
    this.conversation = options.conversation;
    this.channel = options.channel;
    this.timers = options.timers;
    this.startMs = this.timers.now();
    this.speakingNodeId = this.conversation.node.id;
    this.events = new VoiceSessionEvents((err, event) => this.logger.warn({ event, err: String(err) }, 'voice session listener failed'));
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    this.inbound = toSessionAudio(this.channel.inFormat);
    this.outbound = sameFormat(this.channel.outFormat, SESSION_FORMAT) ? null : fromSessionAudio(this.channel.outFormat);
    // Silero scores windows in batches: its events may come after the audio that caused them (onVad maps times).
    // Every window's verdict goes to `sustained` as it comes (onVadWindow): a batch may score several at once.
    this.vad = options.vad.create({ sampleRate: 8000, onEvent: (event) => this.onVad(event), onWindow: (speech, endMs) => this.onVadWindow(speech, endMs) });
    this.endpointer = new Endpointer(this.timers, (u) => this.onUtterance(u), this.settings.endpointing);
    this.recorder = new CallRecorder({ startMs: this.startMs, output: options.sink.recording });
    this.events.on('caller_audio', (e) => this.recorder.writeCaller(e.pcm, e.atMs));
    this.events.on('agent_audio', (e) => this.recorder.writeAgent(e.pcm, e.playAtMs));
    this.events.on('agent_audio_cleared', (e) => this.recorder.clear(e.atMs));
    this.transcript = new TranscriptBuilder(this.events, this.startMs);
    this.metrics = new TurnMetricsCollector(this.events);
    // A pump's frames of one segment go out as one piece: one carrier media message instead of one per 20 ms
    // (Vonage's channel still cuts its exact binary frames); the recorder places the piece at its first frame.
    const sendAgentAudio = (audio: Uint8Array, playAtMs: number): void => {
      this.channel.sendAudio(this.outbound ? this.outbound.convert(audio) : audio);
      this.events.emit('agent_audio', { pcm: this.agentPcm.decode(audio), playAtMs });
    };
    this.playout = options.pacer.open(
      {
        sendFrame: sendAgentAudio,
        sendFrames: sendAgentAudio,
        sendMark: (name) => this.channel.sendMark(name),
        clear: (atMs) => {
          this.channel.clear();
          this.outbound?.reset();
          this.events.emit('agent_audio_cleared', { atMs });
        },
      },
      options.id,
    );
    this.playout.onFirstFrame((segment, atMs) => this.onFirstFrame(segment, atMs));
    this.playout.onSegmentPlayed((segment) => this.playedAt.set(segment, this.timers.now()));
    this.playout.onIdle(() => this.flushIdleWaiters());
  }

  get state(): VoiceState {
    return this.state_;
  }

  /** Starts the call: listens to the channel, opens STT, arms the time limit and says the greeting. */
  start(): void {
    this.channel.onAudio((audio) => this.onCallerAudio(audio));
    this.channel.onDtmf((digit) => this.onDtmf(digit));
    this.channel.onMark((name, played) => this.playout.markReported(name, played));
    this.channel.onClose((reason) => void this.onChannelClosed(reason));
    if (this.settings.maxCallDurationMs !== null) {
      this.maxTimer = this.timers.setTimeout(() => void this.onMaxDuration(), this.settings.maxCallDurationMs);
    }
    if (this.options.voicemail) {
      this.holdTurns = true;
      this.amd = new VoicemailGate({ ...this.options.voicemail, timers: this.timers, logger: this.logger });
      void this.amd.plan.then((plan) => this.onVoicemailPlan(plan));
    } else {
      void this.runTurn('open', (o) => this.conversation.open(o), null);
    }
    void this.listen();
  }

  // -------------------------------------------------------------------------------------------------------
  // The caller's side

  private async listen(): Promise<void> {
    let stream: SttStream;
    try {
      stream = await this.options.stt.open({ format: SESSION_FORMAT, ...this.options.sttOptions, signal: this.sessionController.signal });
    } catch (error) {
      if (!this.sessionController.signal.aborted) await this.fail('stt', error);
      return;
    }
    if (this.finishing) {
      await stream.close();
      return;
    }
    this.stt = stream;
    if (!stream.interimResults) this.sttGate = new UtteranceGate((bytes) => stream.push(bytes), { bytesPerMs: 8, keepMs: UTTERANCE_KEEP_MS, prerollMs: UTTERANCE_PREROLL_MS });
    try {
      for await (const event of stream.events) {
        if (this.finishing) break;
        const atMs = this.timers.now();
        if (event.type === 'interim') {
          this.amd?.transcript(event.text, false, atMs);
          this.events.emit('transcript_interim', { text: event.text, atMs });
          this.endpointer.interimTranscript(event.text);
          this.wordsHeard(event.text, false, atMs);
        } else if (event.type === 'final') {
          this.amd?.transcript(event.text, true, atMs);
          this.events.emit('transcript_final', { text: event.text, atMs });
          this.endpointer.finalTranscript(event.text, event.speechFinal);
          this.wordsHeard(event.text, true, atMs);
        } else if (event.type === 'utterance_end') {
          this.endpointer.utteranceEnd();
        }
      }
    } catch (error) {
      if (!this.finishing && !isAbortError(error)) await this.fail('stt', error);
      return;
    }
    // The stream ends only when we close it: ending on its own, the call can no longer hear the caller.
    if (!this.finishing) await this.fail('stt', new Error('the recognition stream ended'));
  }

  private onCallerAudio(audio: Uint8Array): void {
    if (this.finishing) return;
    const bytes = this.inbound.convert(audio);
    if (bytes.length === 0) return;
    const atMs = this.timers.now();
    const pcm = this.callerPcm.decode(bytes);
    this.events.emit('caller_audio', { pcm, atMs });
    this.amd?.audio(pcm, atMs - pcm.length / 8);
    if (this.sttGate) this.sttGate.push(bytes);
    else this.stt?.push(bytes);
    this.vadStreamMs += pcm.length / 8;
    this.vadClockMs = atMs;
    // on the audio's own clock (stream time), not arrival time: frames delayed by a busy event loop and then
    // delivered together must not make a 200 ms cough look longer than it is
    this.sustained.push(pcm, this.vadStreamMs, pcm.length / 8);
    this.expediteVad(this.bargeInArmed && this.bargeHeldOnsetMs === undefined && this.bargeInNear());
    // the verdicts scored during this push go to `sustained` through onVadWindow
    this.pushingToVad = true;
    let events: VadEvent[];
    try {
      events = this.vad.push(pcm);
    } finally {
      this.pushingToVad = false;
    }
    for (const event of events) this.onVad(event);
    if (this.bargeInArmed) this.checkBargeIn();
  }

  /**
   * One window's verdict, in stream order, during `vad.push` or later (batched Silero). Each one is judged: when
   * a batch scored several windows of this call at once (its frames came in a burst), judging only the newest
   * let one window not called speech at the end of the batch end the caller's sustained speech, and the
   * barge-in then waited another interruptionMinSpeechMs. A verdict scored after the push is checked at once
   * instead of at the next caller frame.
   */
  private onVadWindow(speech: boolean, endMs: number): void {
    if (this.finishing || endMs <= this.judgedUntilMs) return;
    this.judgedUntilMs = endMs;
    this.sustained.judge(speech, endMs);
    if (!this.pushingToVad && this.bargeInArmed) this.checkBargeIn();
  }

  /** The clock time of a caller-stream instant (VAD stream time): when the audio up to it had arrived. */
  private clockAt(streamMs: number): number {
    return this.vadClockMs - (this.vadStreamMs - streamMs);
  }

  /** A VAD event, during `push` or later (batched scoring): `event.atMs` is stream time, mapped to the clock. */
  private onVad(event: VadEvent): void {
    if (this.finishing) return;
    const nowMs = this.timers.now();
    const atMs = this.clockAt(event.atMs);
    if (event.type === 'speech_start') {
      this.sttGate?.speechStarted(this.vadStreamMs - event.atMs);
      this.amd?.speechStarted(atMs);
      this.speechOnsetMs = atMs;
      this.speechWordsAtMs = undefined;
      this.events.emit('speech_started', { atMs });
      this.cancelIdle();
      this.cancelMutedTimeout();
      this.speechCounts = false;
      if (this.state_ === 'speaking') {
        this.disarmBargeIn();
        this.bargeInArmed = !this.holdTurns && this.interruptible();
        if (this.bargeInArmed) this.checkBargeIn();
        return;
      }
      if (this.closing || this.holdTurns) return;
      if (this.state_ === 'thinking' && this.turn && (this.turn.kind === 'send' || this.turn.kind === 'retry') && !this.turn.resumed) this.cancelThinking();
      this.speechCounts = true;
      this.endpointer.speechStarted(atMs);
      return;
    }
    this.disarmBargeIn();
    this.noteWordTiming(atMs);
    this.amd?.speechStopped(atMs);
    this.events.emit('speech_stopped', { atMs: nowMs, endOfSpeechMs: atMs });
    this.sttGate?.speechStopped();
    this.stt?.finalize();
    if (this.muted) this.armMutedTimeout(atMs);
    if (this.speechCounts) this.endpointer.speechStopped(atMs);
    else if (this.state_ === 'listening' && !this.turn) this.armIdle();
    this.speechCounts = false;
  }

  private onDtmf(digit: string): void {
    if (this.finishing || this.closing || this.holdTurns) return;
    const now = this.timers.now();
    if (this.state_ === 'speaking') {
      if (!this.interruptible()) {
        this.logger.info({ digit }, 'DTMF while the agent speaks at a node that does not allow interruptions: ignored');
        return;
      }
      const heard = this.cutAgent(now);
      this.events.emit('interruption', { atMs: now, reactionMs: 0, heard });
    }
    this.onUtterance({ text: `[DTMF ${digit}]`, speechStartMs: now, speechEndMs: now, stoppedAtMs: now, by: 'final' });
  }

  /** A caller turn is over: the engine gets it (empty text: noise, or a cancelled reply restarts as it was). */
  private onUtterance(u: CommittedUtterance): void {
    if (this.finishing || this.closing || this.holdTurns) return;
    const resume = this.resumable;
    this.resumable = null;
    const falseInterruption = !this.turn && (u.text.trim() === '' || isBackchannel(u.text)) && this.timers.now() - u.speechEndMs <= this.settings.falseInterruptionTimeoutMs;
    if (this.muted) {
      if (falseInterruption) {
        this.resumeMuted(u);
        return;
      }
      this.dropMuted();
    }
    if (resume && falseInterruption) {
      this.resumeReply(resume, u);
      return;
    }
    const restart = this.pendingRestart;
    if (u.text.trim() === '') {
      if (restart) {
        this.pendingRestart = null;
        void this.runTurn('retry', (o) => this.conversation.retry(o), restart);
      } else if (!this.turn) {
        this.armIdle();
      }
      return;
    }
    if (this.turn) {
      // The agent began a reply (an idle check-in) while the caller was talking: the caller wins.
      if (this.state_ === 'speaking') this.cutAgent(this.timers.now());
      else this.cancelThinking();
    }
    this.pendingRestart = null;
    this.events.emit('user_turn', {
      text: u.text,
      startMs: u.speechStartMs,
      endMs: u.speechEndMs,
      node_id: this.conversation.node.id,
      merged: restart !== null,
    });
    void this.runTurn('send', (o) => this.conversation.send(u.text, o), u);
  }

  // -------------------------------------------------------------------------------------------------------
  // Barge-in

  /**
   * Whether caller speech may cut the agent now: the node allows it, and the agent is not saying the time limit's
   * goodbye (the call is over; cut, the goodbye would leave the call waiting out `goodbyeGraceMs` in silence).
   */
  private interruptible(): boolean {
    if (this.turn?.kind === 'max_duration') return false;
    return this.options.graph.node(this.speakingNodeId)?.data.allow_interrupt !== false;
  }

  /**
   * On each caller frame (and each transcript) while armed. The duration rule first: the caller's sustained
   * speech (what the VAD calls speech, sustained-speech.ts) must last `interruptionMinSpeechMs`. Then the
   * words, when the STT streams them: only backchannel words ("uh-huh", "okay": backchannel.ts) never
   * interrupt; any other word interrupts at once; no words yet waits for them until the speech is
   * `interruptionMinSpeechMs + interruptionWordWaitMs` old, then interrupts (no wait when `wordsComeTooLate`:
   * on this call they never came that early). With a per-utterance STT (no interims) the duration rule alone
   * decides. If the agent finished first, the speech is the caller's turn.
   */
  private checkBargeIn(): void {
    if (this.finishing || !this.vad.speaking) return;
    if (this.bargeHeldOnsetMs === undefined) {
      if (this.sustained.durationMs < this.settings.interruptionMinSpeechMs) return;
      const start = this.sustained.startMs;
      this.bargeHeldOnsetMs = start === undefined ? this.speechOnsetMs : this.clockAt(start);
    }
    const onset = this.bargeHeldOnsetMs;
    if (this.state_ !== 'speaking') {
      this.disarmBargeIn();
      if (!this.speechCounts && !this.closing) {
        this.speechCounts = true;
        this.endpointer.speechStarted(onset);
      }
      return;
    }
    const words = [...this.bargeFinals, this.bargeInterim].join(' ').trim();
    if (words !== '') {
      if (isBackchannel(words)) return; // the caller is listening: the agent goes on
    } else if (this.stt?.interimResults === true && !this.bargeWaitOver && !this.wordsComeTooLate()) {
      // until the speech is interruptionMinSpeechMs + interruptionWordWaitMs old at most: a late frame (a busy
      // event loop) waits less, so the clear still comes within the target
      const waitMs = onset + this.settings.interruptionMinSpeechMs + this.settings.interruptionWordWaitMs - this.timers.now();
      if (waitMs > 0) {
        this.bargeWaitTimer ??= this.timers.setTimeout(() => {
          this.bargeWaitTimer = null;
          this.bargeWaitOver = true;
          if (this.bargeInArmed) this.checkBargeIn();
        }, waitMs);
        return;
      }
    }
    this.disarmBargeIn();
    const now = this.timers.now();
    const endedTurn = this.turn?.ended ?? null;
    const heard = this.cutAgent(now, !endedTurn);
    this.events.emit('interruption', { atMs: now, reactionMs: now - onset, heard });
    this.logger.info({ reaction_ms: now - onset, heard, words }, 'barge-in: the agent stopped');
    if (endedTurn) {
      void this.finish({ reason: endedTurn.reason, disposition: endedTurn.disposition });
      return;
    }
    if (this.closing) return;
    this.speechCounts = true;
    this.endpointer.speechStarted(onset);
  }

  /** A transcript arrived at `atMs`: when this speech's first words came, and, while armed, the barge-in's words. */
  private wordsHeard(text: string, final: boolean, atMs: number): void {
    if (text.trim() !== '') this.speechWordsAtMs ??= atMs;
    if (!this.bargeInArmed) return;
    if (final) {
      if (text.trim() !== '') this.bargeFinals.push(text.trim());
      this.bargeInterim = '';
    } else {
      this.bargeInterim = text;
    }
    this.checkBargeIn();
  }

  /**
   * A speech ended at `endMs`: if it lasted past the word-wait deadline (interruptionMinSpeechMs +
   * interruptionWordWaitMs from its onset), whether the STT's first words came by then says whether the wait
   * can ever tell a backchannel on this call. Judged at the stop: words that had not come by then (a final
   * after Finalize) came late.
   */
  private noteWordTiming(endMs: number): void {
    const deadline = this.speechOnsetMs + this.settings.interruptionMinSpeechMs + this.settings.interruptionWordWaitMs;
    if (endMs < deadline) return;
    if (this.speechWordsAtMs !== undefined && this.speechWordsAtMs <= deadline) this.wordsInTimeSeen = true;
    else this.wordsLateSeen = true;
  }

  /**
   * The wait for words cannot change the outcome: on this call, a speech long enough to tell got its first words
   * only after the deadline, and none ever got them in time (an STT whose interims come about once a second, as
   * Deepgram's do by default). Until a first such speech was heard, the wait is kept.
   */
  private wordsComeTooLate(): boolean {
    return this.wordsLateSeen && !this.wordsInTimeSeen;
  }

  /**
   * Whether the caller's current run of loud frames (from its onset to the audio pushed so far) is within
   * BARGE_IN_EXPEDITE_MS of `interruptionMinSpeechMs`: the VAD's next verdicts decide the barge-in.
   */
  private bargeInNear(): boolean {
    const start = this.sustained.startMs;
    return start !== undefined && this.vadStreamMs - start >= this.settings.interruptionMinSpeechMs - BARGE_IN_EXPEDITE_MS;
  }

  /** Tells the VAD to score this call's windows at once (`on`) or batched as usual, when that changes. */
  private expediteVad(on: boolean): void {
    if (on === this.vadExpedited) return;
    this.vadExpedited = on;
    this.vad.expedite?.(on);
  }

  /** Forgets the armed speech (it stopped, interrupted, or a new one began). */
  private disarmBargeIn(): void {
    this.expediteVad(false);
    this.bargeInArmed = false;
    this.bargeFinals = [];
    this.bargeInterim = '';
    this.bargeHeldOnsetMs = undefined;
    this.bargeWaitTimer?.cancel();
    this.bargeWaitTimer = null;
    this.bargeWaitOver = false;
  }

  /**
   * Stops the agent now: clears the carrier, aborts the turn, puts what was heard in the transcript and tells
   * the engine. Returns the heard words of the reply that was cut. `resumable` (a barge-in): remembers the
   * unheard rest of the reply, in case the caller's utterance proves the interruption false; a turn whose model
   * call still streams is muted instead of aborted (`muteTurn`).
   */
  private cutAgent(now: number, resumable = false): string {
    const turn = this.turn;
    const heard = this.playout.clear(now);
    this.flushIdleWaiters();
    this.turn = null;
    this.setState('listening');
    if (!turn) return '';
    if (resumable && this.mayMute(turn)) return this.muteTurn(turn, heard, now);
    turn.controller.abort();
    const rest = resumable ? this.restOf(turn, heard) : null;
    const texts = this.reportHeard(turn, heard, now);
    const last = turn.replies.at(-1);
    const lastHeard = last ? (texts.get(last) ?? '') : '';
    const lineHeard = joinWords(last?.heardBefore, lastHeard);
    if (turn.resumeCut !== undefined) this.conversation.agentResumed(turn.resumeCut, lastHeard, true);
    else if (last && (last.text.trim() !== '' || last.heardBefore)) this.conversation.agentInterrupted(lineHeard);
    if (rest && last) {
      const cutText = turn.resumeCut === undefined ? lineHeard : `${turn.resumeCut} ${lastHeard}`.trim();
      this.resumable = { nodeId: last.nodeId, cutText, text: rest };
    }
    return lastHeard;
  }

  /** A barge-in on `turn` can wait for the judgement with its model call running: the call still streams. */
  private mayMute(turn: AgentTurn): boolean {
    return !turn.streamDone && !turn.ended && !this.closing && (turn.kind === 'send' || turn.kind === 'retry' || turn.kind === 'open' || turn.kind === 'idle');
  }

  /**
   * A barge-in on a turn whose model call still streams (docs/voice.md "Barge-in", rule 3): the speech stops
   * (the carrier was cleared), the transcript gets the heard words, but the model call runs on, muted, and
   * the engine is held (`Conversation.holdTurn`): nothing of the turn is committed or acted on until the
   * caller's utterance is judged. What is left to say (from the word being played at the cut) stays in the
   * turn's replies, and the text that streams meanwhile joins it: `resumeMuted` says it all, `dropMuted`
   * aborts it. Returns the heard words of the reply that was cut.
   */
  private muteTurn(turn: AgentTurn, heard: HeardSegment[], now: number): string {
    turn.mute();
    this.conversation.holdTurn();
    const texts = this.reportHeard(turn, heard, now);
    const last = turn.replies.at(-1);
    const lastHeard = last ? (texts.get(last) ?? '') : '';
    const rest: Reply[] = [];
    for (const reply of turn.replies) {
      const heardText = texts.get(reply) ?? '';
      const text = textAfterWords(reply.text, wordCount(heardText));
      if (text.trim() === '' && reply !== turn.open) continue; // heard whole
      const continued: Reply = { nodeId: reply.nodeId, text, segments: [], chunker: new SentenceChunker(), heardBefore: joinWords(reply.heardBefore, heardText) };
      rest.push(continued);
      if (reply === turn.open) turn.open = continued;
    }
    turn.replies = rest;
    this.muted = {
      turn,
      lineHeard: joinWords(last?.heardBefore, lastHeard),
      hasLine: last !== undefined && `${last.heardBefore ?? ''}${last.text}`.trim() !== '',
      chars: 0,
      timer: null,
    };
    this.logger.info({ heard: lastHeard }, 'barge-in while the model streams: its reply is muted until the interruption is judged');
    return lastHeard;
  }

  /**
   * The muted turn's interruption was false: the agent says everything left of it, from the word being played
   * at the cut, as the model streams it (nothing waits for the stream's end), and the engine goes on as if
   * nothing had happened (tool calls, a transition, an ending run once, now). The caller's words are not a turn.
   */
  private resumeMuted(u: CommittedUtterance): void {
    const m = this.muted!;
    this.muted = null;
    m.timer?.cancel();
    const turn = m.turn;
    if (m.failed) {
      // the reply has no rest to say: the model answers again, as after any failed reply
      void this.runTurn('retry', (o) => this.conversation.retry(o), turn.user);
      return;
    }
    turn.resumeLog = this.noteFalseInterruption(u, restText(turn));
    turn.unmute();
    turn.resumed = true;
    turn.firstAudioAtMs = undefined;
    this.turn = turn;
    this.cancelIdle();
    this.setState('thinking');
    for (const reply of turn.replies) {
      for (const piece of reply.chunker.push(reply.text)) this.speak(turn, reply, piece);
      if (reply !== turn.open) for (const piece of reply.chunker.flush()) this.speak(turn, reply, piece);
    }
    this.conversation.releaseTurn();
    // a model call that ended while muted left the turn to be completed here (runTurn returned)
    if (turn.streamDone) void this.completeWhenHeard(turn);
  }

  /**
   * The muted turn's interruption was real (words that are not a backchannel, the timeout, the cap, the call
   * ending): its model call is aborted and nothing it produced after the cut is kept; the engine's line is the
   * words heard.
   */
  private dropMuted(): void {
    const m = this.muted;
    if (!m) return;
    this.muted = null;
    m.timer?.cancel();
    m.turn.controller.abort();
    if (m.hasLine && !m.failed) this.conversation.agentInterrupted(m.lineHeard);
  }

  /** The caller's speech (after a muted cut) ended at `endOfSpeechMs`: no utterance judged false by the timeout, the cut is real. */
  private armMutedTimeout(endOfSpeechMs: number): void {
    const m = this.muted!;
    m.timer?.cancel();
    m.timer = this.timers.setTimeout(() => {
      m.timer = null;
      if (this.muted !== m) return;
      this.logger.info({ timeout_ms: this.settings.falseInterruptionTimeoutMs }, 'no false interruption in time: the muted reply is dropped');
      this.dropMuted();
    }, Math.max(0, endOfSpeechMs + this.settings.falseInterruptionTimeoutMs - this.timers.now()));
  }

  private cancelMutedTimeout(): void {
    if (!this.muted) return;
    this.muted.timer?.cancel();
    this.muted.timer = null;
  }

  /** Text the muted turn's model streamed after the cut: bounded, past the bound the cut is treated as real. */
  private mutedText(chars: number): void {
    const m = this.muted;
    if (!m) return;
    m.chars += chars;
    if (m.chars <= MUTED_REPLY_MAX_CHARS) return;
    this.logger.info({ max_chars: MUTED_REPLY_MAX_CHARS }, 'the muted reply grew past its bound: dropped');
    this.dropMuted();
  }

  /**
   * What a cut turn had left to say: from the word being played at the cut to the end of its last reply, when
   * the cut fell in that last reply and the model had finished it (a half-streamed reply is not resumed: its
   * end was never written). Null: nothing resumable.
   */
  private restOf(turn: AgentTurn, heard: HeardSegment[]): string | null {
    const last = turn.replies.at(-1);
    if (!last || !turn.streamDone || turn.ended) return null;
    const bySegment = new Map(heard.map((h) => [h.segment, h]));
    for (const reply of turn.replies) {
      for (const [i, segment] of reply.segments.entries()) {
        const h = bySegment.get(segment) ?? { segment, heard: segment.played ? segment.text : '', whole: segment.played };
        if (h.whole) continue;
        if (reply !== last) return null;
        const rest = [wordsAfter(segment.text, wordCount(h.heard)), ...reply.segments.slice(i + 1).map((s) => s.text)].join(' ').trim();
        return rest === '' ? null : rest;
      }
    }
    return null;
  }

  /**
   * A false interruption: the barge-in's utterance was only backchannel words or nothing (noise). The agent
   * says the rest of the cut reply (synthesized again from the word it was cut in), as a turn of kind
   * `resume` that can itself be interrupted; the caller's words are not a turn.
   */
  private resumeReply(resume: Resumable, u: CommittedUtterance): void {
    const now = this.timers.now();
    this.noteFalseInterruption(u, resume.text);
    const turn = new AgentTurn('resume', now, null);
    turn.resumeCut = resume.cutText;
    turn.streamDone = true;
    this.turn = turn;
    this.cancelIdle();
    this.setState('thinking');
    const reply = this.openReply(turn, resume.nodeId);
    reply.text = resume.text;
    for (const piece of reply.chunker.push(resume.text)) this.speak(turn, reply, piece);
    this.closeReply(turn);
    void this.completeWhenHeard(turn);
  }

  /** A false interruption: the log line, the `agent_resumed` event and the run log's entry (returned). */
  private noteFalseInterruption(u: CommittedUtterance, resumed: string): RunLogEntry {
    this.logger.info({ caller_text: u.text, resumed }, 'false interruption: the agent resumes its reply');
    this.events.emit('agent_resumed', { atMs: this.timers.now(), text: resumed, callerText: u.text });
    const entry: RunLogEntry = {
      ts: this.clock.now().toISOString(),
      event: 'false_interruption',
      message: u.text.trim() === '' ? 'The caller\'s interruption was noise: the agent resumed its reply' : `The caller only said "${u.text.trim()}": the agent resumed its reply`,
      details: { caller_text: u.text, resumed_text: resumed },
    };
    this.turnLogs.push(entry);
    return entry;
  }

  /** Once `turn`'s speech was all synthesized and heard (and it is still the turn): completes it. */
  private async completeWhenHeard(turn: AgentTurn): Promise<void> {
    await turn.speaking;
    if (turn.aborted || turn.failed || this.turn !== turn) return;
    await this.waitPlayed();
    if (turn.aborted || this.turn !== turn) return;
    this.completeTurn(turn);
  }

  /** A reply being prepared (nothing audible yet) is dropped; the caller's next words restart it. */
  private cancelThinking(): void {
    const turn = this.turn;
    if (!turn || this.conversation.status === 'ended') return;
    if (turn.resumed) {
      // a muted turn resumed, not heard again yet: cut like one speaking (the engine keeps the words heard before)
      this.cutAgent(this.timers.now());
      return;
    }
    this.turn = null;
    turn.controller.abort();
    if (this.playout.busy) this.playout.clear(this.timers.now());
    this.flushIdleWaiters();
    // a resumed reply never heard leaves the engine's line as it was cut; any other reply is dropped
    if (turn.resumeCut === undefined && turn.replies.some((r) => r.text.trim() !== '')) this.conversation.agentInterrupted('');
    if (turn.user && (turn.kind === 'send' || turn.kind === 'retry')) this.pendingRestart = turn.user;
    this.setState('listening');
  }

  // -------------------------------------------------------------------------------------------------------
  // The agent's side

  private async runTurn(kind: TurnKind, start: (o: TurnOptions) => ConversationTurn, user: CommittedUtterance | null): Promise<void> {
    if (this.finishing) return;
    this.dropMuted(); // (judged before any new turn; this only makes sure the engine is free)
    const turn = new AgentTurn(kind, this.timers.now(), user);
    this.turn = turn;
    this.resumable = null;
    this.cancelIdle();
    this.setState('thinking');
    try {
      for await (const event of start({ signal: turn.controller.signal })) {
        if (turn.aborted) return;
        this.onConversationEvent(turn, event);
      }
      turn.streamDone = !turn.aborted;
    } catch (error) {
      if (turn.aborted || isAbortError(error)) return;
      const m = this.muted;
      if (turn.muted && m?.turn === turn) {
        // The engine dropped the failed reply: its line becomes the words heard, as on a cut. The judgement goes
        // on: a real interruption is answered as usual, a false one gets the reply again (resumeMuted).
        this.logger.warn({ err: describe(error) }, 'the model failed while its reply was muted by a barge-in');
        m.failed = true;
        if (m.hasLine) this.conversation.agentResumed('', m.lineHeard, true);
        return;
      }
      await this.turnFailed(turn, error);
      return;
    }
    if (turn.aborted) return;
    this.closeReply(turn);
    if (turn.muted) return; // the barge-in's judgement completes it (resumeMuted) or drops it
    await this.completeWhenHeard(turn);
  }

  private onConversationEvent(turn: AgentTurn, event: ConversationEvent): void {
    const atMs = this.timers.now();
    switch (event.type) {
      case 'delta': {
        if (turn.firstTokenAtMs === undefined) {
          turn.firstTokenAtMs = atMs;
          this.events.emit('first_token', { atMs });
        }
        const reply = turn.open ?? this.openReply(turn, event.node_id);
        reply.text += event.text;
        if (turn.muted) {
          this.mutedText(event.text.length);
          return;
        }
        if (turn.resumeLog?.details) turn.resumeLog.details.resumed_text = restText(turn);
        for (const piece of reply.chunker.push(event.text)) this.speak(turn, reply, piece);
        return;
      }
      case 'message': {
        if (event.message.role !== 'assistant') return;
        if (turn.open) {
          this.closeReply(turn);
          return;
        }
        // A line said without streaming (the greeting).
        const reply = this.openReply(turn, event.message.node_id);
        reply.text = event.message.text;
        for (const piece of reply.chunker.push(event.message.text)) this.speak(turn, reply, piece);
        this.closeReply(turn);
        return;
      }
      case 'transition':
        this.events.emit('node_entered', { node_id: event.to.id, node_name: event.to.name, edge_id: event.edge_id, atMs });
        return;
      case 'extracted':
        this.events.emit('variables_extracted', { node_id: event.node_id, values: event.values, atMs });
        return;
      case 'ended':
        turn.ended = { reason: event.reason, disposition: event.disposition };
        this.closing = true;
        return;
      default:
        return;
    }
  }

  private openReply(turn: AgentTurn, nodeId: string): Reply {
    const reply: Reply = { nodeId, text: '', segments: [], chunker: new SentenceChunker() };
    turn.replies.push(reply);
    turn.open = reply;
    return reply;
  }

  private closeReply(turn: AgentTurn): void {
    const reply = turn.open;
    if (!reply) return;
    turn.open = null;
    if (turn.muted) return; // its text is said whole if the turn resumes
    for (const piece of reply.chunker.flush()) this.speak(turn, reply, piece);
  }

  /** Queues one piece: its playout segment now (order), its synthesis after the previous piece's. */
  private speak(turn: AgentTurn, reply: Reply, text: string): void {
    const segment = this.playout.begin({ text, nodeId: reply.nodeId });
    reply.segments.push(segment);
    this.segmentReplies.set(segment, reply);
    const signal = turn.audioSignal;
    turn.speaking = turn.speaking.then(() => this.synthesize(turn, segment, signal));
  }

  /** `signal`: the turn's speech as it was when the piece was queued (aborted with the turn, or by a muted cut). */
  private async synthesize(turn: AgentTurn, segment: Segment, signal: AbortSignal): Promise<void> {
    if (signal.aborted || turn.failed) return;
    const requestedAt = this.timers.now();
    try {
      // the greeting's pieces were synthesized while the call rang: no TTS round trip before the first words
      const prepared = turn.kind === 'open' ? this.options.greeting?.take(segment.text) : null;
      const audio = (prepared ? await prepared.catch(() => null) : null) ?? await this.options.tts.synthesize({
        text: segment.text,
        ...this.options.ttsOptions,
        preferredFormat: SESSION_FORMAT,
        signal,
      });
      // converted lazily by the playout, as it plays (see Playout.write)
      const converter = toSessionAudio(audio.format);
      const source = { convert: (b: Uint8Array) => converter.convert(b), bytesPerMs: bytesPerMs(audio.format) };
      for await (const chunk of audio.chunks) {
        if (signal.aborted) return;
        if (turn.ttsFirstAudioMs === undefined) turn.ttsFirstAudioMs = this.timers.now() - requestedAt;
        this.playout.write(segment, chunk, source);
      }
      if (signal.aborted) return;
      this.playout.end(segment);
    } catch (error) {
      if (signal.aborted || isAbortError(error)) return;
      turn.failed = true;
      await this.fail('tts', error);
    }
  }

  private onFirstFrame(segment: Segment, atMs: number): void {
    this.speakingNodeId = segment.nodeId;
    const turn = this.turn;
    if (!turn || turn.firstAudioAtMs !== undefined || !turn.replies.some((r) => r.segments.includes(segment))) return;
    turn.firstAudioAtMs = atMs;
    this.setState('speaking');
    this.events.emit('first_audio', { atMs });
    const user = turn.user;
    if (!user || turn.latencyReported) return; // one entry per turn: a resumed one is not a new reply
    turn.latencyReported = true;
    const latency: TurnLatency = {
      end_of_speech_to_first_audio: Math.round(atMs - user.speechEndMs),
      stt: user.finalAtMs === undefined ? 0 : Math.max(0, Math.round(user.finalAtMs - user.stoppedAtMs)),
      llm_first_token: turn.firstTokenAtMs === undefined ? 0 : Math.round(turn.firstTokenAtMs - turn.startedAtMs),
      tts_first_audio: Math.round(turn.ttsFirstAudioMs ?? 0),
    };
    this.events.emit('turn_metrics', { latency, atMs });
    this.turnLogs.push({
      ts: this.clock.now().toISOString(),
      event: 'turn',
      message: `Agent replied ${latency.end_of_speech_to_first_audio} ms after the caller stopped speaking`,
      details: { ...latency },
    });
  }

  /** The turn's audio was all heard: transcript, then LISTENING (or the end the engine decided). */
  private completeTurn(turn: AgentTurn): void {
    this.turn = null;
    const texts = this.reportHeard(turn, [], this.timers.now());
    const last = turn.replies.at(-1);
    if (turn.resumeCut !== undefined && last) this.conversation.agentResumed(turn.resumeCut, texts.get(last) ?? '', false);
    if (turn.ended) {
      void this.finish({ reason: turn.ended.reason, disposition: turn.ended.disposition });
      return;
    }
    this.setState('listening');
    if (this.vad.speaking && !this.speechCounts && !this.closing) {
      // The caller started talking as the agent finished: that is their turn.
      this.speechCounts = true;
      this.endpointer.speechStarted(this.speechOnsetMs);
      return;
    }
    if (!this.endpointer.active) this.armIdle();
  }

  /**
   * Emits what the caller heard of each reply of `turn`: segments in `heard` (a clear) as reported, others
   * by whether their mark played. Returns the heard text per reply.
   */
  private reportHeard(turn: AgentTurn, heard: HeardSegment[], now: number): Map<Reply, string> {
    const bySegment = new Map(heard.map((h) => [h.segment, h]));
    const texts = new Map<Reply, string>();
    for (const reply of turn.replies) {
      const words: string[] = [];
      let interrupted = false;
      let startMs: number | undefined;
      let endMs = now;
      for (const segment of reply.segments) {
        const h = bySegment.get(segment) ?? { segment, heard: segment.played ? segment.text : '', whole: segment.played };
        if (h.heard !== '') {
          words.push(h.heard);
          startMs ??= segment.startPlayMs;
          endMs = this.playedAt.get(segment) ?? now;
        }
        if (!h.whole) {
          interrupted = true;
          if (h.heard !== '') endMs = now;
          break;
        }
      }
      const text = words.join(' ');
      texts.set(reply, text);
      for (const s of reply.segments) {
        this.segmentReplies.delete(s);
        this.playedAt.delete(s);
      }
      if (text !== '') {
        this.events.emit('agent_heard', { text, node_id: reply.nodeId, startMs: startMs ?? now, endMs, interrupted });
      }
    }
    return texts;
  }

  private async turnFailed(turn: AgentTurn, error: unknown): Promise<void> {
    if (this.turn === turn) this.turn = null;
    if (turn.kind !== 'retry' && this.conversation.status === 'active' && this.conversation.state.awaiting_reply) {
      this.logger.warn({ err: describe(error) }, 'the model failed; retrying the reply once');
      await turn.speaking;
      await this.runTurn('retry', (o) => this.conversation.retry(o), turn.user);
      return;
    }
    await this.fail('llm', error);
  }

  private waitPlayed(): Promise<void> {
    if (!this.playout.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private flushIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * The carrier's answering-machine verdict for this call (docs/voicemail.md), routed from its status webhook:
   * handed to the voicemail gate while it is undecided or waits for the greeting's end; ignored otherwise.
   */
  carrierAmd(result: AmdResult): void {
    this.amd?.carrier(result);
  }

  // -------------------------------------------------------------------------------------------------------
  // Answering-machine detection (docs/voicemail.md)

  /** The voicemail policy's plan: the conversation opens, or the call ends on the machine (after a message). */
  private async onVoicemailPlan(plan: VoicemailPlan): Promise<void> {
    if (this.finishing) return;
    const r = plan.result;
    this.turnLogs.push({
      ts: this.clock.now().toISOString(),
      event: 'answering_machine_detection',
      message: `Answering-machine detection: ${r?.verdict ?? 'unknown'}${r ? ` (${r.reason})` : ''}, ${plan.kind.replace('_', ' ')}`,
      details: { verdict: r?.verdict ?? 'unknown', source: r?.source ?? null, reason: r?.reason ?? null, decided_at_ms: r?.decidedAtMs === undefined ? null : Math.round(r.decidedAtMs - this.startMs), action: plan.kind },
    });
    if (plan.kind === 'converse') {
      this.holdTurns = false;
      // words said before the decision ("Hello?") are not a turn; speech going on now becomes one after the greeting
      if (!this.vad.speaking) this.endpointer.reset();
      void this.runTurn('open', (o) => this.conversation.open(o), null);
      return;
    }
    this.closing = true;
    this.endpointer.reset();
    this.cancelIdle();
    if (plan.kind === 'leave_message' && !(await this.leaveVoicemail(plan.message))) return;
    if (this.finishing) return;
    if (this.conversation.status === 'active') {
      try {
        await this.conversation.hangUp().collect();
      } catch (error) {
        this.logger.error({ err: describe(error) }, 'closing the conversation on a voicemail failed');
      }
    }
    await this.finish({ reason: 'voicemail', disposition: plan.disposition });
  }

  /** Speaks `text` to the machine (no barge-in: its audio is a recording) and waits until it played. False: the call ended meanwhile. */
  private async leaveVoicemail(text: string): Promise<boolean> {
    const turn = new AgentTurn('voicemail', this.timers.now(), null);
    this.turn = turn;
    this.setState('thinking');
    const reply = this.openReply(turn, this.conversation.node.id);
    reply.text = text;
    for (const piece of reply.chunker.push(text)) this.speak(turn, reply, piece);
    this.closeReply(turn);
    await turn.speaking;
    if (turn.aborted || turn.failed || this.finishing) return false;
    await this.waitPlayed();
    if (turn.aborted || this.finishing) return false;
    this.reportHeard(turn, [], this.timers.now());
    this.turn = null;
    return true;
  }

  // -------------------------------------------------------------------------------------------------------
  // Endings

  private armIdle(): void {
    this.cancelIdle();
    if (this.finishing || this.closing || this.holdTurns) return;
    this.idleTimer = this.timers.setTimeout(() => this.onIdle(), this.settings.userIdleTimeoutMs);
  }

  private cancelIdle(): void {
    this.idleTimer?.cancel();
    this.idleTimer = null;
  }

  private onIdle(): void {
    this.idleTimer = null;
    if (this.finishing || this.closing || this.turn || this.muted || this.endpointer.active || this.vad.speaking) return;
    this.logger.info({ timeout_ms: this.settings.userIdleTimeoutMs }, 'the caller is silent');
    void this.runTurn('idle', (o) => this.conversation.userIdle(o), null);
  }

  private async onMaxDuration(): Promise<void> {
    this.maxTimer = null;
    if (this.finishing) return;
    this.logger.info({ limit_ms: this.settings.maxCallDurationMs }, 'the call reached its time limit');
    this.dropMuted();
    if (this.turn || this.playout.busy) this.cutAgent(this.timers.now());
    this.closing = true;
    this.endpointer.reset();
    this.cancelIdle();
    if (this.conversation.status === 'ended') {
      await this.finish(this.engineOutcome());
      return;
    }
    this.graceTimer = this.timers.setTimeout(() => void this.cutGoodbyeShort(), this.settings.goodbyeGraceMs);
    await this.runTurn('max_duration', (o) => this.conversation.maxDurationReached({ ...o, goodbye: true }), null);
  }

  private async cutGoodbyeShort(): Promise<void> {
    this.graceTimer = null;
    if (this.finishing) return;
    this.logger.warn({ grace_ms: this.settings.goodbyeGraceMs }, 'the time-limit goodbye did not finish in time');
    if (this.turn || this.playout.busy) this.cutAgent(this.timers.now());
    if (this.conversation.status === 'active') await this.conversation.maxDurationReached({ goodbye: false }).collect();
    await this.finish(this.engineOutcome());
  }

  private async onChannelClosed(reason: string): Promise<void> {
    if (this.finishing) return;
    this.logger.info({ reason }, 'the caller hung up');
    this.closing = true;
    this.dropMuted();
    if (this.turn || this.playout.busy) this.cutAgent(this.timers.now());
    if (this.conversation.status === 'active') {
      try {
        await this.conversation.hangUp().collect();
      } catch (error) {
        this.logger.error({ err: describe(error) }, 'closing the conversation after a hang-up failed');
      }
    }
    await this.finish(this.engineOutcome());
  }

  /** A provider failed for good: the call ends `failed`. */
  private async fail(source: 'stt' | 'tts' | 'llm', error: unknown): Promise<void> {
    if (this.finishing) return;
    const message = `${source} failed: ${describe(error)}`;
    this.logger.error({ source, err: describe(error) }, 'a speech or model provider failed; ending the call');
    this.closing = true;
    this.dropMuted();
    if (this.turn || this.playout.busy) this.cutAgent(this.timers.now());
    if (this.conversation.status === 'active') {
      try {
        await this.conversation.hangUp().collect();
      } catch (err) {
        this.logger.error({ err: describe(err) }, 'closing the conversation after a failure failed');
      }
    }
    await this.finish({ reason: 'failed', disposition: 'failed', error: message });
  }

  private engineOutcome(): VoiceSessionOutcome {
    const state = this.conversation.state;
    return { reason: state.end_reason ?? 'hang_up', disposition: state.disposition ?? 'completed' };
  }

  /** Once: stop everything, hand the record and artifacts to the sink, THEN hang up. */
  private finish(outcome: VoiceSessionOutcome): Promise<void> {
    if (this.finishing) return this.finishing;
    this.finishing = (async () => {
      this.closing = true;
      for (const t of [this.idleTimer, this.maxTimer, this.graceTimer]) t?.cancel();
      this.amd?.close();
      this.options.greeting?.abort();
      this.vad.close();
      this.endpointer.reset();
      this.dropMuted();
      this.turn?.controller.abort();
      this.turn = null;
      this.playout.close();
      this.flushIdleWaiters();
      this.sessionController.abort();
      await this.stt?.close();
      const record = recordOf(this.conversation.state);
      if (outcome.reason === 'failed' || outcome.reason === 'voicemail') {
        record.disposition = outcome.disposition;
        record.gathered_context.mapped_call_disposition = outcome.disposition;
      }
      const artifacts = this.artifacts(record, outcome);
      let handedOver = false;
      try {
        handedOver = (await this.options.sink.onEnded(record, artifacts))?.handedOver === true;
      } catch (error) {
        this.logger.error({ err: describe(error) }, 'storing the call record failed');
      }
      // After an accepted transfer the carrier bridges the caller elsewhere: hanging up would end that call.
      if (!handedOver) await this.channel.hangUp(outcome.reason);
      this.conversation.dispose();
      this.setState('ended');
      this.events.emit('ended', { ...outcome, atMs: this.timers.now() });
      this.logger.info({ ...outcome }, 'the call ended');
      this.resolveEnded(outcome);
    })();
    return this.finishing;
  }

  private artifacts(record: ConversationRecord, outcome: VoiceSessionOutcome): VoiceSessionArtifacts {
    const logs = [...record.log.map(runLogEntryOf), ...this.turnLogs].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
    this.recorder.end(); // the rest of the recording goes to the sink's output before the sink finishes it
    return {
      transcript: this.transcript.artifact(),
      recordingDurationMs: this.recorder.durationMs,
      latency: this.metrics.entries.map((e) => ({ ...e.latency })),
      metrics: this.metrics.summary(),
      logs,
      outcome,
    };
  }

  private setState(state: VoiceState): void {
    if (this.state_ === state || this.state_ === 'ended') return;
    this.state_ = state;
    this.events.emit('state', { state, atMs: this.timers.now() });
  }
}

function recordOf(state: ConversationRecord): ConversationRecord {
  return {
    status: state.status,
    node_id: state.node_id,
    node_path: state.node_path,
    messages: state.messages,
    gathered_context: state.gathered_context,
    disposition: state.disposition,
    end_reason: state.end_reason,
    ...(state.transfer ? { transfer: state.transfer } : {}),
    usage: state.usage,
    log: state.log,
    started_at: state.started_at,
    ended_at: state.ended_at,
  };
}

/** Words heard before and after a cut, as one line. */
function joinWords(before: string | undefined, after: string): string {
  return before ? `${before} ${after}`.trim() : after;
}

/** What a resumed (or muted) turn has left to say, as one line. */
function restText(turn: { replies: Reply[] }): string {
  return turn.replies.map((r) => r.text.trim()).filter((t) => t !== '').join(' ');
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
