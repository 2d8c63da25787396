import type { GetRunMetrics } from '../../core/runs/run-metrics.use-case.js';
import { defineRoutes } from '../routing/route.js';
import { arr, id, int, nullable, num, obj, pathParams } from '../routing/schema-helpers.js';

export interface RunMetricsRouteDeps {
  getRunMetrics: GetRunMetrics;
}

const ms = num({ minimum: 0, description: 'milliseconds' });
const turnEntry = obj({
  turn: int({ minimum: 1 }),
  end_of_speech_to_first_audio: ms,
  stt: ms,
  llm_first_token: ms,
  tts_first_audio: ms,
}, ['turn', 'end_of_speech_to_first_audio', 'stt', 'llm_first_token', 'tts_first_audio']);

const metricsSchema = obj({
  run_id: id(),
  turns: int({ minimum: 0, description: 'agent replies to the caller' }),
  latency_p50_ms: nullable(num({ minimum: 0 })),
  latency_p95_ms: nullable(num({ minimum: 0 })),
  interruptions: int({ minimum: 0, description: 'barge-ins: the caller talked over the agent and it stopped' }),
  entries: arr(turnEntry),
}, ['run_id', 'turns', 'latency_p50_ms', 'latency_p95_ms', 'interruptions', 'entries']);

/** `GET /workflow/{workflow_id}/runs/{run_id}/metrics` (API.md 13). */
export function runMetricsRoutes(d: RunMetricsRouteDeps) {
  return defineRoutes([
    {
      method: 'get', path: '/workflow/{workflow_id}/runs/{run_id}/metrics', operationId: 'getWorkflowRunMetrics', summary: 'A call\'s turn metrics', tags: ['runs'], auth: 'any',
      description: 'For a call whose agent talked: `turns`, `latency_p50_ms` / `latency_p95_ms` (end of the caller\'s speech → first agent audio at the carrier), `interruptions`, and one entry per agent reply with its latency breakdown in milliseconds (`end_of_speech_to_first_audio`, `stt`, `llm_first_token`, `tts_first_audio`). Zero turns and null latencies for a run that did not talk. 404 `run_not_found` unless the run belongs to that workflow and your organization.',
      params: pathParams('workflow_id', 'run_id'), response: metricsSchema, errors: [404],
      handler: async ({ principal, params }) => d.getRunMetrics.execute(principal.organizationId, params.workflow_id, params.run_id),
    },
  ]);
}
