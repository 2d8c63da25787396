import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../ports/logger.port.js';
import type { ConversationRecord } from '../ports/conversation-record.port.js';
import type { RunStatusUpdate } from '../ports/run.repository.port.js';
import type { OutboundEvent } from '../ports/event-publisher.port.js';
import type { Run } from '../runs/run.js';
import type { TransferCallRequest } from '../ports/call-transfer.port.js';
import type { ObjectBody, StoredObject } from '../ports/object-store.port.js';
import type { VoiceSessionArtifacts } from '../voice/voice-session-sink.js';
import { readWav } from '../voice/wav.js';
import { callRecordingKeyOf, callRecordingPartKeyOf, MAX_CALL_RECORDING_QUEUE_BYTES, RunVoiceSink, transcriptKeyOf } from './run-voice-sink.js';

const RUN = { organizationId: 7, id: 42 };
const NOW = new Date('2026-03-01T10:00:00.000Z');

function record(over: Partial<ConversationRecord> = {}): ConversationRecord {
  return {
    status: 'ended', node_id: 'end', node_path: ['start', 'end'], messages: [],
    gathered_context: { will_attend: true, mapped_call_disposition: 'appointment_confirmed' }, disposition: 'appointment_confirmed', end_reason: 'end_node',
    usage: { prompt_tokens: 120, completion_tokens: 30 }, log: [], started_at: NOW.toISOString(), ended_at: NOW.toISOString(), ...over,
  };
}

function artifacts(over: Partial<VoiceSessionArtifacts> = {}): VoiceSessionArtifacts {
  return {
    transcript: { turns: [{ role: 'assistant', text: 'Hi', node_id: 'start', start_ms: 0, end_ms: 400, interrupted: false }] as never },
    recordingDurationMs: 1000,
    latency: [{ end_of_speech_to_first_audio: 640, stt: 90, llm_first_token: 300, tts_first_audio: 80 }],
    metrics: { turns: 1, latency_p50_ms: 640, latency_p95_ms: 640, interruptions: 0 },
    logs: [
      { ts: '2026-03-01T10:00:00.000Z', event: 'node_entered', details: { node_id: 'start' } },
      { ts: '2026-03-01T10:00:01.000Z', event: 'turn', details: { end_of_speech_to_first_audio: 640 } },
    ],
    outcome: { reason: 'end_node', disposition: 'appointment_confirmed' },
    ...over,
  };
}

async function bytesOf(body: ObjectBody): Promise<Uint8Array> {
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  const parts: Uint8Array[] = [];
  for await (const c of body) parts.push(typeof c === 'string' ? new TextEncoder().encode(c) : c);
  return Buffer.concat(parts);
}

function fakes() {
  const calls: string[] = [];
  const attached: Array<Record<string, unknown>> = [];
  const statuses: RunStatusUpdate[] = [];
  const stored = new Map<string, Uint8Array>();
  const transfers: TransferCallRequest[] = [];
  return {
    calls, attached, statuses, stored, transfers,
    deps: {
      runs: {
        attachArtifacts: async (_o: number, _r: number, patch: Record<string, unknown>) => {
          calls.push('attach');
          attached.push(patch);
          return null;
        },
        applyStatus: async (_o: number, _r: number, update: RunStatusUpdate) => {
          calls.push('status');
          statuses.push(update);
          return { applied: true, run: null };
        },
      },
      store: {
        put: async (key: string, body: ObjectBody): Promise<StoredObject> => {
          calls.push(`put ${key}`);
          const bytes = await bytesOf(body);
          stored.set(key, bytes);
          return { key, size: bytes.length, contentType: '' };
        },
        get: async (key: string) => {
          const bytes = stored.get(key);
          return bytes ? (async function* () { yield bytes; })() : null;
        },
        delete: async (key: string) => {
          calls.push(`delete ${key}`);
          stored.delete(key);
        },
      },
      clock: { now: () => NOW },
      log: silentLogger,
      transfer: {
        transfer: async (r: TransferCallRequest) => {
          calls.push('transfer');
          transfers.push(r);
          return { disposition: 'transferred' as const, to: r.to };
        },
      },
    },
  };
}

/** `frames` interleaved stereo frames of (left, right). */
function stereo(frames: number, left: number, right: number): Uint8Array {
  const pcm = new Int16Array(frames * 2);
  for (let i = 0; i < frames; i++) [pcm[2 * i], pcm[2 * i + 1]] = [left, right];
  return new Uint8Array(pcm.buffer);
}

