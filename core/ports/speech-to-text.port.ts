import type { AudioFormat } from '../voice/audio-format.js';

/**
 * Streaming speech recognition for one call (docs/voice.md). Adapters: deepgram (live WebSocket), openai
 * (`/audio/transcriptions` per endpointed utterance; also whisper servers), and in tests a scripted fake.
 * Every adapter runs the shared contract suite test/contracts/speech-to-text.contract.ts.
 */
export const SpeechToText = Symbol.for('callplane.SpeechToText');

export type SttEvent =
  /** A hypothesis that may still change. */
  | { type: 'interim'; text: string }
  /** Settled text of a stretch of speech. `speechFinal`: the provider judges the utterance complete. */
  | { type: 'final'; text: string; speechFinal: boolean }
  /** The provider heard speech begin (optional; the VAD is the primary source). */
  | { type: 'speech_started' }
  /** The provider's end-of-utterance signal (Deepgram `UtteranceEnd`). */
  | { type: 'utterance_end' };

export interface SttStreamOptions {
  /** The format of the audio that will be pushed (μ-law 8 kHz from most carriers). */
  format: AudioFormat;
  model?: string;
  language?: string;
  signal?: AbortSignal;
}

/** One open recognition stream. */
export interface SttStream {
  /**
   * True when the stream sends `interim` hypotheses while the caller is still speaking (Deepgram); false or
   * absent when text comes only after `finalize` (a per-utterance transcription). The barge-in rule waits
   * briefly for the caller's first words only when they can come (docs/voice.md "Turn-taking, barge-in and endings").
   */
  readonly interimResults?: boolean;
  /** Queues audio in the stream's format. Never throws; audio pushed after `close` is dropped. */
  push(audio: Uint8Array): void;
  /**
   * The caller stopped speaking (VAD stop): the adapter flushes what it holds (Deepgram `Finalize`; a
   * per-utterance adapter transcribes the buffered utterance now). Idempotent.
   */
  finalize(): void;
  /** Ends the stream and releases the connection. Idempotent; never throws. */
  close(): Promise<void>;
  /**
   * Recognition results in order. Ends after `close`. Throws `ProviderApiError` when the provider fails for
   * good (after the adapter's own reconnect attempts).
   */
  events: AsyncIterable<SttEvent>;
}

export interface SpeechToText {
  /** Opens a stream. Throws `ProviderApiError` when the provider refuses the connection. */
  open(options: SttStreamOptions): Promise<SttStream>;
}
