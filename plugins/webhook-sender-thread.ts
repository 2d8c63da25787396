import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { JobScheduler } from '../core/ports/job-scheduler.port.js';
import type { LogFields, Logger } from '../core/ports/logger.port.js';
import type { WebhookDelivery, WebhookEndpoint } from '../core/webhooks/webhook.js';
import { WEBHOOK_SWEEP_JOB, type SenderStorage, type WebhookDispatcher, type WebhookDispatcherOptions, type WebhookSender } from '../core/webhooks/webhook-dispatcher.js';

/** What the sender thread starts with (plugins/webhook-sender-thread.worker.ts). */
export interface SenderThreadData {
  secretKey: string;
  allowPrivateNetwork: boolean;
  options: WebhookDispatcherOptions;
}

export type SenderThreadRequest =
  | { type: 'take'; deliveries: WebhookDelivery[]; endpoints: WebhookEndpoint[] }
  | { type: 'kick' }
  | { type: 'drain' | 'idle' | 'cpu' | 'stop'; id: number }
  | { type: 'stored'; id: number; value?: unknown; error?: string };

/** The storage calls the thread's dispatcher makes, run here on the service's connection. */
export type StorageMethod = keyof SenderStorage;
const STORAGE_METHODS: readonly StorageMethod[] = ['claimDue', 'findEndpoints', 'recordAttempts'];

export type SenderThreadReply =
  | { type: 'ready' }
  | { type: 'freed'; n: number }
  | { type: 'log'; level: 'debug' | 'info' | 'warn' | 'error'; fields: LogFields; msg: string }
  | { type: 'done'; id: number; value: number | null }
  | { type: 'storage'; id: number; method: StorageMethod; args: unknown[] };

/** The thread's compiled entry, next to this file in dist/ (absent when running from the TypeScript sources). */
export const SENDER_THREAD_ENTRY = new URL('./webhook-sender-thread.worker.js', import.meta.url);

/** How long `stop` waits for the thread's sends (each bounded by 10 s) before terminating it. */
const STOP_WAIT_MS = 15_000;

/**
 * The webhook sender on a thread of its own (docs/webhooks.md "How it runs"): the service's event loop stores
 * deliveries (the outbox insert, committed before anything is sent) and hands the ones leased to this process to the
 * thread (one message); the thread runs the dispatcher: it signs, POSTs through the network policy, keeps the slots
 * and the retry timer. A slow or failing receiver, a TLS handshake, the HTTP client's work: none of it runs on the
 * loop the calls run on. Its storage calls (claims, the endpoints of claimed deliveries, the batched results) come
 * back here as messages and run on this process's store: one writer, so no commit on either side ever waits for the
 * other's (a second SQLite connection on the thread did: SQLite's busy wait sleeps 1 ms or more, and stalled the thread
 * and the event loop alike, docs/benchmarks.md section 8). The sweep job stays here (the scheduler lives on this loop):
 * it publishes the markers a crash left (`recoverWith`) and asks the thread to drain.
 *
 * Where the thread cannot run (its entry missing, it failed to start, or it died) the in-process `fallback`
 * dispatcher does the sending, as it does wherever the store cannot be shared with a thread. What a dead thread had
 * leased stays leased until the lease expires, then the sweep claims it again: at least once, as for a crashed
 * process.
 */
export class ThreadedWebhookSender implements WebhookSender {
  private worker: Worker | null = null;
  /** Deliveries handed to the thread whose attempt has not ended yet (the `lease` bound). */
  private held = 0;
  private nextId = 1;
  private readonly requests = new Map<number, (value: number | null) => void>();
  private recover: (() => Promise<unknown>) | null = null;
  private jobsDefined = false;
  private stopping = false;

  constructor(
    private readonly fallback: WebhookDispatcher,
    private readonly storage: SenderStorage,
    private readonly scheduler: Pick<JobScheduler, 'define' | 'every'>,
    private readonly log: Logger,
    private readonly thread: SenderThreadData,
    private readonly entry: URL = SENDER_THREAD_ENTRY,
  ) {}

  /** Whether the sending runs on the thread now (false before `start`, and after a failure: the fallback sends). */
  get threaded(): boolean {
    return this.worker !== null;
  }

  defineJobs(): void {
    if (this.jobsDefined) return;
    this.jobsDefined = true;
    this.scheduler.define(WEBHOOK_SWEEP_JOB, async () => {
      await this.recover?.();
      await this.drain();
    }, { concurrency: 1 });
  }

  recoverWith(recover: () => Promise<unknown>): void {
    this.recover = recover;
  }

  /** Starts the thread (the fallback sends when it cannot), schedules the sweep, recovers and drains once. */
  async start(): Promise<void> {
    this.stopping = false;
    if (!this.thread.options.sends) return;
    this.worker = await this.spawn();
    await this.scheduler.every(WEBHOOK_SWEEP_JOB, this.thread.options.sweepIntervalMs);
    if (this.recover) void this.recover().then(() => this.kick());
    this.kick();
  }

