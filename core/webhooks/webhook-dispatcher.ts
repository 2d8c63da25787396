import type { Clock } from '../ports/clock.port.js';
import type { SecretCipher } from '../ports/crypto.port.js';
import type { JobScheduler } from '../ports/job-scheduler.port.js';
import type { Logger } from '../ports/logger.port.js';
import type { WebhookAttemptRecord, WebhookRepository } from '../ports/webhook.repository.port.js';
import type { WebhookTransport } from '../ports/webhook-transport.port.js';
import { retryDelayMs, WEBHOOK_TIMEOUT_MS, webhookSecretContext, type WebhookDelivery, type WebhookEndpoint } from './webhook.js';
import type { DeliverySink } from './webhook-events.js';
import { signatureHeader } from './webhook-signature.js';

export const WEBHOOK_SWEEP_JOB = 'webhooks.sweep';
/** How long an attempt's result may wait to be written with others' (WebhookDispatcherOptions.recordDelayMs). */
export const RECORD_DELAY_MS = 10;

type AttemptOutcome = { ok: boolean; statusCode: number | null; error: string | null };

export interface WebhookDispatcherOptions {
  /** How long a claimed delivery stays with this process before another may take it (ms). */
  leaseMs: number;
  /** Sends in flight in this process, all receivers together. */
  maxInFlight: number;
  /** Sends in flight to one endpoint: a slow receiver holds at most this many slots. */
  maxInFlightPerEndpoint: number;
  /** The coarse recurring sweep (ms): picks up what other processes enqueued and what a crash left. */
  sweepIntervalMs: number;
  /** Per-attempt bound (default 10 s). */
  timeoutMs?: number;
  /**
   * How long an attempt's result may wait to be recorded with others (default 10 ms; at most `maxInFlight` wait):
   * one write for the results of many sends. The send's slot is free meanwhile; the delivery stays leased.
   */
  recordDelayMs?: number;
  /** Whether this process sends (workers and `all`); an api-only process only enqueues. */
  sends: boolean;
}

/**
 * Sends stored deliveries (docs/webhooks.md "Delivery and retries"). Driven by one recurring scheduler job (the
 * sweep) plus an in-process kick when this process enqueues or a retry falls due: never one job per delivery.
 *
 * A drain claims due deliveries atomically with a lease (`claimDue`), as many as free send slots, skipping
 * endpoints already at their own cap, so a slow or failing receiver never takes the slots of others; each send
 * records its result under its claim. A process killed mid-send leaves leases that expire: the delivery is sent
 * again (at least once; receivers dedupe on the id).
 *
 * Writes per delivery (docs/benchmarks.md section 8): what this process publishes while it has room is stored
 * already leased to it and handed over (`lease` + `take`: no claim write), and the results of the sends that end
 * within `recordDelayMs` (10 ms) of each other are recorded in one write (`recordAttempts`); a send's slot is freed
 * when its attempt ends, not when its result is written (the delivery stays leased meanwhile, so nobody claims it
 * again). A crash in that window sends those deliveries again: at least once, as for any crash mid-send. The sweep
 * first publishes the event markers a crash left on runs and campaigns (`recoverWith`).
 */
export class WebhookDispatcher implements DeliverySink {
  private inFlight = 0;
  private readonly perEndpoint = new Map<number, number>();
  private readonly waiting = new Map<number, WebhookDelivery[]>();
  private readonly endpoints = new Map<number, WebhookEndpoint | null>();
  /** Each endpoint's secret, decrypted once per ciphertext (a rotation or a moved row decrypts again). */
  private readonly secrets = new Map<number, { ciphertext: string; context: string; secret: string }>();
  private readonly sends = new Set<Promise<void>>();
  private draining: Promise<void> | null = null;
  private again = false;
  private kicked = false;
  private sentSinceClaim = 0;
  private stopping = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private timerAt = Infinity;
  private jobsDefined = false;
  private recordQueue: Array<{ record: WebhookAttemptRecord; resolve: (ok: boolean) => void; reject: (e: unknown) => void }> = [];
  private recordTimer: ReturnType<typeof setTimeout> | null = null;
  private recover: (() => Promise<unknown>) | null = null;
  /** Whether unclaimed due deliveries may exist: false once a claim came back short, until the next kick. */
  private backlog = true;

