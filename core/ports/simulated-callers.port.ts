/**
 * Simulated callers (API.md 13; docs/voice.md "Making calls talk"): a simulator call that brings a caller script
 * runs a whole conversation with no carrier. The simulator provider asks for one through
 * `ProviderContext.connectSimulatedCaller` when it answers such a call; the voice module implements it with an
 * in-process media loop in the simulator's framing (core/calls/simulated-call.use-case.ts).
 */
export const SimulatedCallers = Symbol.for('callplane.SimulatedCallers');

/** What a simulated caller says: its `lines` in order, then (when given) lines the organization's LLM plays as `persona`. */
export interface CallerScript {
  lines: string[];
  persona?: string;
}

export interface SimulatedCallRequest {
  provider: string;
  runId: number;
  providerCallId: string;
  caller: CallerScript;
  /** Ends the call at the provider (its final status follows through the one status path). */
  hangUp: () => Promise<void>;
}

export interface SimulatedCallers {
  /**
   * Starts the caller's media loop for an answered call, in the background; it hangs up through `hangUp` when
   * the conversation is over (lines run out, the agent ended the call, a failure). Returns false when this process
   * cannot run one (no voice pipeline): the provider then runs the call on its timers. Never throws.
   */
  connect(request: SimulatedCallRequest): boolean;
}

export const CALLER_SCRIPT_LIMITS = Object.freeze({ maxLines: 50, maxLineLength: 1000, maxPersonaLength: 4000 });

/**
 * A caller script from a request body (`caller: {lines: [...], persona?}`); null when absent. Throws nothing:
 * a malformed script is `{error}` naming what is wrong, for a 422 at `caller`.
 */
export function parseCallerScript(value: unknown): CallerScript | null | { error: string } {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return { error: 'caller must be an object {lines: [...], persona?}' };
  const v = value as Record<string, unknown>;
  const lines = v.lines ?? [];
  if (!Array.isArray(lines) || lines.length > CALLER_SCRIPT_LIMITS.maxLines) return { error: `caller.lines must be a list of at most ${CALLER_SCRIPT_LIMITS.maxLines} lines` };
  for (const l of lines) {
    if (typeof l !== 'string' || l.trim() === '' || l.length > CALLER_SCRIPT_LIMITS.maxLineLength) {
      return { error: `each of caller.lines must be a non-blank text of at most ${CALLER_SCRIPT_LIMITS.maxLineLength} characters` };
    }
  }
  const persona = v.persona;
  if (persona !== undefined && (typeof persona !== 'string' || persona.trim() === '' || persona.length > CALLER_SCRIPT_LIMITS.maxPersonaLength)) {
    return { error: `caller.persona must be a non-blank text of at most ${CALLER_SCRIPT_LIMITS.maxPersonaLength} characters` };
  }
  if (lines.length === 0 && persona === undefined) return { error: 'caller needs lines or a persona' };
  return { lines: lines as string[], ...(typeof persona === 'string' ? { persona } : {}) };
}
