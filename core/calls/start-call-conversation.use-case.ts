/**
 * Makes a connected call talk (API.md 11 and 13; docs/voice.md "Making calls talk"). Called with the two-way
 * `MediaChannel` of every media stream whose `start` was accepted (the media endpoint's hook, or a simulated
 * caller's in-process loop):
 *
 * - the run's workflow names `llm`, `stt` and `tts` (`canTalk`): one `VoiceSession` is built from the
 *   organization's services (LanguageModel, SpeechToText, TextToSpeech), the process's VAD factory and shared
 *   playout pacer, the workflow definition the run was started with (`definition_id`), the run's
 *   `initial_context` over the workflow's `template_context_variables`, the voice settings of
 *   `workflow_configurations`, and a `RunVoiceSink` that persists every ending before the hang-up;
 * - an outbound call whose agent has `voicemail.detect` runs answering-machine detection first (docs/voicemail.md):
 *   the session's greeting waits for the decision; the agent's own model judges a greeting the heuristics are
 *   unsure of; the message is rendered with the same context as the agent's templates; the carrier's verdict
 *   (`carrierAmd`, from the status webhook) reaches the session while it lives: the first verdict decides, and
 *   the carrier's "greeting ended" releases a waiting message;
 * - it does not, on a real carrier: the caller hears a short notice (`noticeTonesMulaw`), the run ends `failed`
 *   with disposition `agent_not_configured` through the one status path, then the call is hung up;
 * - it does not, on the simulator: nothing (the simulator runs such calls as timers, API.md 8);
 * - the session cannot be built (a service deleted since the workflow was saved, a plugin gone): logged, the run
 *   ends `failed` with disposition `agent_unavailable`, the call is hung up.
 * Never throws: the media stream goes on (recorded) whatever happens here.
 */
import type { EventPublisher } from '../ports/event-publisher.port.js';
import { Conversation } from '../conversation/conversation.js';
import type { CallTransfer } from '../ports/call-transfer.port.js';
import type { Clock } from '../ports/clock.port.js';
import type { LanguageModelFactory } from '../ports/language-model-factory.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { MediaChannel } from '../ports/media-channel.port.js';
import type { ObjectStore } from '../ports/object-store.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { SpeechServices } from '../ports/speech-factory.port.js';
import type { NormalizedCallEvent } from '../ports/telephony-provider.port.js';
import type { TimerHandle, Timers } from '../ports/timers.port.js';
import type { VoiceActivityDetectorFactory } from '../ports/voice-activity-detector.port.js';
import type { WorkflowRepository } from '../ports/workflow.repository.port.js';
import type { Run } from '../runs/run.js';
import { fromSessionAudio, SESSION_FORMAT } from '../voice/carrier-audio.js';
import { greetingFor } from '../conversation/node-context.js';
import { PreparedSpeech } from '../voice/prepared-speech.js';
import { noticeTonesMulaw } from '../voice/notice-tones.js';
import type { PlayoutPacer } from '../voice/playout-pacer.js';
import { VoiceSession } from '../voice/voice-session.js';
import { voiceSettingsFrom, type VoiceSettings } from '../voice/voice-settings.js';
import { canTalk, type WorkflowConfigurations } from '../workflows/workflow-configurations.js';
import { renderTemplate, templateContextOf } from '../conversation/template.js';
import { voicemailSettingsOf } from '../voice/amd/amd-result.js';
import type { CarrierAmdRouter } from '../voice/amd/carrier-amd-router.js';
import { WorkflowGraph } from '../workflows/workflow-graph.js';
import { RunVoiceSink } from './run-voice-sink.js';

/** The provider that still runs calls of agents that cannot talk as timers (API.md 8). */
const SIMULATOR = 'simulator';

export interface StartCallConversationDeps {
  runs: Pick<RunRepository, 'get' | 'attachArtifacts' | 'applyStatus'>;
  workflows: Pick<WorkflowRepository, 'get' | 'getDefinition'>;
  models: LanguageModelFactory;
  speech: SpeechServices;
  vad: VoiceActivityDetectorFactory;
  pacer: PlayoutPacer;
  timers: Timers;
  clock: Clock;
  store: Pick<ObjectStore, 'put' | 'get' | 'delete'>;
  /** The one status path (`ApplyCallStatus`): how a call that cannot talk ends `failed`. */
  applyStatus: { execute(provider: string, event: NormalizedCallEvent, runId?: number): Promise<unknown> };
  transfer?: CallTransfer;
  /** Customer webhooks: the run's sink publishes `call.analyzed` (docs/webhooks.md); absent: nothing is published. */
  events?: EventPublisher;
  /** Where the carrier's answering-machine verdicts for a run arrive from the status path (docs/voicemail.md); absent: ours only. */
  carrierAmd?: CarrierAmdRouter;
  log: Logger;
  /** Overrides of the voice settings for every call (tests, benchmarks: shorter endpointing). */
  settings?: Partial<VoiceSettings>;
}

