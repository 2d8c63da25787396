import { timingSafeEqual } from 'node:crypto';
import {
  MAX_CALL_DURATION_SECONDS,
  ProviderApiError,
  ValidationError,
  callDurationProblem,
  type NormalizedCallEvent,
  type PlaceCallRequest,
  type PlacedCall,
  type ProviderConfig,
  type ProviderContext,
  type ProviderMarkup,
  type TelephonyProvider,
  type WebhookRequest,
} from '../../plugins/sdk.js';
import { parseCallerScript, type CallerScript } from '../../core/ports/simulated-callers.port.js';
import type { TransferTarget } from '../../core/calls/transfer-target.js';
import type { TransferOptions, TransferResult } from '../../core/ports/telephony-provider.port.js';
import { simulatorManifest } from './simulator.manifest.js';
import { SCENARIO_FINAL_EVENT, SIMULATOR_EVENTS, scenarioFor } from './simulator.status-map.js';

export interface SimulatorConfig {
  accountId: string;
  apiKey: string | null;
  ringMs: number;
  talkMs: number;
  /** The simulated caller of every answered outbound call (`caller_lines`, `caller_persona`); null: none. */
  caller: CallerScript | null;
}

/** The configured caller script: `caller_lines` and `caller_persona` (already schema-checked); null when neither is set. */
function configuredCaller(config: ProviderConfig): CallerScript | null {
  const lines = Array.isArray(config.caller_lines) ? config.caller_lines : [];
  const persona = typeof config.caller_persona === 'string' && config.caller_persona.trim() ? config.caller_persona : undefined;
  if (lines.length === 0 && persona === undefined) return null;
  const script = parseCallerScript({ lines, ...(persona !== undefined ? { persona } : {}) });
  return script && !('error' in script) ? script : null;
}

export function simulatorConfig(config: ProviderConfig): SimulatorConfig {
  const int = (v: unknown, d: number) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : d);
  return {
    accountId: typeof config.account_id === 'string' && config.account_id ? config.account_id : 'simulator',
    apiKey: typeof config.api_key === 'string' && config.api_key ? config.api_key : null,
    ringMs: int(config.ring_ms, 300),
    talkMs: int(config.talk_ms, 1000),
    caller: configuredCaller(config),
  };
}

interface SimulatedCall {
  runId: number;
  state: 'queued' | 'ringing' | 'in_progress';
  timer: ReturnType<typeof setTimeout> | null;
  answeredAt: number | null;
  /** A simulated caller talks on this call once answered (it then ends on hang-up, not after `talk_ms`). */
  caller?: CallerScript | null;
}

/** How many final states `getCallStatus` remembers (reconciliation asks shortly after a call ends). */
const REMEMBERED_FINALS = 10_000;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

/**
 * A provider that places no call. Each call is a small state machine driven by one timer at a time (cheap
 * for thousands of concurrent calls); every status goes through `ProviderContext.reportStatus`, the same
 * use case HTTP callbacks reach. `close()` cancels every timer.
 */
export class SimulatorProvider implements TelephonyProvider {
  readonly manifest = simulatorManifest;
  private readonly calls = new Map<string, SimulatedCall>();
  private readonly finals = new Map<string, NormalizedCallEvent & { kind: 'status' }>();
  private closed = false;

  constructor(readonly config: SimulatorConfig, private readonly context: ProviderContext) {}

  /** Calls in flight (tests, load runs). */
  get activeCalls(): number {
    return this.calls.size;
  }

  async placeCall(request: PlaceCallRequest): Promise<PlacedCall> {
    if (this.closed) throw new ProviderApiError('simulator', 'The simulator is shutting down', true);
    const providerCallId = `sim-${request.attemptKey}`;
    if (this.calls.has(providerCallId) || this.finals.has(providerCallId)) return { providerCallId, alreadyPlaced: true };
    const scenario = scenarioFor(request.to);
    if (scenario === 'dial_failed') {
      throw new ProviderApiError('simulator', `Simulated dial failure: ${request.to} ends in 00`, false, 'provider_call_failed');
    }
    const call: SimulatedCall = { runId: request.runId, state: 'queued', timer: null, answeredAt: null, caller: this.config.caller };
    this.calls.set(providerCallId, call);
    this.after(providerCallId, 0, () => {
      call.state = 'ringing';
      this.emit(providerCallId, call, 'ringing');
      this.after(providerCallId, this.config.ringMs, () => {
        if (scenario === 'answered') this.answer(providerCallId, call);
        else this.finish(providerCallId, call, SCENARIO_FINAL_EVENT[scenario], scenario === 'voicemail' ? 0 : undefined);
      });
    });
    return { providerCallId, alreadyPlaced: false };
  }

