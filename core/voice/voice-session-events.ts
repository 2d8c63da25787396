/**
 * Everything observable about a call's voice session is one of these events (docs/voice.md "Turn-taking,
 * barge-in and endings"); the transcript, the recording, the run's metrics and logs subscribe to them rather
 * than reaching into the pipeline. Times are on the session's `Timers` clock (milliseconds).
 */
import type { ConversationEndReason } from '../ports/conversation-record.port.js';

export type VoiceState = 'listening' | 'thinking' | 'speaking' | 'ended';

/** One agent reply's latency breakdown (ms), as the run's `turn` log entries carry it (API.md 13). */
export interface TurnLatency {
  /** End of the caller's speech → the reply's first audio frame sent to the carrier. */
  end_of_speech_to_first_audio: number;
  /** VAD stop → the final transcript (0 when the turn committed without one). */
  stt: number;
  /** Turn committed → the model's first text. */
  llm_first_token: number;
  /** First sentence sent to TTS → its first audio. */
  tts_first_audio: number;
}

/** Why a voice session ended: the engine's reasons, plus a provider that failed for good. */
/** `voicemail`: answering-machine detection ended the call (docs/voicemail.md). */
export type VoiceEndReason = ConversationEndReason | 'failed' | 'voicemail';

export interface VoiceSessionEventMap {
  state: { state: VoiceState; atMs: number };
  /**
   * Inbound caller audio as 8 kHz PCM, as it arrived. `pcm` (here and in `agent_audio`) is a buffer the session
   * reuses for the next frame: valid while the listener runs; copy what you keep.
   */
  caller_audio: { pcm: Int16Array; atMs: number };
  /** Agent audio as 8 kHz PCM, at pacing time; `playAtMs` is when it plays. */
  agent_audio: { pcm: Int16Array; playAtMs: number };
  /** Agent audio after `atMs` was cleared from the carrier (never played). */
  agent_audio_cleared: { atMs: number };
  speech_started: { atMs: number };
  speech_stopped: { atMs: number; endOfSpeechMs: number };
  transcript_interim: { text: string; atMs: number };
  transcript_final: { text: string; atMs: number };
  /** A caller turn went to the engine. `merged`: it continues the previous one (speech over a reply being prepared). */
  user_turn: { text: string; startMs: number; endMs: number; node_id: string; merged: boolean };
  node_entered: { node_id: string; node_name: string; edge_id?: string; atMs: number };
  variables_extracted: { node_id: string; values: Record<string, unknown>; atMs: number };
  first_token: { atMs: number };
  first_audio: { atMs: number };
  /** What the caller heard of one agent reply: whole, or cut by a barge-in (`interrupted`). */
  agent_heard: { text: string; node_id: string; startMs: number; endMs: number; interrupted: boolean };
  /** A barge-in: `reactionMs` from speech onset to the carrier's clear. */
  interruption: { atMs: number; reactionMs: number; heard: string };
  /**
   * A false interruption: the caller's utterance after a barge-in was only backchannel words (`callerText`) or
   * nothing; the agent says `text`, the rest of the cut reply (as known then: a reply the model still streams goes on).
   */
  agent_resumed: { atMs: number; text: string; callerText: string };
  turn_metrics: { latency: TurnLatency; atMs: number };
  ended: { reason: VoiceEndReason; disposition: string; atMs: number; error?: string };
}

type Listener<T> = (payload: T) => void;

/**
 * A small typed event emitter. A listener that throws is isolated: the others still run. An emit calls the
 * listeners registered when it began: a listener added or removed meanwhile takes effect from the next emit.
 * Listener lists are copied on change (`on` and its unsubscribe), never in `emit`, which runs for every 20 ms
 * frame of both legs (`caller_audio`, `agent_audio`).
 */
export class VoiceSessionEvents {
  private readonly listeners = new Map<keyof VoiceSessionEventMap, ReadonlyArray<Listener<never>>>();
  private readonly onListenerError: (error: unknown, event: string) => void;

  constructor(onListenerError: (error: unknown, event: string) => void = () => undefined) {
    this.onListenerError = onListenerError;
  }

  on<K extends keyof VoiceSessionEventMap>(event: K, listener: Listener<VoiceSessionEventMap[K]>): () => void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener as Listener<never>]);
    return () => {
      const list = this.listeners.get(event) ?? [];
      const at = list.indexOf(listener as Listener<never>);
      if (at >= 0) this.listeners.set(event, [...list.slice(0, at), ...list.slice(at + 1)]);
    };
  }

  emit<K extends keyof VoiceSessionEventMap>(event: K, payload: VoiceSessionEventMap[K]): void {
    const list = this.listeners.get(event);
    if (!list) return;
    // never changed once set: `on` and unsubscribing replace the list
    for (const listener of list) {
      try {
        (listener as Listener<VoiceSessionEventMap[K]>)(payload);
      } catch (error) {
        this.onListenerError(error, event);
      }
    }
  }
}
