import type { CallerScript, SimulatedCallRequest } from './simulated-callers.port.js';
import type { TransferTarget } from '../calls/transfer-target.js';
import type { RunStatus } from '../runs/run.js';
import type { AmdResult } from '../voice/amd/amd-result.js';
import type { ProviderManifest } from '../telephony/provider-manifest.js';
import type { Logger } from './logger.port.js';

/** The final outcome of a call as the campaign engine and dispositions see it. */
export type CallOutcome = 'completed' | 'busy' | 'no_answer' | 'voicemail' | 'failed' | 'canceled';

/** A provider configuration's credential values, decrypted, keyed by manifest field name. */
export type ProviderConfig = Record<string, unknown>;

export interface PlaceCallRequest {
  /**
   * The call attempt's id. Providers that support it use it as their idempotency key (ARI `channelId`),
   * so a retry of the same attempt cannot dial twice.
   */
  attemptKey: string;
  organizationId: number;
  runId: number;
  to: string;
  from: string | null;
  /** Where the provider posts status callbacks for this call (our `/telephony/<provider>/status/<run_id>`). */
  statusCallbackUrl: string;
  /** Where the provider fetches call instructions on answer (Twilio TwiML), if it needs one. */
  answerUrl: string;
  /** The media WebSocket for this call. */
  mediaUrl: string;
  /** Ask the provider to detect answering machines (where it acts on a machine itself, it hangs up). */
  machineDetection: boolean;
  /**
   * The agent's voice session acts on answering-machine verdicts (`voicemail.detect`, docs/voicemail.md): where
   * the carrier can report a verdict without acting on it (Twilio async AMD), ask for that, keep the call
   * connected, and report the verdict to `statusCallbackUrl` (`NormalizedCallEvent.amd`). Absent: false.
   */
  asyncMachineDetection?: boolean;
  ringTimeoutSeconds: number;
}

export interface PlacedCall {
  providerCallId: string;
  /** True when the provider reported the attempt as already placed (idempotent retry). */
  alreadyPlaced: boolean;
}

/** A provider event, normalized at the edge. Unknown events are `ignored` with a reason, never errors. */
export type NormalizedCallEvent =
  | {
      kind: 'status';
      /** Our run id when the event carries it (our callback URL), else found through providerCallId. */
      runId?: number;
      /** The provider's id of the call; recorded on a run that has none, and must match the one it has. */
      providerCallId?: string;
      /**
       * Other ids the provider knows this event's call under, when one run spans several (Vonage: the
       * `conversation_uuid` an inbound call and its media leg share; Plivo: the `RequestUUID` placing returned).
       * A run whose recorded provider call id is one of them matches too; they are never recorded.
       */
      callIds?: string[];
      status: RunStatus;
      /** Present on final statuses. */
      outcome?: CallOutcome;
      durationSeconds?: number;
      at?: Date;
      detail?: string;
      /**
       * Final statuses only: the disposition Callplane itself decided for a connected call it could not serve
       * (`agent_not_configured`); replaces the outcome's. Providers never set it.
       */
      disposition?: string;
      /**
       * The carrier's answering-machine verdict this event carries (Twilio `AnsweredBy`, Telnyx
       * `call.machine.*`), normalized: human/machine/unknown, and `greetingEnded` (with or without a beep) when
       * the carrier says so. The one status path hands it to the run's live voice session (docs/voicemail.md).
       */
      amd?: AmdResult;
    }
  | { kind: 'ignored'; reason: string };

/** An HTTP webhook as the provider sent it, with the exact public URL it was sent to (signatures cover it). */
export interface WebhookRequest {
  publicUrl: string;
  method: string;
  headers: Record<string, string>;
  /** Parsed form or JSON body. */
  body: Record<string, unknown>;
  rawBody?: Buffer;
  query: Record<string, string>;
  /** Our run id taken from the route, when the route carries one. */
  runId?: number;
}

export interface InboundCall {
  providerCallId: string;
  from: string;
  to: string;
  /** The provider account the call arrived on (matched with the configuration's account id). */
  accountId: string | null;
  /** The simulator's test calls only: a caller script to play (API.md 13), handed to `inboundAnswer`. */
  caller?: CallerScript;
}

/** A response body the provider expects (TwiML, NCCO, JSON). */
export interface ProviderMarkup {
  contentType: string;
  body: string;
  /** HTTP status of the response; 200 when absent (the simulator's test endpoint answers 404/409). */
  status?: number;
}