  constructor(
    private readonly repo: WebhookRepository,
    private readonly transport: WebhookTransport,
    private readonly cipher: SecretCipher,
    private readonly scheduler: JobScheduler,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: WebhookDispatcherOptions,
  ) {}

  /** Registers the sweep job (before the scheduler starts). Idempotent. */
  defineJobs(): void {
    if (this.jobsDefined) return;
    this.jobsDefined = true;
    this.scheduler.define(WEBHOOK_SWEEP_JOB, async () => {
      await this.recover?.();
      await this.drain();
    }, { concurrency: 1 });
  }

  /** What the sweep runs before it drains: publishing the event markers a crash left (WebhookEventRecovery). */
  recoverWith(recover: () => Promise<unknown>): void {
    this.recover = recover;
  }

  /** Schedules the recurring sweep, recovers the markers and drains once (what a crash left behind). */
  async start(): Promise<void> {
    this.stopping = false;
    if (!this.options.sends) return;
    await this.scheduler.every(WEBHOOK_SWEEP_JOB, this.options.sweepIntervalMs);
    if (this.recover) void this.recover().then(() => this.kick());
    this.kick();
  }

  /**
   * A lease for `count` new deliveries when this process sends and has room to hold them now (sending or
   * waiting, at most twice the in-flight bound), else null: they are stored unclaimed for a drain.
   */
  lease(count: number): { leaseMs: number } | null {
    if (!this.options.sends || this.stopping) return null;
    if (this.inFlight + this.queued() + count > 2 * this.options.maxInFlight) return null;
    return { leaseMs: this.options.leaseMs };
  }

  /** Sends deliveries stored under this process's lease (`lease`), with their endpoints as just read. */
  take(deliveries: WebhookDelivery[], endpoints: readonly WebhookEndpoint[] = []): void {
    // stopped meanwhile: the leases expire and the deliveries are claimed again, here after a restart or elsewhere
    if (this.stopping) return;
    for (const e of endpoints) this.endpoints.set(e.id, e);
    for (const d of deliveries) {
      if (!d.leaseToken) continue;
      const q = this.waiting.get(d.endpointId) ?? [];
      q.push(d);
      this.waiting.set(d.endpointId, q);
    }
    // no slot was freed: only these deliveries' endpoints can have something to start
    for (const d of deliveries) if (d.leaseToken) this.pump(d.endpointId);
  }

  /** Stops claiming, waits for the sends in flight. Idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // results waiting for company are written now (and those of the sends still running as they end)
    if (this.recordQueue.length > 0) void this.flushRecords();
    await this.draining;
    await Promise.allSettled([...this.sends]);
  }

  /**
   * Asks for a drain soon: kicks within one turn of the event loop make one drain (claims are writes). Called when
   * deliveries were stored unclaimed (another writer, no room here, a manual retry) or a retry fell due. Never throws.
   */
  kick(): void {
    this.backlog = true;
    this.drainSoon();
  }

  private drainSoon(): void {
    if (!this.options.sends || this.stopping || this.kicked) return;
    this.kicked = true;
    setImmediate(() => {
      this.kicked = false;
      void this.drain();
    });
  }

  /**
   * Claims and starts every due delivery there is room for; resolves once they are started (not sent). A
   * drain asked for while one runs makes it loop once more. Never throws.
   */
  drain(): Promise<void> {
    if (this.draining) {
      this.again = true;
      return this.draining;
    }
    this.draining = (async () => {
      try {
        do {
          this.again = false;
          await this.claimAndStart();
        } while (this.again && !this.stopping);
      } catch (e) {
        this.log.error({ err: (e as Error)?.message }, 'webhook drain failed');
      } finally {
        this.draining = null;
      }
    })();
    return this.draining;
  }

  /** Resolves when every send started so far has been recorded (tests, benchmarks). */
  async idle(): Promise<void> {
    while (this.draining || this.sends.size > 0) {
      await this.draining;
      await Promise.allSettled([...this.sends]);
    }
  }

