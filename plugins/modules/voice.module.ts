import type { Server } from 'node:http';
import type { Container } from 'inversify';
import { FallbackVadFactory } from '../../adapters/vad/fallback-vad-factory.js';
import { SileroVoiceActivityDetectorFactory } from '../../adapters/vad/silero-vad.js';
import { ApplyCallStatus } from '../../core/calls/apply-call-status.use-case.js';
import { SimulatedCalls } from '../../core/calls/simulated-call.use-case.js';
import { StartCallConversation } from '../../core/calls/start-call-conversation.use-case.js';
import { CallOutcomeListeners } from '../../core/calls/call-outcome-listener.js';
import { CarrierAmdRouter } from '../../core/voice/amd/carrier-amd-router.js';
import { CallTransfer } from '../../core/ports/call-transfer.port.js';
import { EventPublisher } from '../../core/ports/event-publisher.port.js';
import { Clock } from '../../core/ports/clock.port.js';
import { LanguageModelFactory } from '../../core/ports/language-model-factory.port.js';
import { Logger } from '../../core/ports/logger.port.js';
import { ObjectStore } from '../../core/ports/object-store.port.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { SimulatedCallers } from '../../core/ports/simulated-callers.port.js';
import { SpeechServices } from '../../core/ports/speech-factory.port.js';
import { systemTimers } from '../../core/ports/timers.port.js';
import { VoiceActivityDetectorFactory } from '../../core/ports/voice-activity-detector.port.js';
import { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { GetRunMetrics } from '../../core/runs/run-metrics.use-case.js';
import { EnergyVoiceActivityDetectorFactory } from '../../core/voice/energy-vad.js';
import { PlayoutPacer } from '../../core/voice/playout-pacer.js';
import { MediaEndpoint } from '../../http/media/media-endpoint.js';
import { runMetricsRoutes } from '../../http/routes/run-metrics.routes.js';
import type { RouteDefinition } from '../../http/routing/route.js';
import { simulatorMediaFraming } from '../../providers/simulator/simulator-media.js';
import type { Lifecycle } from '../lifecycle.js';
import type { Settings } from '../settings.js';
import { HttpRoutesToken, HttpServerAttachmentToken, LifecycleToken } from '../tokens.js';
import { port, provide } from './wire.js';

/** The ports this module reads, typed once (wire.ts). */
const Ports = {
  runs: port<RunRepository>(RunRepository),
  workflows: port<WorkflowRepository>(WorkflowRepository),
  models: port<LanguageModelFactory>(LanguageModelFactory),
  speech: port<SpeechServices>(SpeechServices),
  store: port<ObjectStore>(ObjectStore),
  clock: port<Clock>(Clock),
  logger: port<Logger>(Logger),
  vad: port<VoiceActivityDetectorFactory>(VoiceActivityDetectorFactory),
  transfer: port<CallTransfer>(CallTransfer),
  events: port<EventPublisher>(EventPublisher),
  simulatedCallers: port<SimulatedCallers>(SimulatedCallers),
  routes: port<RouteDefinition[]>(HttpRoutesToken),
  lifecycle: port<Lifecycle>(LifecycleToken),
};

/**
 * Talking calls (docs/voice.md "Making calls talk"): the VAD factory (Silero, warmed up at start in the worker
 * and all-in-one roles, the energy detector when its model cannot load or `voice.vad` says so), the process's one
 * playout pacer, `StartCallConversation` on every media stream the media endpoint accepts, simulated callers for
 * the simulator, and `GET .../runs/{run_id}/metrics`. Wired by name (typed dependency maps). Needs runs,
 * workflows, AI services and the media endpoint; without them only the metrics route (when runs exist) is served.
 */
export function voiceModule(c: Container, settings: Settings): void {
  if (!c.isBound(RunRepository)) return;
  provide(c, GetRunMetrics, { deps: { runs: Ports.runs }, init: (d) => new GetRunMetrics(d.runs) });
  provide(c, Ports.routes, { deps: { getRunMetrics: GetRunMetrics }, init: (d) => runMetricsRoutes(d) });
  const ready = [WorkflowRepository, LanguageModelFactory, SpeechServices, ObjectStore, ApplyCallStatus, MediaEndpoint].every((t) => c.isBound(t));
  if (!ready) return;

  const energyOnly = settings.voice?.vad === 'energy';
  provide(c, Ports.vad, {
    deps: { logger: Ports.logger },
    init: (d) => {
      if (energyOnly) return new EnergyVoiceActivityDetectorFactory();
      const log = d.logger.child({ component: 'voice' });
      // Silero on a thread of its own; calls are scored inline, on the event loop, when it cannot start or stops,
      // until it is back (a bounded restart policy: the message says when, or that it stays stopped)
      const silero = new SileroVoiceActivityDetectorFactory({
        inference: settings.voice?.vadInference ?? 'thread',
        onThreadFailure: (message) => log.warn({ vad: 'silero', err: message }, 'the Silero inference thread failed: calls are scored on the event loop'),
        onThreadRestart: (message) => log.info({ vad: 'silero', detail: message }, 'the Silero inference thread is back: calls are scored there again'),
        // one call's listener bug resets that call's detector; every other call's VAD goes on
        onCallbackError: (error) => log.error({ vad: 'silero', err: (error as Error)?.message ?? String(error), stack: (error as Error)?.stack }, 'a voice activity listener threw: its call\'s detector was reset'),
      });
      return new FallbackVadFactory(silero, log);
    },
  });
  if (!energyOnly) {
    const lifecycle = c.get<Lifecycle>(LifecycleToken);
    if (settings.role === 'worker' || settings.role === 'all') {
      lifecycle.onStart('voice-vad', () => {
        (c.get<VoiceActivityDetectorFactory>(VoiceActivityDetectorFactory) as FallbackVadFactory).warmUp();
      });
    }
    // the inference thread (started by warmUp or the first call) is stopped with the service
    lifecycle.onStop('voice-vad', () => (c.get<VoiceActivityDetectorFactory>(VoiceActivityDetectorFactory) as FallbackVadFactory).close());
  }
  provide(c, PlayoutPacer, { deps: {}, init: () => new PlayoutPacer(systemTimers) });
  // the carrier's answering-machine verdicts, from the one status path to the run's live session in this process
  // (docs/voicemail.md: on another process the session's own detector decides)
  provide(c, CarrierAmdRouter, {
    deps: { listeners: CallOutcomeListeners },
    init: (d) => {
      const router = new CarrierAmdRouter();
      d.listeners.add({ onRunFinished: async () => undefined, onCarrierAmd: (run, amd) => void router.deliver(run.id, amd) });
      return router;
    },
  });
  provide(c, StartCallConversation, {
    deps: {
      runs: Ports.runs, workflows: Ports.workflows, models: Ports.models, speech: Ports.speech, vad: Ports.vad, pacer: PlayoutPacer,
      clock: Ports.clock, store: Ports.store, applyStatus: ApplyCallStatus, transfer: Ports.transfer, logger: Ports.logger, events: Ports.events,
      carrierAmd: CarrierAmdRouter, listeners: CallOutcomeListeners,
    },
    optional: ['transfer', 'events'],
    init: (d) => {
      const conversations = new StartCallConversation({
        ...d, timers: systemTimers, log: d.logger.child({ component: 'voice' }), ...(d.transfer ? { transfer: d.transfer } : {}),
        ...(d.events ? { events: d.events } : {}),
      });
      // a call about to connect (inbound answered, outbound picked up): its greeting is synthesized while it rings
      d.listeners.add({
        onRunFinished: async (run) => conversations.discard(run.id),
        onCallConnecting: (run) => conversations.prepare(run),
      });
      return conversations;
    },
  });
  provide(c, Ports.simulatedCallers, {
    deps: { conversations: StartCallConversation, runs: Ports.runs, workflows: Ports.workflows, speech: Ports.speech, models: Ports.models, logger: Ports.logger },
    init: (d) => new SimulatedCalls({ ...d, framing: simulatorMediaFraming, timers: systemTimers, log: d.logger.child({ component: 'simulated-caller' }) }),
  });
  // every accepted media stream: the call talks when its agent can (its channel is the media endpoint's)
  c.bind(HttpServerAttachmentToken).toResolvedValue(
    (endpoint: MediaEndpoint, conversations: StartCallConversation, log: Logger) => (_server: Server) => {
      const off = endpoint.onChannel((run, channel, _start, stream) => {
        void conversations.execute(run, channel, run.provider ?? 'unknown').then((started) => {
          if (started.kind === 'talking') stream.handOverRecording();
        }, (e: unknown) => log.error({ run_id: run.id, err: (e as Error)?.message }, 'starting the call\'s conversation failed'));
      });
      return async () => {
        off();
      };
    },
    [MediaEndpoint, StartCallConversation, Logger],
  );
}