describe('RunVoiceSink', () => {
  it('streams the recorder\'s pieces into a part object while the call lasts, then writes call.wav (header with the final sizes, then the part) and deletes the part', async () => {
    const f = fakes();
    const sink = new RunVoiceSink(RUN, f.deps);
    sink.recording.write(stereo(4000, 1, 2));
    sink.recording.write(stereo(4000, 5, -5));
    await new Promise((r) => setImmediate(r));
    expect(f.calls).toEqual([`put ${callRecordingPartKeyOf(RUN)}`]); // the part's put is under way before the call ends
    await sink.onEnded(record(), artifacts());
    expect(f.stored.has(callRecordingPartKeyOf(RUN))).toBe(false);
    const wav = readWav(f.stored.get(callRecordingKeyOf(RUN))!);
    expect([wav.channels, wav.sampleRate, wav.bitsPerSample, wav.samples.length]).toEqual([2, 8000, 16, 16_000]);
    expect([wav.samples[0], wav.samples[1], wav.samples[7998], wav.samples[7999], wav.samples[8000], wav.samples[8001]]).toEqual([1, 2, 1, 2, 5, -5]);
    expect(f.attached[0]).toMatchObject({ recordingKey: 'runs/7/42/call.wav' });
  });

  it('a store that fails mid-call loses the recording, never the call: the run gets no recording_url and the rest is stored', async () => {
    const f = fakes();
    const put = f.deps.store.put;
    f.deps.store.put = async (key: string, body: ObjectBody) => {
      if (key === callRecordingPartKeyOf(RUN)) {
        for await (const _ of body as AsyncIterable<Uint8Array>) throw new Error('disk full');
      }
      return put(key, body);
    };
    const sink = new RunVoiceSink(RUN, f.deps);
    sink.recording.write(stereo(4000, 1, 2));
    await new Promise((r) => setImmediate(r));
    expect(() => sink.recording.write(stereo(4000, 1, 2))).not.toThrow();
    await sink.onEnded(record(), artifacts());
    expect(f.attached[0]).not.toHaveProperty('recordingKey');
    expect(f.attached[0]).toMatchObject({ transcriptKey: 'runs/7/42/transcript.json' });
    expect(f.stored.has(callRecordingKeyOf(RUN))).toBe(false);
  });

  it('a store that falls behind keeps at most its queue bound waiting, and the run gets what was written before', async () => {
    const f = fakes();
    const put = f.deps.store.put;
    let release!: () => void;
    const stalled = new Promise<void>((r) => (release = r));
    f.deps.store.put = async (key: string, body: ObjectBody) => {
      if (key !== callRecordingPartKeyOf(RUN)) return put(key, body);
      const parts: Uint8Array[] = [];
      for await (const c of body as AsyncIterable<Uint8Array>) {
        parts.push(c);
        if (parts.length === 1) await stalled; // the store stalls after the first piece
      }
      return put(key, Buffer.concat(parts));
    };
    const sink = new RunVoiceSink(RUN, f.deps);
    const piece = stereo(4000, 1, 2); // 16 kB: what the recorder hands on every 500 ms
    for (let i = 0; i < 200; i++) {
      sink.recording.write(piece);
      if (i === 0) await new Promise((r) => setImmediate(r));
    }
    release();
    await sink.onEnded(record(), artifacts());
    const wav = readWav(f.stored.get(callRecordingKeyOf(RUN))!);
    // the first piece (taken by the store) and the queue's worth after it; the rest of the 200 was dropped
    expect(wav.data.length).toBe(piece.length + Math.floor(MAX_CALL_RECORDING_QUEUE_BYTES / piece.length) * piece.length);
  });

  it('applies context, disposition and tokens first (a final run takes no more), then stores the transcript and the stereo recording, attaches them with the metrics and appends every log entry', async () => {
    const f = fakes();
    const sink = new RunVoiceSink(RUN, f.deps);
    sink.recording.write(stereo(800, 3, -3));
    await sink.onEnded(record(), artifacts());
    expect(f.calls).toEqual([`put ${callRecordingPartKeyOf(RUN)}`, 'status', `put ${transcriptKeyOf(RUN)}`, `put ${callRecordingKeyOf(RUN)}`, `delete ${callRecordingPartKeyOf(RUN)}`, 'attach']);
    expect(JSON.parse(new TextDecoder().decode(f.stored.get('runs/7/42/transcript.json')))).toEqual({ turns: [expect.objectContaining({ text: 'Hi' })] });
    expect(f.attached[0]).toMatchObject({
      transcriptKey: 'runs/7/42/transcript.json', recordingKey: 'runs/7/42/call.wav',
      annotations: { voice_metrics: { turns: 1, latency_p50_ms: 640, interruptions: 0, recording_duration_ms: 1000, end_reason: 'end_node', entries: [{ turn: 1, end_of_speech_to_first_audio: 640, stt: 90, llm_first_token: 300, tts_first_audio: 80 }] } },
    });
    expect((f.attached[0]!.logs as Array<{ event: string }>).map((l) => l.event)).toEqual(['node_entered', 'turn', 'conversation_ended']);
    expect(f.statuses[0]).toMatchObject({
      status: 'in_progress', conversation: true, disposition: 'appointment_confirmed',
      gatheredContext: { will_attend: true, mapped_call_disposition: 'appointment_confirmed' }, costInfo: { service_token_usage: 150 },
    });
  });

  it('a provider that failed for good ends the run\'s disposition `failed` with the error in the log', async () => {
    const f = fakes();
    await new RunVoiceSink(RUN, f.deps).onEnded(record({ disposition: null, end_reason: null }), artifacts({ outcome: { reason: 'failed', disposition: 'failed', error: 'tts failed: 500' } }));
    expect(f.statuses[0]).toMatchObject({ disposition: 'failed', gatheredContext: { mapped_call_disposition: 'failed' } });
    expect((f.attached.at(-1)!.logs as unknown[]).at(-1)).toMatchObject({ event: 'conversation_ended', details: { error: 'tts failed: 500' } });
  });

  it('an endCall with transfer_to hands the caller over after the record is stored; a failing step does not stop the others', async () => {
    const f = fakes();
    f.deps.store.put = async () => {
      throw new Error('disk full');
    };
    const result = await new RunVoiceSink(RUN, f.deps).onEnded(record({ disposition: 'transferred', transfer: { to: '+15551234567', valid: true } }), artifacts());
    expect(result).toEqual({ handedOver: true });
    expect(f.calls[0]).toBe('status');
    expect(f.calls.at(-2)).toBe('attach');
    expect(f.calls.at(-1)).toBe('transfer');
    expect(f.transfers).toEqual([{ organizationId: 7, runId: 42, to: '+15551234567' }]);
    expect(f.attached[0]).not.toHaveProperty('recordingKey');
  });

  it('no transfer when the caller hung up before the endCall node\'s last words', async () => {
    const f = fakes();
    expect(await new RunVoiceSink(RUN, f.deps).onEnded(record({ end_reason: 'hang_up', transfer: { to: '+15551234567', valid: true } }), artifacts())).toEqual({ handedOver: false });
    expect(f.transfers).toEqual([]);
  });

  it('a transfer the carrier refused leaves the line to be hung up', async () => {
    const f = fakes();
    f.deps.transfer.transfer = async (r) => ({ disposition: 'transfer_failed' as const, to: r.to, reason: 'target_rejected' }) as never;
    expect(await new RunVoiceSink(RUN, f.deps).onEnded(record({ disposition: 'transferred', transfer: { to: '+15551234567', valid: true } }), artifacts())).toEqual({ handedOver: false });
  });

  it('publishes call.analyzed once the run took the conversation record, with the marker stored by that same write and the run with its artifacts', async () => {
    const f = fakes();
    const events: OutboundEvent[] = [];
    const run = { id: 42, organizationId: 7, gatheredContext: { will_attend: true }, transcriptKey: null } as unknown as Run;
    f.deps.runs.applyStatus = async (_o: number, _r: number, update: RunStatusUpdate) => {
      f.statuses.push(update);
      return { applied: true, run: run as unknown as null };
    };
    f.deps.runs.attachArtifacts = async (_o: number, _r: number, patch: Record<string, unknown>) => {
      f.attached.push(patch);
      return { ...run, transcriptKey: patch.transcriptKey ?? null } as unknown as null;
    };
    const deps = { ...f.deps, events: { publish: async (e: OutboundEvent) => { events.push(e); } } };
    await new RunVoiceSink(RUN, deps).onEnded(record(), artifacts());
    const marker = { key: 'run:42:call.analyzed', type: 'call.analyzed', at: NOW };
    expect(f.statuses[0]).toMatchObject({ conversation: true, event: marker });
    expect(events).toEqual([{ type: 'call.analyzed', organizationId: 7, run: { ...run, transcriptKey: transcriptKeyOf(RUN) }, pending: marker }]);
  });

  it('publishes nothing when the run already had its conversation record, or without webhooks', async () => {
    const f = fakes();
    const events: OutboundEvent[] = [];
    f.deps.runs.applyStatus = async (_o: number, _r: number, update: RunStatusUpdate) => {
      f.statuses.push(update);
      return { applied: false, run: { id: 42 } as unknown as null };
    };
    await new RunVoiceSink(RUN, { ...f.deps, events: { publish: async (e: OutboundEvent) => { events.push(e); } } }).onEnded(record(), artifacts());
    expect(events).toEqual([]);
    const g = fakes();
    await new RunVoiceSink(RUN, g.deps).onEnded(record(), artifacts());
    expect(g.statuses[0]).not.toHaveProperty('event');
  });
});
