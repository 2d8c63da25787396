/**
 * Speech synthesized before it is needed (docs/voice.md "First words"): a call's greeting is synthesized while
 * the call rings, so the first frame can go out the moment the media stream starts instead of a TTS round trip
 * later. The text is cut into the pieces the voice session will ask for (`speechPieces`: the same chunking as a
 * spoken line), each piece synthesized in order, its audio kept as it arrives. The session `take`s a piece by
 * its text when it is about to synthesize it: a piece whose synthesis failed, or a text that differs (a greeting
 * rendered differently at answer time), is not taken, and the session synthesizes it as usual.
 * Pure: its only I/O is the TextToSpeech port.
 */
import type { TextToSpeech, TtsAudio } from '../ports/text-to-speech.port.js';
import type { AudioFormat } from './audio-format.js';
import { SentenceChunker } from './sentence-chunker.js';

/** The pieces the voice session synthesizes for a line said whole (a greeting): its chunker pushed once, then flushed. */
export function speechPieces(text: string): string[] {
  const chunker = new SentenceChunker();
  return [...chunker.push(text), ...chunker.flush()];
}

interface Piece {
  readonly text: string;
  format: AudioFormat | null;
  /** Audio arrived and not yet handed to the session: a chunk is let go of once handed over (played audio is not kept). */
  readonly chunks: Uint8Array[];
  done: boolean;
  error: unknown;
  /** Resolves when `format`, a chunk, the end or an error arrived. */
  wake: (() => void) | null;
  taken: boolean;
}

export interface PreparedSpeechOptions {
  voice?: string;
  model?: string;
  preferredFormat: AudioFormat;
}

export class PreparedSpeech {
  private readonly pieces: Piece[];
  private readonly controller = new AbortController();
  /** Settles once every piece was synthesized or failed (tests; never rejects). */
  readonly settled: Promise<void>;

  private constructor(
    private readonly tts: TextToSpeech,
    texts: string[],
    private readonly options: PreparedSpeechOptions,
  ) {
    this.pieces = texts.map((text) => ({ text, format: null, chunks: [], done: false, error: undefined, wake: null, taken: false }));
    this.settled = this.run();
  }

  /** Starts synthesizing `text`'s pieces (in order, one at a time, as the session would). */
  static start(tts: TextToSpeech, text: string, options: PreparedSpeechOptions): PreparedSpeech {
    return new PreparedSpeech(tts, speechPieces(text), options);
  }

  /** The pieces' texts, in order. */
  get texts(): string[] {
    return this.pieces.map((p) => p.text);
  }

  /**
   * The audio of the first piece not yet taken, when its text is `text` and its synthesis has not failed (its
   * format known or still coming); null otherwise (synthesize it live). Each piece is taken once.
   */
  take(text: string): Promise<TtsAudio> | null {
    const piece = this.pieces.find((p) => !p.taken);
    if (!piece || piece.text !== text || piece.error !== undefined || this.controller.signal.aborted) return null;
    piece.taken = true;
    return this.audioOf(piece);
  }

  /** Stops what is still being synthesized; pieces not taken are dropped (their audio let go of). Idempotent. */
  abort(): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort();
    for (const p of this.pieces) {
      if (!p.done && p.error === undefined) p.error = new Error('prepared speech aborted');
      if (!p.taken) p.chunks.length = 0;
      this.notify(p);
    }
  }

  /** Bytes of audio held: synthesized and not yet handed over (a call keeps its greeting's object all call long). */
  get heldBytes(): number {
    let n = 0;
    for (const p of this.pieces) for (const c of p.chunks) n += c.length;
    return n;
  }

  private async run(): Promise<void> {
    for (const piece of this.pieces) {
      if (this.controller.signal.aborted) return;
      try {
        const audio = await this.tts.synthesize({
          text: piece.text,
          ...(this.options.voice ? { voice: this.options.voice } : {}),
          ...(this.options.model ? { model: this.options.model } : {}),
          preferredFormat: this.options.preferredFormat,
          signal: this.controller.signal,
        });
        piece.format = audio.format;
        this.notify(piece);
        for await (const chunk of audio.chunks) {
          piece.chunks.push(chunk);
          this.notify(piece);
        }
        piece.done = true;
        this.notify(piece);
      } catch (error) {
        if (piece.error === undefined) piece.error = error;
        this.notify(piece);
        // the pieces after a failed one are synthesized live (in order after it)
        for (const p of this.pieces) if (!p.done && p.error === undefined) p.error = error;
        return;
      }
    }
  }

  private notify(piece: Piece): void {
    const wake = piece.wake;
    piece.wake = null;
    wake?.();
  }

  private changed(piece: Piece): Promise<void> {
    return new Promise((resolve) => (piece.wake = resolve));
  }

  private async audioOf(piece: Piece): Promise<TtsAudio> {
    while (piece.format === null) {
      if (piece.error !== undefined) throw piece.error;
      await this.changed(piece);
    }
    const format = piece.format;
    // a piece is taken once: its one reader takes each chunk out, so the audio is not held after it was handed over
    const chunks = async function* (this: PreparedSpeech): AsyncGenerator<Uint8Array> {
      for (;;) {
        while (piece.chunks.length > 0) yield piece.chunks.shift()!;
        if (piece.done) return;
        if (piece.error !== undefined) throw piece.error;
        await this.changed(piece);
      }
    }.call(this);
    return { format, chunks };
  }
}
