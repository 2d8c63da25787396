import type { Clock } from '../ports/clock.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { RunRepository } from '../ports/run.repository.port.js';
import type { TelephonyConfigurationRepository } from '../ports/telephony-configuration.repository.port.js';
import { isFinalRunStatus, type Run } from '../runs/run.js';
import { MediaSession, type MediaFraming, type MediaSessionDeps } from './media-session.js';
import type { MediaTokens } from './media-token.js';

export interface MediaStreamsOptions {
  /** Concurrent media sessions at most (further connections are refused with 503). */
  maxSessions: number;
  /** Bytes of caller audio one recording keeps at most. */
  maxRecordingBytes: number;
  /** Audio bytes waiting for the store per session above which reading pauses. */
  highWaterBytes: number;
}

export type MediaRefusal = { ok: false; status: 401 | 403 | 404 | 409 | 503; code: string; detail: string };
export type MediaAuthorization = { ok: true; run: Run; authorizedByUrl: boolean } | MediaRefusal;

const refuse = (status: MediaRefusal['status'], code: string, detail: string): MediaRefusal => ({ ok: false, status, code, detail });

/**
 * The media endpoint's core: who may stream into which run, and the live sessions.
 *
 * `authorize` (before the WebSocket upgrade): a token on the URL is checked first, without touching storage
 * (401 `media_token_invalid` / `media_token_expired`); a provider whose token travels in the `start` message
 * may connect without one (the session then refuses everything until a `start` with a valid token). Then the
 * run must exist, have been placed through this provider, belong to one of its telephony configurations
 * (404 `run_not_found` otherwise, whoever owns it) and not be finished (403 `run_finished`); one session per
 * run (409 `media_session_active`) and at most `maxSessions` at once (503 `media_sessions_exhausted`).
 */
export class MediaStreams {
  private readonly active = new Map<number, MediaSession>();

  constructor(
    private readonly runs: RunRepository,
    private readonly configurations: Pick<TelephonyConfigurationRepository, 'findForProviderEvent'>,
    private readonly tokens: MediaTokens,
    private readonly sessionDeps: Omit<MediaSessionDeps, 'runs' | 'tokens'>,
    private readonly options: MediaStreamsOptions,
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {}

  get activeCount(): number {
    return this.active.size;
  }

  /** The live sessions (shutdown closes them). */
  sessions(): MediaSession[] {
    return [...this.active.values()];
  }

  async authorize(framing: Pick<MediaFraming, 'provider' | 'tokenIn'>, runId: number, urlToken: string | null): Promise<MediaAuthorization> {
    const provider = framing.provider;
    if (urlToken !== null) {
      const check = this.tokens.verify(provider, runId, urlToken);
      if (check === 'expired') return refuse(401, 'media_token_expired', 'The media token has expired');
      if (check !== 'valid') return refuse(401, 'media_token_invalid', 'The media token is not valid for this run');
    } else if (framing.tokenIn === 'query') {
      return refuse(401, 'media_token_missing', 'A media token is required');
    }
    const run = await this.runs.findForProviderEvent(runId);
    if (!run || run.provider !== provider || run.telephonyConfigurationId === null) return refuse(404, 'run_not_found', 'Run not found');
    const configuration = await this.configurations.findForProviderEvent(run.telephonyConfigurationId);
    if (!configuration || configuration.provider !== provider) return refuse(404, 'run_not_found', 'Run not found');
    if (isFinalRunStatus(run.status)) return refuse(403, 'run_finished', 'The call of this run has ended');
    const capacity = this.capacity(runId);
    if (capacity) return capacity;
    return { ok: true, run, authorizedByUrl: urlToken !== null };
  }

  /**
   * A session for an authorized run, registered until it ends. Re-checks the limits (another connection may
   * have won the race since `authorize`): a refusal then.
   */
  open(framing: MediaFraming, authorization: { run: Run; authorizedByUrl: boolean }): MediaSession | MediaRefusal {
    const capacity = this.capacity(authorization.run.id);
    if (capacity) return capacity;
    const session = new MediaSession(
      { ...this.sessionDeps, runs: this.runs, tokens: this.tokens },
      authorization.run,
      framing,
      { authorizedByUrl: authorization.authorizedByUrl, maxRecordingBytes: this.options.maxRecordingBytes, highWaterBytes: this.options.highWaterBytes },
      (s) => {
        if (this.active.get(s.run.id) === s) this.active.delete(s.run.id);
      },
    );
    this.active.set(authorization.run.id, session);
    this.log.debug({ provider: framing.provider, run_id: authorization.run.id, active: this.active.size, at: this.clock.now().toISOString() }, 'media session opened');
    return session;
  }

  private capacity(runId: number): MediaRefusal | null {
    if (this.active.has(runId)) return refuse(409, 'media_session_active', 'A media stream is already connected for this run');
    if (this.active.size >= this.options.maxSessions) return refuse(503, 'media_sessions_exhausted', 'Too many media streams at once; try again later');
    return null;
  }
}
