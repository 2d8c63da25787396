/**
 * Where a talking call's voice session leaves its record (API.md 13; docs/voice.md "Making calls talk"): the
 * `VoiceSessionSink` of one run. Called once by the session, after the last words were heard and BEFORE it hangs
 * up, so every ending (endCall, caller hang-up, idle, time limit, a provider failing) is persisted first.
 *
 * In order: `gathered_context` (extracted values and `mapped_call_disposition`), the disposition and
 * `cost_info.service_token_usage` are applied through `RunRepository.applyStatus` (status `in_progress`: the one
 * disposition rule of core/runs decides what stands, and the carrier's final status keeps the agent's
 * disposition) as the run's conversation record (`conversation: true`: a run takes it once, even after the
 * carrier's final status, `planRunStatusUpdate`); the transcript artifact (`{"turns": [...]}`,
 * only what the caller heard) and the stereo WAV (caller left, agent right) go to the object store and onto the
 * run (`transcript_url`, `recording_url`) with the voice metrics (`annotations.voice_metrics`, read by
 * `GET .../runs/{run_id}/metrics`) and the run's log gets `node_entered`, `variables_extracted`, one `turn` entry
 * per agent reply and `conversation_ended`, all in one write; last, an endCall with `transfer_to` hands the
 * caller over through `CallTransfer` (answering `handedOver` when the carrier accepted, so the line stays up). Each step failing is logged and the next still runs (the call must hang
 * up). Idempotent: the same keys are overwritten, equal log entries are not repeated.
 *
 * Customer webhooks (docs/webhooks.md): when the run takes the conversation record (the extraction landed), the
 * same write stores a `call.analyzed` marker, and once the artifacts are attached the event is published with
 * the run as it then is (`gathered_context`, transcript and recording links); a record the run already had
 * publishes nothing, and a crash before the publish leaves the marker for the webhook sweep.
 */
import type { CallTransfer } from '../ports/call-transfer.port.js';
import type { Clock } from '../ports/clock.port.js';
import type { ConversationRecord } from '../ports/conversation-record.port.js';
import { runEventKey, type EventPublisher, type PendingEvent } from '../ports/event-publisher.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { ObjectStore } from '../ports/object-store.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { Run } from '../runs/run.js';
import type { VoiceSessionArtifacts, VoiceSessionEndResult, VoiceSessionSink } from '../voice/voice-session-sink.js';
import { RECORDING_SAMPLE_RATE, type RecordingOutput } from '../voice/call-recorder.js';
import { pcmWavHeader } from '../voice/wav.js';
import { MediaRecording } from './media-recording.js';

export const transcriptKeyOf = (run: Pick<Run, 'organizationId' | 'id'>): string => `runs/${run.organizationId}/${run.id}/transcript.json`;
/** The talking call's stereo recording (the caller-only recording of a stream lives at `recording.wav`). */
export const callRecordingKeyOf = (run: Pick<Run, 'organizationId' | 'id'>): string => `runs/${run.organizationId}/${run.id}/call.wav`;
/** Where the talking call's stereo PCM streams while the call lasts (a `.part`: `ObjectStore.sweepIncomplete` reclaims one a crash left). */
export const callRecordingPartKeyOf = (run: Pick<Run, 'organizationId' | 'id'>): string => `runs/${run.organizationId}/${run.id}/call.pcm.part`;

/** 4 hours of stereo 16-bit 8 kHz (32,000 bytes a second): later audio is not recorded. */
export const MAX_CALL_RECORDING_BYTES = 4 * 3600 * 32_000;
/** A stalled store may keep this much of a call's recording waiting (~16 s); past it the recording stops there. */
export const MAX_CALL_RECORDING_QUEUE_BYTES = 512 * 1024;

/** What `annotations.voice_metrics` holds (the metrics endpoint answers it). */
export interface StoredVoiceMetrics {
  turns: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  interruptions: number;
  recording_duration_ms: number;
  end_reason: string;
  /** One entry per agent reply, in order. */
  entries: Array<{ turn: number } & VoiceSessionArtifacts['latency'][number]>;
}

export interface RunVoiceSinkDeps {
  runs: Pick<RunRepository, 'attachArtifacts' | 'applyStatus'>;
  store: Pick<ObjectStore, 'put' | 'get' | 'delete'>;
  clock: Clock;
  log: Logger;
  /** Hands a call over at an endCall node with `transfer_to`; absent: no transfers (logged). */
  transfer?: CallTransfer;
  /** Customer webhooks (`call.analyzed`); absent: nothing is published. */
  events?: EventPublisher;
}

export class RunVoiceSink implements VoiceSessionSink {
  /** The recording streaming into the store, from the recorder's first piece on. */
  private stream: MediaRecording | null = null;