  lease(count: number): { leaseMs: number } | null {
    if (!this.worker) return this.fallback.lease(count);
    if (this.stopping || this.held + count > 2 * this.thread.options.maxInFlight) return null;
    return { leaseMs: this.thread.options.leaseMs };
  }

  take(deliveries: WebhookDelivery[], endpoints: readonly WebhookEndpoint[] = []): void {
    if (!this.worker) return this.fallback.take(deliveries, endpoints);
    if (this.stopping) return;
    const leased = deliveries.filter((d) => d.leaseToken);
    this.held += leased.length;
    this.post({ type: 'take', deliveries: leased, endpoints: [...endpoints] });
  }

  kick(): void {
    if (!this.worker) return this.fallback.kick();
    this.post({ type: 'kick' });
  }

  /** Claims and starts what is due, on the thread (or here); resolves once started. Never rejects. */
  async drain(): Promise<void> {
    if (!this.worker) return this.fallback.drain();
    await this.request('drain');
  }

  async idle(): Promise<void> {
    if (this.worker) await this.request('idle');
    await this.fallback.idle();
  }

  /** The sender thread's CPU time so far (ms; Linux), null when it does not run (benchmarks). */
  async threadCpuMs(): Promise<number | null> {
    return this.worker ? this.request('cpu') : null;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const worker = this.worker;
    if (worker) {
      // held while it stops, so the process waits for its answer (and the stop hooks after this one still run)
      worker.ref();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stopped = await Promise.race([
        this.request('stop').then(() => true),
        new Promise<boolean>((r) => { timer = setTimeout(() => r(false), STOP_WAIT_MS); }),
      ]);
      clearTimeout(timer);
      this.worker = null;
      if (!stopped) await worker.terminate();
    }
    await this.fallback.stop();
  }

  /** Runs one of the thread's storage calls on this process's store and answers it (never throws). */
  private store(worker: Worker, m: { id: number; method: StorageMethod; args: unknown[] }): void {
    const answer = (r: { value?: unknown; error?: string }): void => worker.postMessage({ type: 'stored', id: m.id, ...r } satisfies SenderThreadRequest);
    try {
      if (!STORAGE_METHODS.includes(m.method)) throw new Error(`not a sender storage call: ${String(m.method)}`);
      const call = this.storage[m.method] as (...a: unknown[]) => Promise<unknown>;
      call.apply(this.storage, m.args).then((value) => answer({ value }), (e: unknown) => answer({ error: String((e as Error)?.message ?? e) }));
    } catch (e) {
      answer({ error: String((e as Error)?.message ?? e) });
    }
  }

  private post(m: SenderThreadRequest): void {
    this.worker?.postMessage(m);
  }

  private request(type: 'drain' | 'idle' | 'cpu' | 'stop'): Promise<number | null> {
    if (!this.worker) return Promise.resolve(null);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.requests.set(id, resolve);
      this.post({ type, id });
    });
  }

  /** The thread, ready; null (the fallback sends) when its entry is missing or it fails to start. */
  private spawn(): Promise<Worker | null> {
    if (!existsSync(fileURLToPath(this.entry))) {
      this.log.info({ entry: this.entry.href }, 'webhook sender thread entry not built: sending in process');
      return Promise.resolve(null);
    }
    return new Promise((resolve) => {
      let ready = false;
      let worker: Worker;
      try {
        worker = new Worker(this.entry, { workerData: this.thread });
        // the thread never keeps the process alive on its own: `stop` ends it, and an exit without `stop` leaves its
        // deliveries leased, sent again after a restart (at least once)
        worker.unref();
      } catch (e) {
        this.log.warn({ err: (e as Error)?.message }, 'webhook sender thread could not start: sending in process');
        return resolve(null);
      }
      worker.on('message', (m: SenderThreadReply) => {
        if (m.type === 'ready') {
          ready = true;
          this.log.info({}, 'webhook deliveries are sent on a thread of their own');
          resolve(worker);
        } else if (m.type === 'freed') {
          this.held = Math.max(0, this.held - m.n);
        } else if (m.type === 'log') {
          this.log[m.level](m.fields, m.msg);
        } else if (m.type === 'storage') {
          this.store(worker, m);
        } else {
          const answer = this.requests.get(m.id);
          this.requests.delete(m.id);
          answer?.(m.value);
        }
      });
      worker.on('error', (e) => this.log.error({ err: e?.message }, 'webhook sender thread failed'));
      worker.on('exit', (code) => {
        if (!ready) {
          this.log.warn({ code }, 'webhook sender thread could not start: sending in process');
          return resolve(null);
        }
        if (this.worker !== worker) return;
        // died while running: what it held stays leased until the lease expires; the sweep (here) claims it again
        this.worker = null;
        this.held = 0;
        for (const answer of this.requests.values()) answer(null);
        this.requests.clear();
        if (!this.stopping) {
          this.log.error({ code }, 'webhook sender thread stopped: sending in process from now on');
          this.fallback.kick();
        }
      });
    });
  }
}