/** What a provider's `transfer` is given besides the call and the target. */
export interface TransferOptions {
  runId: number;
  /**
   * Our answer URL for this hand-over (`POST /telephony/<provider>/answer/<run_id>?transfer_to=<target>`, built by
   * `CallUrls.transferAnswer`), for providers that move a live call to new instructions fetched from a URL (Plivo's
   * `aleg_url`): `answerOutbound` answers it with the dial markup for `transfer_to`.
   */
  answerUrl: string;
  /** The run's status callback URL, for providers that report the new leg's progress there. */
  statusCallbackUrl: string;
  /** The caller id the new leg shows, where the provider asks for one (the run's called number); null: the provider's default. */
  callerId: string | null;
  /** How long the target may ring before the transfer counts as unanswered. */
  ringTimeoutSeconds: number;
}

/**
 * A transfer's result. `reason` is a stable snake_case word where the carrier said something we recognize
 * (`busy`, `no_answer`, `call_not_active`, `target_rejected`, `unreachable`, `transfer_unsupported`), else
 * `carrier_refused`; `detail` is the carrier's own words (no secrets), for the run's log.
 */
export type TransferResult = { ok: true; detail?: string } | { ok: false; reason: string; detail?: string };

/** Why an inbound call is refused (also the `code` of the simulator's JSON answer). */
export type InboundRefusal = 'phone_number_not_found' | 'workflow_archived';

/** What the provider said when asked whether a configuration's credentials work. */
export interface CredentialsCheckResult {
  ok: boolean;
  /** Human-readable: what was read (the account, the application) or why it failed. Never holds a secret. */
  message: string;
}

/** What a persistent-connection provider (ARI) says about its link; shown by health checks. */
export interface ProviderHealth {
  ok: boolean;
  detail?: Record<string, unknown>;
}

/**
 * One configured provider account. Created by the plugin from decrypted credentials. Methods that call the
 * provider throw `ProviderApiError` (with `retryable`) and never put credentials into messages.
 */
export interface TelephonyProvider {
  readonly manifest: ProviderManifest;
  /** Places an outbound call. Idempotent per `attemptKey` where the provider allows it. */
  placeCall(request: PlaceCallRequest): Promise<PlacedCall>;
  /** Ends a call. Idempotent: an already ended call is fine. */
  hangup(providerCallId: string): Promise<void>;
  /** Asks the provider for a call's current status (reconciliation); null when the provider does not know it. */
  getCallStatus(providerCallId: string): Promise<NormalizedCallEvent | null>;
  /**
   * Points the number's inbound calls at `inboundUrl` (null: detach). A reconcile: safe to repeat. Never
   * throws: failures come back as `{ok: false, message}` (a warning; the caller keeps its change).
   */
  syncInboundWebhook(number: { address: string; addressNormalized: string; inboundUrl: string | null }): Promise<{ ok: boolean; message: string }>;
  /**
   * Asks the provider whether these credentials work, with an authenticated read that changes nothing at the
   * provider (Twilio: fetch the account; Vonage: read the application with api_key/api_secret; Plivo: read the
   * account; Telnyx: read the Call Control application `connection_id`; ARI: `GET /ari/asterisk/info`; the
   * simulator always passes). `ok: true` only when the provider accepted them for the account id the
   * configuration claims. Never throws: a refusal, an unreachable provider or a redirect come back as
   * `{ok: false, message}` (no secret in it). Read-only, so safe to repeat; the host bounds it by a few
   * seconds and treats a timeout as `{ok: false}`.
   */
  checkCredentials(): Promise<CredentialsCheckResult>;
  /** Checks the webhook's signature against the exact public URL. Pure; never throws. */
  verifyWebhook(request: WebhookRequest): boolean;
  /**
   * Normalizes a status callback. Pure; never throws (unknown payloads are `ignored`), except that a provider
   * whose webhooks are our own API (`ProviderPlugin.webhookAuth` `'organization-credentials'`, the simulator)
   * throws `ValidationError` for a malformed field, answered 422.
   */
  parseStatusCallback(request: WebhookRequest): NormalizedCallEvent;
  /**
   * The markup that connects an answered inbound call to our media endpoint. Event-driven providers may
   * also start the call's own flow here (the simulator schedules its status events).
   */
  inboundAnswer(input: { runId: number; providerCallId: string; mediaUrl: string; statusCallbackUrl: string; caller?: CallerScript }): ProviderMarkup;
  /**
   * The markup of an outbound call's answer URL (`POST /telephony/<provider>/answer/<run_id>`, given to the
   * provider as `PlaceCallRequest.answerUrl`), for providers that fetch call instructions when the callee
   * picks up (Twilio TwiML, Plivo XML). `request` is the provider's webhook, already verified with
   * `verifyWebhook` (it may carry answering-machine results); `mediaUrl` is the run's signed media WebSocket.
   * Pure; never throws. Absent: the provider takes its instructions at dial time and the route answers 404.
   */
  answerOutbound?(request: WebhookRequest, ctx: { runId: number; mediaUrl: string; statusCallbackUrl: string }): ProviderMarkup;
  /**
   * Hands the live call `providerCallId` over to `target` (a cold transfer; docs/voice.md "Transfers"): the caller
   * is connected to the target and our agent leaves the call. Present exactly when the manifest declares
   * `capabilities.transfer`. Resolves `{ok: true}` once the carrier accepted the hand-over, `{ok: false, reason}`
   * when it refused it or could not be reached (a call no longer live, a busy or failing target where the carrier
   * tells at once, a network failure): it never throws for a carrier's answer. Not idempotent: a second call
   * may dial the target again, so the caller asks once per call.
   */
  transfer?(providerCallId: string, target: TransferTarget, options: TransferOptions): Promise<TransferResult>;
  /** Link health of providers that keep a connection open (ARI); absent means "nothing to report". */
  health?(): ProviderHealth;
  /** Releases connections (ARI WebSocket). Idempotent. */
  close(): Promise<void>;
}