  async hangup(providerCallId: string): Promise<void> {
    const call = this.calls.get(providerCallId);
    if (!call) return;
    if (call.state === 'in_progress') this.finish(providerCallId, call, 'completed', this.elapsedSeconds(call));
    else this.finish(providerCallId, call, 'canceled');
  }

  /**
   * A simulated cold transfer (docs/voice.md "Transfers"), decided by the target's last two digits like a dial
   * (API.md 8): `00` fails (`failed`), `01` is busy (`busy`), `02` does not answer (`no_answer`); anything else
   * succeeds, and the caller then talks with the person for `talk_ms` before the call completes. A SIP target
   * without digits succeeds. Only a call in progress can be transferred (`call_not_active`). Never throws.
   */
  async transfer(providerCallId: string, target: TransferTarget, _options: TransferOptions): Promise<TransferResult> {
    const call = this.calls.get(providerCallId);
    if (!call || call.state !== 'in_progress') return { ok: false, reason: 'call_not_active', detail: `simulator: call ${providerCallId} is not in progress` };
    const digits = (target.kind === 'sip' ? target.address.replace(/^sips?:/, '').split('@')[0]! : target.address).replace(/\D/g, '');
    const lastTwo = digits.slice(-2);
    if (lastTwo === '00') return { ok: false, reason: 'failed', detail: `simulator: transfer to ${target.address} failed (ends in 00)` };
    if (lastTwo === '01') return { ok: false, reason: 'busy', detail: `simulator: ${target.address} is busy (ends in 01)` };
    if (lastTwo === '02') return { ok: false, reason: 'no_answer', detail: `simulator: ${target.address} did not answer (ends in 02)` };
    // the agent has left; the caller and the person talk, then the call completes
    if (call.timer) clearTimeout(call.timer);
    call.caller = null;
    this.after(providerCallId, this.config.talkMs, () => this.finish(providerCallId, call, 'completed', this.elapsedSeconds(call)));
    return { ok: true, detail: `simulator: connected to ${target.address}` };
  }

  async getCallStatus(providerCallId: string): Promise<NormalizedCallEvent | null> {
    const call = this.calls.get(providerCallId);
    if (call) return { kind: 'status', runId: call.runId, providerCallId, status: call.state };
    return this.finals.get(providerCallId) ?? null;
  }

  /** The simulator has no account to ask: its credentials always pass (API.md section 8). */
  async checkCredentials(): Promise<{ ok: boolean; message: string }> {
    return { ok: true, message: 'The simulator places no real calls; its credentials always pass' };
  }

  async syncInboundWebhook(number: { address: string; addressNormalized: string; inboundUrl: string | null }): Promise<{ ok: boolean; message: string }> {
    return {
      ok: true,
      message: number.inboundUrl ? `Simulated calls to ${number.addressNormalized} reach ${number.inboundUrl}` : `Simulated inbound calls to ${number.addressNormalized} detached`,
    };
  }

  verifyWebhook(request: WebhookRequest): boolean {
    if (!this.config.apiKey) return true;
    const given = request?.headers?.['x-simulator-key'];
    if (typeof given !== 'string') return false;
    const a = Buffer.from(given);
    const b = Buffer.from(this.config.apiKey);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  parseStatusCallback(request: WebhookRequest): NormalizedCallEvent {
    return parseSimulatorStatus(request);
  }

  /**
   * Answers at once. With a caller script (API.md 13) the call is held until it is hung up: the host's simulated
   * caller talks with the agent in process and hangs up through `hangup` when the conversation is over; a host
   * without a voice pipeline runs it on the timers like any other call.
   */
  inboundAnswer(input: { runId: number; providerCallId: string; mediaUrl: string; statusCallbackUrl: string; caller?: CallerScript }): ProviderMarkup {
    if (!this.closed && !this.calls.has(input.providerCallId) && !this.finals.has(input.providerCallId)) {
      const call: SimulatedCall = { runId: input.runId, state: 'queued', timer: null, answeredAt: null, caller: input.caller ?? this.config.caller };
      this.calls.set(input.providerCallId, call);
      this.after(input.providerCallId, 0, () => this.answer(input.providerCallId, call));
    }
    return { contentType: 'application/json', body: JSON.stringify({ run_id: input.runId }) };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const call of this.calls.values()) if (call.timer) clearTimeout(call.timer);
    this.calls.clear();
  }

