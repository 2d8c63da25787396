import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SqliteDatabase } from './database.js';

/**
 * Moves the embedded database's WAL checkpoints off the event loop.
 *
 * With `synchronous = NORMAL` a commit only appends to the WAL; the fsyncs happen when the WAL is copied back
 * into the database (a checkpoint). SQLite's automatic checkpoint runs inside whichever commit takes the WAL past
 * 1,000 pages, so one request, webhook or call event now and then paid the copy and its fsyncs on the event loop
 * (up to ~65 ms measured in the webhook benchmark, docs/benchmarks.md section 8). Here the service's connection
 * turns its automatic checkpoint off and a worker thread with a connection of its own runs a PASSIVE checkpoint
 * every `everyMs` (it never blocks writers or readers; frames a reader still needs wait for the next one).
 *
 * Safety: when the worker cannot start or stops unexpectedly, the automatic checkpoint is switched back on, so
 * the WAL never grows without bound; `stop()` does the same before the database is closed (closing the last
 * connection checkpoints in any case). Several processes on one file may each run one: concurrent checkpoints
 * take turns (a busy one is skipped and retried at the next period).
 */
export interface WalCheckpointerOptions {
  /** How often the worker checkpoints (ms). Default 1000. */
  everyMs?: number;
  /** Told when the worker fails (the automatic checkpoint is back on by then). */
  onFailure?: (message: string) => void;
}

/** One checkpoint's answer (SQLite's `PRAGMA wal_checkpoint`): WAL frames in the log and how many are copied back. */
export interface WalCheckpointResult {
  busy: boolean;
  logFrames: number;
  checkpointedFrames: number;
}

/** SQLite's default `wal_autocheckpoint` (pages), restored when the worker is gone. */
export const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;

// The worker's code (CommonJS, run with `eval`): it opens its own connection to the same file and answers
// `checkpoint` messages; a timer asks it every `everyMs`.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const checkpoint = () => {
  const [row] = db.pragma('wal_checkpoint(PASSIVE)');
  return { busy: row.busy !== 0, logFrames: row.log, checkpointedFrames: row.checkpointed };
};
const timer = setInterval(() => {
  try { checkpoint(); } catch (e) { parentPort.postMessage({ type: 'failed', message: String(e && e.message) }); }
}, workerData.everyMs);
parentPort.on('message', (m) => {
  if (m.type === 'checkpoint') {
    try { parentPort.postMessage({ type: 'checkpointed', id: m.id, result: checkpoint() }); }
    catch (e) { parentPort.postMessage({ type: 'checkpointed', id: m.id, error: String(e && e.message) }); }
  } else if (m.type === 'stop') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
parentPort.postMessage({ type: 'ready' });
`;

type WorkerMessage =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'checkpointed'; id: number; result?: WalCheckpointResult; error?: string };

export class SqliteWalCheckpointer {
  private readonly waiting = new Map<number, { resolve: (r: WalCheckpointResult) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private stopping = false;
  private failed = false;

  private constructor(
    private readonly db: SqliteDatabase,
    private readonly worker: Worker,
    private readonly onFailure: (message: string) => void,
  ) {}

  /**
   * Starts the worker for `db` (a file database in WAL mode) and, once its connection is open, turns `db`'s
   * automatic checkpoint off. Resolves null for an in-memory database (no WAL) or when the worker cannot start
   * (the automatic checkpoint then stays on; `onFailure` says why).
   */
  static async start(db: SqliteDatabase, o: WalCheckpointerOptions = {}): Promise<SqliteWalCheckpointer | null> {
    const onFailure = o.onFailure ?? (() => undefined);
    if (db.memory || String(db.pragma('journal_mode', { simple: true })).toLowerCase() !== 'wal') return null;
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), file: db.name, everyMs: o.everyMs ?? 1000 },
      });
    } catch (e) {
      onFailure(`the checkpoint worker could not start: ${(e as Error).message}`);
      return null;
    }
    worker.unref();
    const onMessage = (m: WorkerMessage) => settle(m.type === 'ready' ? true : 'unexpected first message');
    const onError = (e: Error) => settle(e.message);
    const onExit = (code: number) => settle(`exited with code ${code}`);
    let settle: (r: true | string) => void = () => undefined;
    const ready = await new Promise<true | string>((resolve) => {
      settle = resolve;
      worker.once('message', onMessage);
      worker.once('error', onError);
      worker.once('exit', onExit);
    });
    // (only these: a Worker's own listeners keep its port referenced)
    worker.off('message', onMessage);
    worker.off('error', onError);
    worker.off('exit', onExit);
    if (ready !== true) {
      await worker.terminate().catch(() => undefined);
      onFailure(`the checkpoint worker could not start: ${ready}`);
      return null;
    }
    const checkpointer = new SqliteWalCheckpointer(db, worker, onFailure);
    worker.on('message', (m: WorkerMessage) => checkpointer.onMessage(m));
    worker.on('error', (e) => checkpointer.fail(e.message));
    worker.on('exit', (code) => checkpointer.fail(`exited with code ${code}`));
    db.pragma('wal_autocheckpoint = 0');
    return checkpointer;
  }

  /** Runs a PASSIVE checkpoint now on the worker (tests; a shutdown that wants a small WAL). */
  checkpointNow(): Promise<WalCheckpointResult> {
    if (this.stopping || this.failed) return Promise.reject(new Error('the checkpoint worker is not running'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ type: 'checkpoint', id });
    });
  }

  /** Stops the worker and switches `db`'s automatic checkpoint back on. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.restoreAutocheckpoint();
    if (this.failed) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage({ type: 'stop' });
    const timer = setTimeout(() => void this.worker.terminate(), 2000);
    await exited;
    clearTimeout(timer);
    this.rejectWaiting('the checkpoint worker stopped');
  }

  private onMessage(m: WorkerMessage): void {
    if (m.type === 'failed') {
      this.onFailure(`a background checkpoint failed: ${m.message}`);
      return;
    }
    if (m.type !== 'checkpointed') return;
    const w = this.waiting.get(m.id);
    if (!w) return;
    this.waiting.delete(m.id);
    if (m.result) w.resolve(m.result);
    else w.reject(new Error(m.error ?? 'checkpoint failed'));
  }

  private fail(message: string): void {
    if (this.stopping || this.failed) return;
    this.failed = true;
    this.restoreAutocheckpoint();
    this.rejectWaiting(`the checkpoint worker stopped: ${message}`);
    this.onFailure(`the checkpoint worker stopped (${message}): automatic checkpoints are back on`);
  }

  private restoreAutocheckpoint(): void {
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
  }

  private rejectWaiting(message: string): void {
    for (const w of this.waiting.values()) w.reject(new Error(message));
    this.waiting.clear();
  }
}
