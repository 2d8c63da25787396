/** A call: every inbound or outbound call becomes one run of a workflow (API.md section 7). */
export type RunMode = 'inbound' | 'outbound';
export type RunStatus = 'queued' | 'ringing' | 'in_progress' | 'completed' | 'failed';

/** Where a status may move: never backwards. `completed` and `failed` are final. */
export const RUN_STATUS_RANK: Record<RunStatus, number> = { queued: 0, ringing: 1, in_progress: 2, completed: 3, failed: 3 };
export const isFinalRunStatus = (s: RunStatus): boolean => s === 'completed' || s === 'failed';

/** Dispositions of calls that did not connect (API.md section 6); a connected call carries the agent's or `completed`. */
export const NOT_CONNECTED_DISPOSITIONS = ['busy', 'no_answer', 'voicemail', 'failed', 'canceled'] as const;

export interface CostInfo {
  call_duration_seconds: number;
  service_token_usage: number;
  charge_usd: number;
}

export interface RunLogEntry {
  ts: string;
  event: string;
  message?: string;
  details?: Record<string, unknown>;
}

export interface Run {
  id: number;
  organizationId: number;
  workflowId: number;
  definitionId: number;
  name: string;
  mode: RunMode;
  status: RunStatus;
  /** `gathered_context.mapped_call_disposition`, kept as a column for filtering; null until known. */
  disposition: string | null;
  campaignId: number | null;
  /** The campaign contact attempt that placed this call, when it came from a campaign. */
  attemptId: number | null;
  telephonyConfigurationId: number | null;
  provider: string | null;
  /** The provider's id of the call (Twilio CallSid, ARI channel id, simulator id). */
  providerCallId: string | null;
  callerNumber: string | null;
  calledNumber: string | null;
  initialContext: Record<string, unknown>;
  gatheredContext: Record<string, unknown>;
  logs: RunLogEntry[];
  annotations: Record<string, unknown>;
  costInfo: CostInfo;
  durationSeconds: number | null;
  /** ObjectStore keys; the API turns them into signed URLs. */
  transcriptKey: string | null;
  recordingKey: string | null;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  updatedAt: Date;
}

/**
 * The final run status of a call outcome, the same for every provider: `failed` only when the call could
 * not be placed or failed; a call that ended busy, unanswered, on voicemail or canceled `completed` as a
 * call, its result being the disposition.
 */
export const finalRunStatusFor = (outcome: 'completed' | 'busy' | 'no_answer' | 'voicemail' | 'failed' | 'canceled'): RunStatus =>
  outcome === 'failed' ? 'failed' : 'completed';

export const isRunCompleted = (r: Pick<Run, 'status'>): boolean => isFinalRunStatus(r.status);