  private answer(id: string, call: SimulatedCall): void {
    call.state = 'in_progress';
    call.answeredAt = Date.now();
    this.emit(id, call, 'answered');
    if (call.caller && this.context.connectSimulatedCaller?.({ runId: call.runId, providerCallId: id, caller: call.caller, hangUp: () => this.hangup(id) })) return;
    this.after(id, this.config.talkMs, () => this.finish(id, call, 'completed', this.config.talkMs / 1000));
  }

  private finish(id: string, call: SimulatedCall, event: keyof typeof SIMULATOR_EVENTS, durationSeconds?: number): void {
    if (call.timer) clearTimeout(call.timer);
    this.calls.delete(id);
    const e = this.emit(id, call, event, durationSeconds);
    this.finals.set(id, e);
    if (this.finals.size > REMEMBERED_FINALS) this.finals.delete(this.finals.keys().next().value as string);
  }

  private elapsedSeconds(call: SimulatedCall): number {
    return call.answeredAt === null ? 0 : Math.max(0, Date.now() - call.answeredAt) / 1000;
  }

  private after(id: string, ms: number, fn: () => void): void {
    const call = this.calls.get(id);
    if (!call || this.closed) return;
    call.timer = setTimeout(() => {
      call.timer = null;
      if (!this.closed && this.calls.get(id) === call) fn();
    }, ms);
  }

  private emit(id: string, call: SimulatedCall, event: keyof typeof SIMULATOR_EVENTS, durationSeconds?: number): NormalizedCallEvent & { kind: 'status' } {
    const mapped = SIMULATOR_EVENTS[event]!;
    const e: NormalizedCallEvent & { kind: 'status' } = {
      kind: 'status',
      runId: call.runId,
      providerCallId: id,
      status: mapped.status,
      ...(mapped.outcome ? { outcome: mapped.outcome } : {}),
      ...(durationSeconds !== undefined ? { durationSeconds } : {}),
      at: new Date(),
      detail: `simulator: ${event}`,
    };
    this.context.reportStatus(e).catch((err: unknown) => this.context.log.warn({ provider_call_id: id, err: (err as Error)?.message }, 'simulator status report failed'));
    return e;
  }
}

/**
 * A simulator status callback: a JSON or form body `{event, call_id?, duration_seconds?}` where `event` is
 * one of `SIMULATOR_EVENTS`. Pure. The body is an API of ours (not a carrier's), so a `duration_seconds` that is
 * not a duration (core's `callDurationProblem`: a number in 0..86,400) throws `ValidationError` (422 on the
 * field) instead of being dropped; nothing else throws.
 */
export function parseSimulatorStatus(request: WebhookRequest): NormalizedCallEvent {
  const body = request?.body && typeof request.body === 'object' ? (request.body as Record<string, unknown>) : {};
  const event = str(body.event);
  if (!event) return { kind: 'ignored', reason: 'no event in the callback' };
  const mapped = Object.prototype.hasOwnProperty.call(SIMULATOR_EVENTS, event) ? SIMULATOR_EVENTS[event] : undefined;
  if (!mapped) return { kind: 'ignored', reason: `unknown simulator event "${event.slice(0, 40)}"` };
  const duration = durationOf(body.duration_seconds);
  const callId = str(body.call_id);
  return {
    kind: 'status',
    ...(typeof request.runId === 'number' ? { runId: request.runId } : {}),
    ...(callId ? { providerCallId: callId } : {}),
    status: mapped.status,
    ...(mapped.outcome ? { outcome: mapped.outcome } : {}),
    ...(mapped.outcome && duration !== undefined ? { durationSeconds: duration } : {}),
  };
}

/** `duration_seconds` of a status body (JSON number or form string), validated; undefined when absent. */
function durationOf(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
  const problem = callDurationProblem(n);
  if (problem) throw new ValidationError([{ loc: ['body', 'duration_seconds'], msg: `Input should be a number of seconds from 0 to ${MAX_CALL_DURATION_SECONDS}: ${problem}`, type: 'value_error' }]);
  return n as number;
}