export type CallConversationStart =
  | { kind: 'talking'; session: VoiceSession }
  /** The simulator with an agent that cannot talk: its timers run the call. */
  | { kind: 'timers' }
  | { kind: 'refused'; disposition: 'agent_not_configured' | 'agent_unavailable' };

/** A prepared call waits this long at most for its media stream (a call that rings long, then is not answered). */
export const PREPARED_TTL_MS = 120_000;
/** Calls prepared at once at most (more are prepared at their stream's start, as without preparation). */
const MAX_PREPARED = 1000;

/** What a talking call's conversation is built from. */
interface CallAgent {
  config: Record<string, unknown>;
  c: WorkflowConfigurations;
  graph: WorkflowGraph;
  lm: Awaited<ReturnType<LanguageModelFactory['forService']>>;
  stt: Awaited<ReturnType<SpeechServices['stt']>>;
  tts: Awaited<ReturnType<SpeechServices['tts']>>;
  /** The agent's voice and TTS model: the session's speech and the prepared greeting are synthesized alike. */
  ttsOptions: { voice?: string; model?: string };
  initialContext: Record<string, unknown>;
  greeting: PreparedSpeech | null;
}

export class StartCallConversation {
  /** Calls prepared while ringing (`prepare`), until their stream starts or they expire. */
  private readonly prepared = new Map<number, { loading: Promise<CallAgent | null>; expiry: TimerHandle }>();

  constructor(private readonly deps: StartCallConversationDeps) {}

  /**
   * The call is about to connect (its inbound webhook was answered, or its outbound answer URL fetched): loads
   * what its conversation needs (workflow, definition, services) and starts synthesizing its greeting, so that
   * `execute` at the media stream's `start` finds them ready and the first words need no TTS round trip
   * (docs/voice.md "First words"); an outbound call with answering-machine detection gets its greeting
   * synthesized once the conversation opens, as before. Idempotent per run; kept `PREPARED_TTL_MS` at most when no stream comes (the
   * greeting's synthesis is then aborted). Never throws: a failure here is met again, and handled, by `execute`.
   */
  prepare(run: Run): void {
    if (this.prepared.has(run.id)) return;
    if (this.prepared.size >= MAX_PREPARED) return;
    const loading = this.load(run).then((agent) => {
      // with answering-machine detection the greeting waits for the decision anyway, and a machine never hears
      // it: it is synthesized when the conversation opens, as before (no speech bought for voicemail boxes)
      const detecting = run.mode === 'outbound' && voicemailSettingsOf(agent?.config) !== null;
      if (agent && !detecting) agent.greeting = this.startGreeting(agent);
      return agent;
    }).catch(() => null);
    const expiry = this.deps.timers.setTimeout(() => {
      const entry = this.prepared.get(run.id);
      if (entry?.loading !== loading) return;
      this.prepared.delete(run.id);
      void loading.then((agent) => agent?.greeting?.abort());
    }, PREPARED_TTL_MS);
    this.prepared.set(run.id, { loading, expiry });
  }

  /** The call ended before its media stream started (not answered, refused): its preparation is dropped. */
  discard(runId: number): void {
    const entry = this.prepared.get(runId);
    if (!entry) return;
    this.prepared.delete(runId);
    entry.expiry.cancel();
    void entry.loading.then((agent) => agent?.greeting?.abort());
  }

  /** Runs whose preparation waits for their media stream (tests, metrics). */
  get preparedCount(): number {
    return this.prepared.size;
  }

