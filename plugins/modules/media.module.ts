import type { Server } from 'node:http';
import type { Container } from 'inversify';
import { ApplyCallStatus } from '../../core/calls/apply-call-status.use-case.js';
import type { MediaFraming } from '../../core/calls/media-session.js';
import { CarrierHangUp } from '../../core/calls/carrier-hang-up.js';
import { MediaStreams } from '../../core/calls/media-streams.use-case.js';
import { MediaTokens } from '../../core/calls/media-token.js';
import { IncompleteObjectSweep } from '../../core/calls/incomplete-object-sweep.js';
import { systemTimers } from '../../core/ports/timers.port.js';
import { Clock } from '../../core/ports/clock.port.js';
import { UrlSigner } from '../../core/ports/crypto.port.js';
import { Logger } from '../../core/ports/logger.port.js';
import { ObjectStore } from '../../core/ports/object-store.port.js';
import { RunRepository } from '../../core/ports/run.repository.port.js';
import { TelephonyConfigurationRepository } from '../../core/ports/telephony-configuration.repository.port.js';
import { ProviderInstances } from '../../core/telephony/provider-instances.js';
import { MediaEndpoint } from '../../http/media/media-endpoint.js';
import { ariMediaFraming } from '../../providers/ari/ari-media.js';
import { plivoMediaFraming } from '../../providers/plivo/plivo-media.js';
import { simulatorMediaFraming } from '../../providers/simulator/simulator-media.js';
import { telnyxMediaFraming } from '../../providers/telnyx/telnyx-media.js';
import { twilioMediaFraming } from '../../providers/twilio/twilio-media.js';
import { vonageMediaFraming } from '../../providers/vonage/vonage-media.js';
import type { Lifecycle } from '../lifecycle.js';
import { ProviderRegistry } from '../provider-registry.js';
import type { Settings } from '../settings.js';
import { HttpServerAttachmentToken, LifecycleToken, SettingsToken } from '../tokens.js';

/** The media framings of the built-in providers that stream call audio to Callplane (both ways). */
export const BUILT_IN_MEDIA_FRAMINGS: readonly MediaFraming[] = [
  twilioMediaFraming, simulatorMediaFraming, plivoMediaFraming, telnyxMediaFraming, vonageMediaFraming, ariMediaFraming,
];

/** Audio bytes a session lets wait for the store before pausing its socket (about 8 s of μ-law). */
const HIGH_WATER_BYTES = 64 * 1024;

/**
 * Media streams: signed media tokens (the answer markup carries them), the sessions' core and the
 * `/api/v1/telephony/<provider>/media/<run_id>` WebSocket, attached to the HTTP server through
 * `HttpServerAttachmentToken` and closed by a lifecycle stop hook. Needs the run and configuration
 * repositories and the status path (the telephony module); without them only the tokens are bound.
 */
export function mediaModule(c: Container, settings: Settings): void {
  c.bind(MediaTokens).toResolvedValue(
    (signer: UrlSigner, clock: Clock) => new MediaTokens(signer, clock, settings.media.tokenTtlSeconds),
    [UrlSigner, Clock],
  ).inSingletonScope();
  if (!c.isBound(RunRepository) || !c.isBound(TelephonyConfigurationRepository) || !c.isBound(ApplyCallStatus)) return;

  // recordings stream into the store while calls last: what a crash left of them is reclaimed at start and hourly
  const lifecycle = c.get<Lifecycle>(LifecycleToken);
  let sweep: IncompleteObjectSweep | null = null;
  lifecycle.onStart('recording-leftovers-sweep', () => {
    sweep = new IncompleteObjectSweep({ store: c.get<ObjectStore>(ObjectStore), clock: c.get<Clock>(Clock), timers: systemTimers, log: c.get<Logger>(Logger).child({ component: 'media' }) });
    sweep.start();
  });
  lifecycle.onStop('recording-leftovers-sweep', () => sweep?.stop());

  c.bind(MediaStreams).toResolvedValue(
    (runs: RunRepository, cfg: TelephonyConfigurationRepository, tokens: MediaTokens, store: ObjectStore, apply: ApplyCallStatus, clock: Clock, log: Logger) =>
      new MediaStreams(runs, cfg, tokens, { store, applyStatus: apply, clock, log }, {
        maxSessions: settings.media.maxSessions, maxRecordingBytes: settings.media.maxRecordingBytes, highWaterBytes: HIGH_WATER_BYTES,
      }, log, clock),
    [RunRepository, TelephonyConfigurationRepository, MediaTokens, ObjectStore, ApplyCallStatus, Clock, Logger],
  ).inSingletonScope();
  // a hang-up from the voice side on a carrier whose stream is only a fork (Telnyx) goes through its call control
  const instances = c.isBound(ProviderInstances)
    ? { forConfiguration: (configuration: Parameters<ProviderInstances['forConfiguration']>[0]) => c.get(ProviderInstances).forConfiguration(configuration) }
    : null;
  c.bind(MediaEndpoint).toResolvedValue(
    (streams: MediaStreams, registry: ProviderRegistry, log: Logger, s: Settings, lifecycle: Lifecycle, cfg: TelephonyConfigurationRepository) => {
      const registered = new Set(registry.ids());
      const framings = new Map(BUILT_IN_MEDIA_FRAMINGS.filter((f) => registered.has(f.provider)).map((f) => [f.provider, f] as const));
      const carrierHangUp = instances ? new CarrierHangUp(cfg, instances, log.child({ component: 'media' })) : null;
      const endpoint = new MediaEndpoint({
        ...(carrierHangUp ? { hangUpCall: (run, callId, reason) => carrierHangUp.execute(run, callId, reason) } : {}),
        streams, framings, log: log.child({ component: 'media' }),
        options: { maxMessageBytes: s.media.maxMessageBytes, idleTimeoutMs: s.media.idleTimeoutMs, startTimeoutMs: s.media.startTimeoutMs },
      });
      lifecycle.onStop('media-streams', () => endpoint.close());
      return endpoint;
    },
    [MediaStreams, ProviderRegistry, Logger, SettingsToken, LifecycleToken, TelephonyConfigurationRepository],
  ).inSingletonScope();
  c.bind(HttpServerAttachmentToken).toResolvedValue(
    (endpoint: MediaEndpoint) => (server: Server) => {
      endpoint.attach(server);
      return () => endpoint.close();
    },
    [MediaEndpoint],
  );
}
