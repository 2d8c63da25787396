/**
 * The run's voice metrics (API.md 13): per-reply latency entries and the `metrics` summary (`turns`,
 * `latency_p50_ms`, `latency_p95_ms`, `interruptions`), collected from the session's events. Pure.
 */
import type { TurnLatency, VoiceSessionEvents } from './voice-session-events.js';

export interface VoiceMetrics {
  turns: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  interruptions: number;
}

export interface LatencyEntry {
  atMs: number;
  latency: TurnLatency;
}

/** The `p`th percentile (0..100, nearest rank) of `values`; null when empty. */
export function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1];
}

export class TurnMetricsCollector {
  readonly entries: LatencyEntry[] = [];
  interruptions = 0;

  constructor(events: VoiceSessionEvents) {
    events.on('turn_metrics', (e) => this.entries.push({ atMs: e.atMs, latency: e.latency }));
    events.on('interruption', () => this.interruptions++);
  }

  summary(): VoiceMetrics {
    const latencies = this.entries.map((e) => e.latency.end_of_speech_to_first_audio);
    return {
      turns: this.entries.length,
      latency_p50_ms: percentile(latencies, 50),
      latency_p95_ms: percentile(latencies, 95),
      interruptions: this.interruptions,
    };
  }
}
