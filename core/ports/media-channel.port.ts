import type { AudioFormat } from '../voice/audio-format.js';

/**
 * A call's two-way audio as the voice session sees it, whatever the carrier (docs/voice.md). Each provider's
 * framing parses inbound messages and serializes outbound ones (audio, clear, mark, hang-up); where a carrier
 * has no marks, the channel emulates them from its own playout clock.
 */
export interface MediaChannel {
  /** The format of audio arriving from the caller and the format `sendAudio` expects. */
  readonly inFormat: AudioFormat;
  readonly outFormat: AudioFormat;
  /**
   * Sends agent audio (a multiple of 20 ms in `outFormat`). Never throws; dropped once the channel closed.
   */
  sendAudio(audio: Uint8Array): void;
  /** Asks to be told (`onMark`) when everything sent so far has been played. */
  sendMark(name: string): void;
  /** Drops audio the carrier buffered but has not played (barge-in). Pending marks are reported as cleared. */
  clear(): void;
  /** Ends the call (a carrier REST call or closing the stream). Idempotent; never throws. */
  hangUp(reason: string): Promise<void>;
  onAudio(listener: (audio: Uint8Array) => void): void;
  onDtmf(listener: (digit: string) => void): void;
  /** `played` false: the mark was cleared before its audio played. */
  onMark(listener: (name: string, played: boolean) => void): void;
  onClose(listener: (reason: string) => void): void;
}
