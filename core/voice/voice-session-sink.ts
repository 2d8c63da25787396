/**
 * What a finished call's voice session hands to the run (docs/voice.md "Turn-taking, barge-in and endings"):
 * the conversation record and the artifacts the run stores. The session calls `onEnded` once, BEFORE it
 * hangs up, and waits for it (a sink that throws is logged; the call still hangs up). Implemented by the
 * run integration (transcript and recording to object storage, run fields, logs, metrics).
 */
import type { TranscriptTurn } from '../conversation/conversation-record.js';
import type { ConversationRecord } from '../ports/conversation-record.port.js';
import type { RunLogEntry } from '../runs/run.js';
import type { RecordingOutput } from './call-recorder.js';
import type { VoiceMetrics } from './turn-metrics.js';
import type { TurnLatency, VoiceEndReason } from './voice-session-events.js';

export interface VoiceSessionOutcome {
  reason: VoiceEndReason;
  /**
   * The run's disposition: the engine's (endCall node's, `user_idle`, `max_duration`, `completed`), or
   * `failed` when a provider (STT, TTS, model) failed for good; the record's disposition says the same.
   */
  disposition: string;
  /** Which provider failed and its message (never a secret). */
  error?: string;
}

export interface VoiceSessionArtifacts {
  /** Stored behind `transcript_url`: only what the caller heard of the agent. */
  transcript: { turns: TranscriptTurn[] };
  /** Length of the stereo recording (streamed to the sink's `recording` output while the call lasted). */
  recordingDurationMs: number;
  /** One entry per agent reply to the caller (API.md 13). */
  latency: TurnLatency[];
  metrics: VoiceMetrics;
  /** `node_entered` and `variables_extracted` (from the record) and one `turn` entry per reply, in time order. */
  logs: RunLogEntry[];
  outcome: VoiceSessionOutcome;
}

/**
 * What the sink decided about the line. `handedOver`: the caller now talks to someone else (a transfer the
 * carrier accepted), so the session must not hang up; it only stops its own media side.
 */
export interface VoiceSessionEndResult {
  handedOver?: boolean;
}

export interface VoiceSessionSink {
  /**
   * Where the call's stereo recording streams while the call lasts (docs/voice.md "Recordings of talking
   * calls"): the WAV's data chunk (16-bit 8 kHz interleaved frames, caller left, agent right) in order, in
   * pieces, the last of them written before `onEnded`. The sink makes the WAV of it (behind `recording_url`).
   */
  readonly recording: RecordingOutput;
  /**
   * Stores the call's record and artifacts (and performs the endCall node's transfer, if any). May throw
   * (logged by the session, which then hangs up); should be idempotent.
   */
  onEnded(record: ConversationRecord, artifacts: VoiceSessionArtifacts): Promise<void | VoiceSessionEndResult>;
}
