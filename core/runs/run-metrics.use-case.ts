/**
 * `GET /workflow/{workflow_id}/runs/{run_id}/metrics` (API.md 13): a talking call's turn metrics, as its voice
 * session stored them when it ended (`annotations.voice_metrics`, core/calls/run-voice-sink.ts): `turns` (agent
 * replies to the caller), `latency_p50_ms` / `latency_p95_ms` (end of the caller's speech → the reply's first
 * audio at the carrier), `interruptions` (barge-ins) and one entry per turn with its latency breakdown. A run
 * that did not talk (yet) answers zero turns and null latencies. Tenant-scoped: another organization's run, or a
 * run of another workflow, is `NotFoundError('run_not_found')`. Reads only.
 */
import type { RunRepository } from '../ports/run.repository.port.js';
import { runNotFound } from './runs.use-case.js';

export interface RunTurnMetrics {
  turn: number;
  end_of_speech_to_first_audio: number;
  stt: number;
  llm_first_token: number;
  tts_first_audio: number;
}

export interface RunMetrics {
  run_id: number;
  turns: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  interruptions: number;
  entries: RunTurnMetrics[];
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

export class GetRunMetrics {
  constructor(private readonly runs: Pick<RunRepository, 'get'>) {}

  async execute(organizationId: number, workflowId: number, runId: number): Promise<RunMetrics> {
    const run = await this.runs.get(organizationId, runId);
    if (!run || run.workflowId !== workflowId) throw runNotFound();
    const stored = run.annotations.voice_metrics as Record<string, unknown> | undefined;
    const entries = Array.isArray(stored?.entries) ? (stored.entries as Array<Record<string, unknown>>) : [];
    return {
      run_id: run.id,
      turns: num(stored?.turns) ?? 0,
      latency_p50_ms: num(stored?.latency_p50_ms),
      latency_p95_ms: num(stored?.latency_p95_ms),
      interruptions: num(stored?.interruptions) ?? 0,
      entries: entries.map((e, i) => ({
        turn: num(e.turn) ?? i + 1,
        end_of_speech_to_first_audio: num(e.end_of_speech_to_first_audio) ?? 0,
        stt: num(e.stt) ?? 0,
        llm_first_token: num(e.llm_first_token) ?? 0,
        tts_first_audio: num(e.tts_first_audio) ?? 0,
      })),
    };
  }
}