  /**
   * The session's recorder writes here while the call lasts: the interleaved PCM streams into the `.part`
   * object (`MediaRecording`: bounded queue; a store that fails or falls behind is logged, never the call's
   * problem); `onEnded` writes `call.wav` (header with the final sizes, then the part read back) and deletes the part.
   */
  readonly recording: RecordingOutput = {
    write: (chunk) => {
      this.stream ??= new MediaRecording(this.deps.store, {
        rawKey: callRecordingPartKeyOf(this.run), wavKey: callRecordingKeyOf(this.run),
        highWaterBytes: MAX_CALL_RECORDING_QUEUE_BYTES, maxQueuedBytes: MAX_CALL_RECORDING_QUEUE_BYTES, maxBytes: MAX_CALL_RECORDING_BYTES,
        wavHeader: (dataBytes) => pcmWavHeader(dataBytes, RECORDING_SAMPLE_RATE, 2),
      }, this.deps.log.child({ run_id: this.run.id }));
      this.stream.write(chunk);
    },
  };

  constructor(
    private readonly run: Pick<Run, 'organizationId' | 'id'>,
    private readonly deps: RunVoiceSinkDeps,
  ) {}

  async onEnded(record: ConversationRecord, artifacts: VoiceSessionArtifacts): Promise<VoiceSessionEndResult> {
    const { organizationId, id } = this.run;
    const log = this.deps.log.child({ run_id: id });
    const now = this.deps.clock.now();
    const step = async (what: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (e) {
        log.error({ err: (e as Error)?.message, step: what }, 'storing part of the call record failed');
      }
    };
    // the run's fields first: the carrier's final status (a caller hanging up) may follow at any moment, and a
    // final run takes no more context; the artifacts and log entries can still be attached after it
    const tokens = record.usage.prompt_tokens + record.usage.completion_tokens;
    const disposition = artifacts.outcome.reason === 'failed' ? 'failed' : record.disposition ?? artifacts.outcome.disposition;
    const analyzedEvent: PendingEvent | null = this.deps.events ? { key: runEventKey(id, 'call.analyzed'), type: 'call.analyzed', at: now } : null;
    let analyzed: Run | null = null;
    await step('disposition', async () => {
      const r = await this.deps.runs.applyStatus(organizationId, id, {
        status: 'in_progress',
        // the conversation record: a run takes it once, even when the carrier's final status came first
        conversation: true,
        disposition,
        gatheredContext: { ...record.gathered_context, mapped_call_disposition: disposition },
        costInfo: { service_token_usage: tokens },
        at: now,
        ...(analyzedEvent ? { event: analyzedEvent } : {}),
      });
      if (r.applied && r.run) analyzed = r.run;
    });
    let transcriptKey: string | undefined;
    let recordingKey: string | undefined;
    await step('transcript', async () => {
      const body = new TextEncoder().encode(JSON.stringify(artifacts.transcript));
      transcriptKey = (await this.deps.store.put(transcriptKeyOf(this.run), body, { contentType: 'application/json' })).key;
    });
    await step('recording', async () => {
      // null: no audio, or the store failed (logged by the recording): the run has no recording_url
      recordingKey = (await this.stream?.finish())?.key;
    });
    const metrics: StoredVoiceMetrics = {
      ...artifacts.metrics,
      recording_duration_ms: artifacts.recordingDurationMs,
      end_reason: artifacts.outcome.reason,
      entries: artifacts.latency.map((l, i) => ({ turn: i + 1, ...l })),
    };
    const ended = {
      ts: now.toISOString(),
      event: 'conversation_ended',
      message: `the conversation ended (${artifacts.outcome.reason}), disposition ${disposition}`,
      details: { reason: artifacts.outcome.reason, disposition, turns: artifacts.metrics.turns, ...(artifacts.outcome.error ? { error: artifacts.outcome.error } : {}) },
    };
    // one write for the keys, the metrics and the whole log (a call has dozens of entries: written one by one,
    // each re-read and re-wrote the run, and 50 calls ending together held the event loop for 100-160 ms)
    await step('artifacts', async () => {
      const withArtifacts = await this.deps.runs.attachArtifacts(organizationId, id, {
        ...(transcriptKey ? { transcriptKey } : {}),
        ...(recordingKey ? { recordingKey } : {}),
        annotations: { voice_metrics: metrics },
        logs: [...artifacts.logs, ended],
        now,
      });
      if (analyzed && withArtifacts) analyzed = withArtifacts;
    });
    const analyzedRun = analyzed as Run | null;
    if (analyzedRun && analyzedEvent) {
      await this.deps.events!.publish({ type: 'call.analyzed', organizationId, run: analyzedRun, pending: analyzedEvent });
    }
    let handedOver = false;
    if (record.transfer && record.end_reason === 'end_node') {
      const transfer = this.deps.transfer;
      if (!transfer) log.warn({ to: record.transfer.to }, 'the agent asked for a transfer but this process has no transfer use case');
      else {
        await step('transfer', async () => {
          handedOver = (await transfer.transfer({ organizationId, runId: id, to: record.transfer!.to })).disposition === 'transferred';
        });
      }
    }
    // an accepted hand-over: the caller talks to someone else now, the session must not hang the line up
    return { handedOver };
  }
}