  async execute(run: Run, channel: MediaChannel, provider: string): Promise<CallConversationStart> {
    const log = this.deps.log.child({ run_id: run.id, provider });
    const entry = this.prepared.get(run.id);
    if (entry) {
      this.prepared.delete(run.id);
      entry.expiry.cancel();
    }
    let greeting: PreparedSpeech | null = null;
    try {
      const agent = (entry ? await entry.loading : null) ?? await this.load(run);
      greeting = agent?.greeting ?? null;
      if (!agent) {
        if (provider === SIMULATOR) return { kind: 'timers' };
        log.warn({ workflow_id: run.workflowId }, 'inbound call to an agent without llm, stt and tts: notice, then hang-up');
        await this.refuse(run, channel, provider, 'agent_not_configured', 'the agent has no llm, stt and tts configured (workflow_configurations)');
        return { kind: 'refused', disposition: 'agent_not_configured' };
      }
      const { config, c, graph, lm, stt, tts, ttsOptions, initialContext } = agent;
      const conversation = Conversation.start({
        graph,
        model: { lm, model: c.llm!.model, ...(typeof c.llm!.temperature === 'number' ? { temperature: c.llm!.temperature } : {}) },
        clock: this.deps.clock,
        logger: log,
        initialContext,
      });
      const voicemail = run.mode === 'outbound' ? voicemailSettingsOf(config) : null;
      const settings = voiceSettingsFrom(config);
      const session = new VoiceSession({
        id: `run-${run.id}`,
        channel,
        conversation,
        graph,
        stt,
        sttOptions: { ...(c.stt!.model ? { model: c.stt!.model } : {}), ...(c.stt!.language ? { language: c.stt!.language } : {}) },
        tts,
        ttsOptions,
        vad: this.deps.vad,
        pacer: this.deps.pacer,
        timers: this.deps.timers,
        clock: this.deps.clock,
        sink: new RunVoiceSink(run, { runs: this.deps.runs, store: this.deps.store, clock: this.deps.clock, log, ...(this.deps.transfer ? { transfer: this.deps.transfer } : {}),
          ...(this.deps.events ? { events: this.deps.events } : {}) }),
        settings: { ...settings, ...this.deps.settings, endpointing: { ...settings.endpointing, ...this.deps.settings?.endpointing } },
        logger: log,
        ...(greeting ? { greeting } : {}),
        ...(voicemail ? {
          voicemail: {
            settings: voicemail,
            render: (template: string) => renderTemplate(template, templateContextOf(initialContext, {}), this.deps.clock.now()),
            classifier: { model: lm, modelName: c.llm!.model },
          },
        } : {}),
      });
      session.start();
      if (voicemail && this.deps.carrierAmd) {
        // the carrier's verdict (Twilio async AMD, Telnyx), from the status webhook, while the session lives
        const off = this.deps.carrierAmd.register(run.id, (result) => session.carrierAmd(result));
        void session.ended.then(off, off);
      }
      log.info({ workflow_id: run.workflowId, definition_id: run.definitionId }, 'the call talks');
      return { kind: 'talking', session };
    } catch (e) {
      greeting?.abort();
      log.error({ err: (e as Error)?.message }, 'the call could not talk: its agent\'s services are unavailable');
      await this.refuse(run, channel, provider, 'agent_unavailable', `the agent's services are unavailable: ${(e as Error)?.message ?? String(e)}`);
      return { kind: 'refused', disposition: 'agent_unavailable' };
    }
  }

  /**
   * What the run's conversation needs, read from storage and the organization's services; null when its workflow
   * cannot talk (no llm, stt and tts, or the workflow is gone). Throws when a service cannot be built.
   */
  private async load(run: Run): Promise<CallAgent | null> {
    const workflow = await this.deps.workflows.get(run.organizationId, run.workflowId);
    const config = (workflow?.workflowConfigurations ?? {}) as Record<string, unknown>;
    if (!workflow || !canTalk(config)) return null;
    const c = config as WorkflowConfigurations;
    const version = await this.deps.workflows.getDefinition(run.organizationId, run.workflowId, run.definitionId);
    if (!version) throw new Error(`workflow ${run.workflowId} has no definition ${run.definitionId}`);
    const graph = WorkflowGraph.fromDefinition(version.definition);
    const [lm, stt, tts] = await Promise.all([
      this.deps.models.forService(run.organizationId, c.llm!.service_id),
      this.deps.speech.stt(run.organizationId, c.stt!.service_id),
      this.deps.speech.tts(run.organizationId, c.tts!.service_id),
    ]);
    const initialContext = { ...workflow.templateContextVariables, ...run.initialContext };
    const ttsOptions = { ...(c.tts!.voice ? { voice: c.tts!.voice } : {}), ...(c.tts!.model ? { model: c.tts!.model } : {}) };
    return { config, c, graph, lm, stt, tts, ttsOptions, initialContext, greeting: null };
  }

  /** The start node's greeting, rendered as the conversation will render it, synthesizing; null when it has none. */
  private startGreeting(agent: CallAgent): PreparedSpeech | null {
    const text = greetingFor(agent.graph.start, templateContextOf(agent.initialContext, {}), this.deps.clock.now());
    if (text === undefined) return null;
    return PreparedSpeech.start(agent.tts, text, { preferredFormat: SESSION_FORMAT, ...agent.ttsOptions });
  }

  /** The notice, the run `failed` with `disposition` (before the hang-up: the carrier's later status cannot replace it), then the hang-up. */
  private async refuse(run: Run, channel: MediaChannel, provider: string, disposition: string, detail: string): Promise<void> {
    try {
      const notice = noticeTonesMulaw();
      const wire = fromSessionAudio(channel.outFormat).convert(notice);
      channel.sendAudio(wire);
      const playMs = (notice.length / 8000) * 1000;
      await new Promise<void>((resolve) => this.deps.timers.setTimeout(resolve, playMs + 200));
      await this.deps.applyStatus.execute(provider, {
        kind: 'status', runId: run.id, status: 'failed', outcome: 'failed', disposition, at: this.deps.clock.now(), detail,
      }, run.id);
    } catch (e) {
      this.deps.log.error({ run_id: run.id, err: (e as Error)?.message }, 'ending a call that cannot talk failed');
    }
    await channel.hangUp(disposition);
  }
}