/** What the host gives a provider instance. */
export interface ProviderContext {
  publicUrl: string;
  /** Event-driven providers (ARI, simulator) report statuses and inbound calls through these. */
  reportStatus(event: NormalizedCallEvent & { kind: 'status' }): Promise<void>;
  /**
   * An accepted call's run, with `mediaUrl`: the run's signed media WebSocket URL (`CallUrls.media`), for
   * providers that connect the call's media themselves (ARI's external media channel).
   */
  reportInbound(call: InboundCall & { configurationId: number }): Promise<{ runId: number; mediaUrl?: string } | { refused: string }>;
  allowPrivateNetwork: boolean;
  /**
   * The simulator only: opens an in-process media loop with a simulated caller for an answered call (API.md 13,
   * `SimulatedCallers.connect`); false (or absent) when this process runs no voice pipeline.
   */
  connectSimulatedCaller?(request: Omit<SimulatedCallRequest, 'provider'>): boolean;
  /** Already redacts the manifest's sensitive fields; still never log credentials on purpose. */
  log: Logger;
  /**
   * False in a process that must not hold persistent listening connections (the `api` role): the instance
   * serves one-off requests only (a credentials check, a hang-up) and a `persistentConnection` plugin must not
   * open its event socket. Absent means true.
   */
  listen?: boolean;
}

/** A provider plugin: its manifest, how to derive the account id, and how to build an instance. */
export interface ProviderPlugin {
  manifest: ProviderManifest;
  /** The account part of the (provider, account id, address) uniqueness tuple. Pure and stable. */
  deriveAccountId(config: ProviderConfig): string;
  /** Extra checks beyond the manifest schema (SSRF rules for URLs); returns issues as [field, message]. */
  validateConfig?(config: ProviderConfig, context: { allowPrivateNetwork: boolean }): Array<[string, string]>;
  create(config: ProviderConfig & { configurationId: number; organizationId: number }, context: ProviderContext): TelephonyProvider;
  /**
   * Normalizes an inbound-call HTTP webhook (`POST /telephony/<id>/inbound`) before any configuration is
   * known: the host looks the number up by (provider, `accountId`, normalized `to`), then verifies the
   * signature with that configuration's instance. Pure; never throws. Absent: the provider takes no HTTP
   * inbound webhooks (ARI reports inbound calls through `ProviderContext.reportInbound`).
   */
  parseInboundCall?(request: WebhookRequest): InboundCall | { ignored: string };
  /** The provider's polite refusal of an inbound call (hang-up markup). Pure. Absent: a JSON error body. */
  inboundReject?(reason: InboundRefusal): ProviderMarkup;
  /**
   * True when every configuration needs a live instance from start-up on (ARI's event WebSocket delivers
   * inbound calls); the host then creates one per stored configuration at start and replaces it on change.
   */
  persistentConnection?: boolean;
  /**
   * Who may post this provider's webhooks (`/telephony/<id>/inbound`, `/telephony/<id>/status/<run_id>`).
   * `'signature'` (absent): the carrier, proven by `verifyWebhook`; no API credentials. `'organization-credentials'`:
   * the webhooks are an API of ours (the simulator's test calls): the caller sends the API credentials (Bearer or
   * X-API-Key) of the organization owning the configuration; none → 401, another organization's → 404
   * (`phone_number_not_found` / `run_not_found`). `verifyWebhook` still runs after that.
   */
  webhookAuth?: WebhookAuth;
}

/** See `ProviderPlugin.webhookAuth`. */
export type WebhookAuth = 'signature' | 'organization-credentials';