  private async claimAndStart(): Promise<void> {
    for (;;) {
      if (this.stopping) return;
      // up to maxInFlight sending plus as many claimed and waiting for a slot (fewer, larger claims)
      const free = 2 * this.options.maxInFlight - this.inFlight - this.queued();
      if (free <= 0) return;
      const full = [...this.perEndpoint.keys(), ...this.waiting.keys()].filter((id) => this.held(id) >= 2 * this.options.maxInFlightPerEndpoint);
      // a batch never exceeds one endpoint's cap, so one busy receiver cannot fill every free slot with its own
      const want = Math.min(free, this.options.maxInFlightPerEndpoint, 64);
      this.sentSinceClaim = 0;
      // a kick meanwhile (new unclaimed work) sets it again
      this.backlog = false;
      const claimed = await this.repo.claimDue(this.clock.now(), this.options.leaseMs, want, [...new Set(full)]);
      // a full batch may have left more behind (skipped endpoints at their cap count as possibly more too)
      if (claimed.length === want || full.length > 0) this.backlog = true;
      if (claimed.length === 0) return;
      const ids = [...new Set(claimed.map((d) => d.endpointId))];
      const found = new Map((await this.repo.findEndpoints(ids)).map((e) => [e.id, e]));
      // read per batch: a changed url or a rotated secret applies from the next claim on
      for (const id of ids) {
        this.endpoints.set(id, found.get(id) ?? null);
        if (!found.has(id)) this.secrets.delete(id);
      }
      for (const d of claimed) {
        const q = this.waiting.get(d.endpointId) ?? [];
        q.push(d);
        this.waiting.set(d.endpointId, q);
      }
      this.pumpAll();
      if (claimed.length < want) return;
    }
  }

  /** Deliveries of an endpoint this process holds: sending or waiting for a slot. */
  private held(endpointId: number): number {
    return (this.perEndpoint.get(endpointId) ?? 0) + (this.waiting.get(endpointId)?.length ?? 0);
  }

  private queued(): number {
    let n = 0;
    for (const q of this.waiting.values()) n += q.length;
    return n;
  }

  /** Starts waiting deliveries of every endpoint while there is room. */
  private pumpAll(): void {
    for (const id of [...this.waiting.keys()]) this.pump(id);
  }

  /** Starts the endpoint's waiting deliveries while it and the process have room. */
  private pump(endpointId: number): void {
    const q = this.waiting.get(endpointId);
    while (q && q.length > 0 && (this.perEndpoint.get(endpointId) ?? 0) < this.options.maxInFlightPerEndpoint && this.inFlight < this.options.maxInFlight) {
      const d = q.shift()!;
      this.inFlight++;
      this.perEndpoint.set(endpointId, (this.perEndpoint.get(endpointId) ?? 0) + 1);
      const endpoint = this.endpoints.get(endpointId) ?? null;
      const p: Promise<void> = this.attempt(d, endpoint).then((outcome) => {
        // the slot is free once the attempt ended; its result is written with others' (`record`), under its lease
        this.inFlight--;
        const left = (this.perEndpoint.get(endpointId) ?? 1) - 1;
        if (left <= 0) this.perEndpoint.delete(endpointId);
        else this.perEndpoint.set(endpointId, left);
        try {
          if (this.waiting.size > 0) this.pumpAll();
          // claim again when nothing claimed is left waiting, or after half an endpoint's worth of sends: not after
          // every send (claims are writes)
          this.sentSinceClaim++;
          // (and only while unclaimed due deliveries may exist: what this process took on insert needs no claim)
          if (this.backlog && (this.queued() === 0 || this.sentSinceClaim >= Math.max(1, this.options.maxInFlightPerEndpoint / 2))) this.drainSoon();
        } catch (e) {
          this.log.error({ err: (e as Error)?.message }, 'webhook sender could not start the next sends');
        }
        // (settle never rejects: the send leaves `sends` once its result is written or given up)
        if (!outcome) return void this.sends.delete(p);
        return this.settle(d, endpoint, outcome).then(() => void this.sends.delete(p));
      });
      this.sends.add(p);
    }
    if (q && q.length === 0) this.waiting.delete(endpointId);
  }

