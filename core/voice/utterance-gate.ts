/**
 * What a per-utterance STT hears: the caller's speech, not the silence around it.
 *
 * A per-utterance recognizer (OpenAI's `/audio/transcriptions`, a self-hosted whisper) transcribes all the
 * audio it was given since the last `finalize`. Fed the whole stream, each upload carried the caller's silence
 * while the agent spoke (seconds of it): billed by the minute of audio, slower to upload and transcribe, and
 * silence is where whisper invents words ("Thank you."). The gate passes on audio only from a little before the
 * VAD's speech start (the start is judged after the fact, and soft onsets come before it) until its stop;
 * meanwhile it keeps the last `keepMs` of the stream, so the start can reach back.
 *
 * A streaming STT (Deepgram) keeps getting everything: its own endpointing and timestamps need the stream.
 * The bytes are the session's format (μ-law 8 kHz: 8 bytes a millisecond).
 */
export class UtteranceGate {
  private readonly ring: Uint8Array;
  /** Bytes in the ring, at most its length; the newest end at `end`. */
  private held = 0;
  private end = 0;
  private open = false;

  constructor(
    private readonly sink: (bytes: Uint8Array) => void,
    private readonly o: { bytesPerMs: number; keepMs: number; prerollMs: number },
  ) {
    this.ring = new Uint8Array(Math.ceil(o.keepMs * o.bytesPerMs));
  }

  /** Whether speech is being passed on (between `speechStarted` and `speechStopped`). */
  get passing(): boolean {
    return this.open;
  }

  /** The caller's audio, in stream order. */
  push(bytes: Uint8Array): void {
    if (this.open) {
      this.sink(bytes);
      return;
    }
    this.keep(bytes);
  }

  /**
   * The VAD heard speech start `agoMs` of stream before the newest pushed audio: what was kept from `prerollMs`
   * before that on is passed on (at most `keepMs`), then everything until `speechStopped`.
   */
  speechStarted(agoMs: number): void {
    if (this.open) return;
    this.open = true;
    const want = Math.min(this.held, Math.ceil(Math.max(0, agoMs + this.o.prerollMs) * this.o.bytesPerMs));
    if (want > 0) {
      const out = new Uint8Array(want);
      const start = (this.end - want + this.ring.length) % this.ring.length;
      const first = Math.min(want, this.ring.length - start);
      out.set(this.ring.subarray(start, start + first), 0);
      if (first < want) out.set(this.ring.subarray(0, want - first), first);
      this.sink(out);
    }
    this.held = 0;
  }

  /** The VAD heard the speech stop (after its hangover): nothing more is passed on until the next start. */
  speechStopped(): void {
    this.open = false;
    this.held = 0;
  }

  private keep(bytes: Uint8Array): void {
    const cap = this.ring.length;
    if (cap === 0) return;
    const src = bytes.length > cap ? bytes.subarray(bytes.length - cap) : bytes;
    const first = Math.min(src.length, cap - this.end);
    this.ring.set(src.subarray(0, first), this.end);
    if (first < src.length) this.ring.set(src.subarray(first), 0);
    this.end = (this.end + src.length) % cap;
    this.held = Math.min(cap, this.held + src.length);
  }
}
