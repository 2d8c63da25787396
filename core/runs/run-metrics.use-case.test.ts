import { describe, expect, it } from '@jest/globals';
import type { Run } from './run.js';
import { GetRunMetrics } from './run-metrics.use-case.js';

const runs = (annotations: Record<string, unknown>) => ({
  get: async (organizationId: number, id: number) => (organizationId === 1 && id === 4 ? ({ id: 4, organizationId: 1, workflowId: 2, annotations } as unknown as Run) : null),
});

describe('GetRunMetrics', () => {
  it('answers what the voice session stored, one entry per turn', async () => {
    const stored = { turns: 2, latency_p50_ms: 610, latency_p95_ms: 720, interruptions: 1, recording_duration_ms: 9000, end_reason: 'end_node',
      entries: [{ turn: 1, end_of_speech_to_first_audio: 610, stt: 80, llm_first_token: 300, tts_first_audio: 90 }, { turn: 2, end_of_speech_to_first_audio: 720, stt: 90, llm_first_token: 320, tts_first_audio: 95 }] };
    expect(await new GetRunMetrics(runs({ voice_metrics: stored })).execute(1, 2, 4)).toEqual({
      run_id: 4, turns: 2, latency_p50_ms: 610, latency_p95_ms: 720, interruptions: 1, entries: stored.entries,
    });
  });

  it('a run that did not talk has zero turns and null latencies', async () => {
    expect(await new GetRunMetrics(runs({})).execute(1, 2, 4)).toEqual({ run_id: 4, turns: 0, latency_p50_ms: null, latency_p95_ms: null, interruptions: 0, entries: [] });
  });

  it('another organization\'s run, or a run of another workflow, is run_not_found', async () => {
    await expect(new GetRunMetrics(runs({})).execute(2, 2, 4)).rejects.toMatchObject({ code: 'run_not_found' });
    await expect(new GetRunMetrics(runs({})).execute(1, 3, 4)).rejects.toMatchObject({ code: 'run_not_found' });
  });
});
