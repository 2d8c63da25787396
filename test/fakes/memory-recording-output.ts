import type { RecordingOutput } from '../../core/voice/call-recorder.js';
import { RECORDING_SAMPLE_RATE } from '../../core/voice/call-recorder.js';
import { PCM_WAV_HEADER_BYTES, pcmWavHeader } from '../../core/voice/wav.js';

/**
 * A voice session's recording output that keeps every piece in memory (short test calls only) and builds the
 * stereo WAV the run's sink would store from them (core/calls/run-voice-sink.ts writes the same header).
 */
export class MemoryRecordingOutput implements RecordingOutput {
  readonly chunks: Uint8Array[] = [];

  write(chunk: Uint8Array): void {
    this.chunks.push(chunk);
  }

  get bytes(): number {
    return this.chunks.reduce((n, c) => n + c.length, 0);
  }

  wav(): Uint8Array {
    const size = this.bytes;
    const file = new Uint8Array(PCM_WAV_HEADER_BYTES + size);
    file.set(pcmWavHeader(size, RECORDING_SAMPLE_RATE, 2));
    let at = PCM_WAV_HEADER_BYTES;
    for (const c of this.chunks) {
      file.set(c, at);
      at += c.length;
    }
    return file;
  }
}
