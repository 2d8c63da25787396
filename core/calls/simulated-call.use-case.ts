/**
 * The in-process media loop of a simulator call with a caller script (API.md 13; docs/voice.md "Making calls
 * talk"): `SimulatedCallers` for the simulator provider. The agent's side is a `WebSocketMediaChannel` in the
 * simulator's framing, exactly as a media WebSocket would give it, so the call takes the same path as a
 * carrier's: framing → channel → `StartCallConversation` → VoiceSession, with its transcript, stereo recording,
 * run fields and logs. The caller's side is a `SimulatedCaller`: its frames are parsed by the framing and fed to
 * the channel; the agent's outbound messages (`media`, `clear`) are parsed back into audio for the caller.
 *
 * Endings: the caller hangs up (lines ran out) → the stream stops → the session persists and ends; the agent
 * ends the call → the channel hangs up → the caller stops. Either way the call is then hung up at the provider
 * (`hangUp`), whose final status goes through the one status path and keeps the agent's disposition. An agent
 * that cannot talk: the call is hung up at once (no conversation to have).
 */
import type { MediaFraming } from './media-session.js';
import type { LanguageModelFactory } from '../ports/language-model-factory.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { SimulatedCallRequest, SimulatedCallers } from '../ports/simulated-callers.port.js';
import type { SpeechServices } from '../ports/speech-factory.port.js';
import type { Timers } from '../ports/timers.port.js';
import type { WorkflowRepository } from '../ports/workflow.repository.port.js';
import { SimulatedCaller, type SimulatedCallerEnd } from '../voice/simulated-caller.js';
import { WebSocketMediaChannel } from '../voice/websocket-media-channel.js';
import type { WorkflowConfigurations } from '../workflows/workflow-configurations.js';
import type { CallConversationStart, StartCallConversation } from './start-call-conversation.use-case.js';

export interface SimulatedCallDeps {
  /** The simulator's media framing (providers/simulator/simulator-media.ts). */
  framing: MediaFraming;
  conversations: Pick<StartCallConversation, 'execute'>;
  runs: Pick<RunRepository, 'findForProviderEvent'>;
  workflows: Pick<WorkflowRepository, 'get'>;
  speech: SpeechServices;
  models: LanguageModelFactory;
  timers: Timers;
  log: Logger;
  /** Agent silence that ends its reply for the caller (ms); default 700. */
  agentQuietMs?: number;
}

/** What one simulated call did (tests, benchmarks). */
export interface SimulatedCallResult {
  start: CallConversationStart['kind'] | 'failed';
  callerEnd: SimulatedCallerEnd | null;
  caller: SimulatedCaller | null;
}

export class SimulatedCalls implements SimulatedCallers {
  /** Loops in flight, by run id (tests wait on them). */
  readonly running = new Map<number, Promise<SimulatedCallResult>>();

  constructor(private readonly deps: SimulatedCallDeps) {}

  connect(request: SimulatedCallRequest): boolean {
    const loop = this.run(request).finally(() => this.running.delete(request.runId));
    this.running.set(request.runId, loop);
    return true;
  }

  private async run(request: SimulatedCallRequest): Promise<SimulatedCallResult> {
    const log = this.deps.log.child({ run_id: request.runId, provider: request.provider, simulated_caller: true });
    let caller: SimulatedCaller | null = null;
    try {
      const run = await this.deps.runs.findForProviderEvent(request.runId);
      if (!run) throw new Error('the run is gone');
      const { framing } = this.deps;
      let channel: WebSocketMediaChannel | null = null;
      let agentHungUp = false;
      const decoder = new TextDecoder();
      channel = new WebSocketMediaChannel({
        send: (data, binary) => {
          if (!caller) return;
          if (binary) return caller.agentAudio(data as Uint8Array);
          const message = JSON.parse(typeof data === 'string' ? data : decoder.decode(data)) as { event?: string; media?: { payload?: string } };
          if (message.event === 'media' && typeof message.media?.payload === 'string') caller.agentAudio(Buffer.from(message.media.payload, 'base64'));
        },
        close: () => {
          agentHungUp = true;
          caller?.agentEnded();
        },
      }, { framing, stream: { streamId: `sim-stream-${request.runId}`, providerCallId: request.providerCallId }, timers: this.deps.timers, log });

      const started = await this.deps.conversations.execute(run, channel, request.provider);
      if (started.kind !== 'talking') {
        log.info({ start: started.kind }, 'simulated caller: the agent cannot talk; hanging up');
        await request.hangUp();
        return { start: started.kind, callerEnd: null, caller: null };
      }
      const session = started.session;
      const workflow = await this.deps.workflows.get(run.organizationId, run.workflowId);
      const c = (workflow?.workflowConfigurations ?? {}) as WorkflowConfigurations;
      const tts = await this.deps.speech.tts(run.organizationId, c.tts!.service_id);
      const persona = request.caller.persona
        ? { lm: await this.deps.models.forService(run.organizationId, c.llm!.service_id), model: c.llm!.model }
        : undefined;
      caller = new SimulatedCaller({
        script: request.caller, tts, ttsOptions: { ...(c.tts!.voice ? { voice: c.tts!.voice } : {}), ...(c.tts!.model ? { model: c.tts!.model } : {}) },
        ...(persona ? { persona } : {}), timers: this.deps.timers, log,
        ...(this.deps.agentQuietMs !== undefined ? { agentQuietMs: this.deps.agentQuietMs } : {}),
      });
      session.events.on('agent_heard', (e) => caller?.agentSaid(e.text));
      const stopFrame = new TextEncoder().encode(JSON.stringify({ event: 'stop' }));
      caller.start({
        send: (frame) => channel!.receive(framing.parse(frame, true)),
        hangUp: () => channel!.receive(framing.parse(stopFrame, false)),
      });
      const [callerEnd] = await Promise.all([caller.ended, session.ended]);
      caller.stop();
      log.info({ caller_end: callerEnd, agent_hung_up: agentHungUp }, 'simulated call ended');
      await request.hangUp();
      return { start: 'talking', callerEnd, caller };
    } catch (e) {
      log.error({ err: (e as Error)?.message }, 'simulated call failed; hanging up');
      caller?.stop();
      await request.hangUp().catch(() => undefined);
      return { start: 'failed', callerEnd: null, caller };
    }
  }
}
