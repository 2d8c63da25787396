import type { AudioFormat } from '../voice/audio-format.js';

/**
 * Streaming speech synthesis (docs/voice.md). Adapters: elevenlabs (stream-input WebSocket, `ulaw_8000`),
 * deepgram (Aura), openai (`/audio/speech`, PCM 24 kHz), and in tests a fake. Every adapter runs the shared
 * contract suite test/contracts/text-to-speech.contract.ts.
 */
export const TextToSpeech = Symbol.for('callplane.TextToSpeech');

export interface TtsRequest {
  /** What to say: one sentence or clause (the pipeline chunks the model's text). */
  text: string;
  voice?: string;
  model?: string;
  /** The format the caller wants; an adapter that cannot produce it returns its own and says so in `format`. */
  preferredFormat: AudioFormat;
  /** Aborting stops synthesis promptly: the iterator ends with an `AbortError`. */
  signal?: AbortSignal;
}

export interface TtsAudio {
  /** The format of every chunk of this synthesis. */
  format: AudioFormat;
  /** Audio chunks as they arrive (any size; the pacer frames them). */
  chunks: AsyncIterable<Uint8Array>;
}

export interface TextToSpeech {
  /**
   * Starts synthesizing `text`. Resolves once the provider accepted the request (the format is known).
   * Throws `ProviderApiError` when the provider refuses or fails; an `AbortError` on abort. Not idempotent.
   */
  synthesize(request: TtsRequest): Promise<TtsAudio>;
}