  /**
   * One attempt: sign and post. Null when it could not be made (the lease expires, the delivery is claimed again).
   * Never throws, never rejects. (No async wrapper: one promise per send, docs/benchmarks.md section 8.)
   */
  private attempt(d: WebhookDelivery, endpoint: WebhookEndpoint | null): Promise<AttemptOutcome | null> {
    const failed = (e: unknown): null => {
      this.log.error({ delivery_id: d.id, err: (e as Error)?.message }, 'webhook attempt could not be made');
      return null;
    };
    try {
      if (!endpoint) return Promise.resolve({ ok: false, statusCode: null, error: 'endpoint deleted' });
      const secret = this.secretOf(endpoint);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'Callplane-Webhooks/1',
        'callplane-signature': signatureHeader((k, m) => this.transport.hmacSha256Hex(k, m), secret, d.body, this.clock.now()),
        'callplane-delivery-id': String(d.id),
        'callplane-event': d.event,
      };
      return this.transport.post(endpoint.url, d.body, headers, this.options.timeoutMs ?? WEBHOOK_TIMEOUT_MS).then(
        (r): AttemptOutcome => (r.ok ? { ok: true, statusCode: r.statusCode, error: null } : { ok: false, statusCode: r.statusCode, error: r.error.slice(0, 500) }),
        failed,
      );
    } catch (e) {
      return Promise.resolve(failed(e));
    }
  }

  /** Records an attempt's outcome (with others': `record`) and schedules its retry. Never throws, never rejects. */
  private settle(d: WebhookDelivery, endpoint: WebhookEndpoint | null, outcome: AttemptOutcome): Promise<void> {
    // the lease expires and the delivery is claimed again
    const unrecorded = (e: unknown): void => this.log.error({ delivery_id: d.id, err: (e as Error)?.message }, 'webhook attempt could not be recorded');
    try {
      const now = this.clock.now();
      const attempts = d.attempts + 1;
      const delay = outcome.ok || !endpoint ? null : retryDelayMs(attempts);
      const nextAttemptAt = delay === null ? null : new Date(now.getTime() + delay);
      const status = outcome.ok ? 'delivered' : nextAttemptAt ? 'pending' : 'failed';
      return this.record({
        id: d.id, leaseToken: d.leaseToken!, result: { status, attempts, lastStatusCode: outcome.statusCode, lastError: outcome.error, nextAttemptAt, now },
      }).then((recorded) => {
        try {
          if (!recorded) this.log.warn({ delivery_id: d.id }, 'webhook attempt not recorded: its claim had expired');
          if (status === 'failed') this.log.warn({ delivery_id: d.id, endpoint_id: d.endpointId, attempts }, 'webhook delivery failed for good');
          if (nextAttemptAt) this.wakeAt(nextAttemptAt);
        } catch (e) {
          this.log.error({ delivery_id: d.id, err: (e as Error)?.message }, 'webhook retry could not be scheduled');
        }
      }, unrecorded);
    } catch (e) {
      unrecorded(e);
      return Promise.resolve();
    }
  }

  /** The endpoint's signing secret: decrypted on first use and whenever its ciphertext or cipher context changes. */
  private secretOf(endpoint: WebhookEndpoint): string {
    const context = webhookSecretContext(endpoint.organizationId, endpoint.secretsKeyId);
    const kept = this.secrets.get(endpoint.id);
    if (kept && kept.ciphertext === endpoint.secretCiphertext && kept.context === context) return kept.secret;
    const secret = this.cipher.decrypt(endpoint.secretCiphertext, context);
    if (this.secrets.size >= 10_000) this.secrets.delete(this.secrets.keys().next().value as number);
    this.secrets.set(endpoint.id, { ciphertext: endpoint.secretCiphertext, context, secret });
    return secret;
  }

  /**
   * Records an attempt together with the others that end within `recordDelayMs` (one write); at once when
   * `maxInFlight` results wait or the sender is stopping.
   */
  private record(record: WebhookAttemptRecord): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.recordQueue.push({ record, resolve, reject });
      if (this.stopping || this.recordQueue.length >= this.options.maxInFlight) {
        void this.flushRecords();
        return;
      }
      if (this.recordTimer) return;
      this.recordTimer = setTimeout(() => void this.flushRecords(), this.options.recordDelayMs ?? RECORD_DELAY_MS);
    });
  }

  private async flushRecords(): Promise<void> {
    if (this.recordTimer) clearTimeout(this.recordTimer);
    this.recordTimer = null;
    const batch = this.recordQueue.splice(0);
    if (batch.length === 0) return;
    try {
      const recorded = await this.repo.recordAttempts(batch.map((b) => b.record));
      batch.forEach((b, i) => b.resolve(recorded[i] ?? false));
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
  }

  /** One in-process timer for the earliest retry this process scheduled (the sweep covers the rest). */
  private wakeAt(at: Date): void {
    if (this.stopping || at.getTime() >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at.getTime();
    const ms = Math.max(0, at.getTime() - this.clock.now().getTime());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.kick();
    }, Math.min(ms, 2 ** 31 - 1));
    (this.timer as { unref?: () => void }).unref?.();
  }
}
