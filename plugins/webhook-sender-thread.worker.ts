/**
 * The webhook sender thread's entry (started by `ThreadedWebhookSender`, plugins/webhook-sender-thread.ts): the same
 * `WebhookDispatcher` the service otherwise runs in process, built here from the same pieces as the composition root
 * builds it (the policy transport, the secret cipher), but without a scheduler (the owner's sweep job asks this thread
 * to drain) and with its storage calls (claims, endpoints, results) run by the owner on the service's store.
 *
 * Messages in: take (deliveries leased to this process, with their endpoints), kick, stored (a storage call's answer)
 * and requests (drain, idle, cpu, stop) answered with `done` and the request's id. Messages out: ready, freed (how many
 * attempts ended since the last one: the owner's room count), storage (a call for the owner's store), log (this
 * thread's log lines, written by the owner's logger), done.
 */
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { AesGcmSecretCipher } from '../adapters/crypto/node-crypto.js';
import { systemClock } from '../core/ports/clock.port.js';
import type { LogFields, Logger } from '../core/ports/logger.port.js';
import type { WebhookTransport } from '../core/ports/webhook-transport.port.js';
import { WebhookDispatcher, type SenderStorage } from '../core/webhooks/webhook-dispatcher.js';
import type { SenderThreadData, SenderThreadRequest, SenderThreadReply, StorageMethod } from './webhook-sender-thread.js';
import { PolicyWebhookTransport } from './webhook-transport.js';

const port = parentPort!;
const data = workerData as SenderThreadData;
const send = (m: SenderThreadReply): void => port.postMessage(m);

/** Log lines go to the owner's logger (one configuration, one redaction, one output). */
class ForwardingLogger implements Logger {
  constructor(private readonly fields: LogFields = {}) {}
  private write(level: 'debug' | 'info' | 'warn' | 'error', fields: LogFields, msg: string): void {
    send({ type: 'log', level, fields: { ...this.fields, ...fields }, msg });
  }
  debug(fields: LogFields, msg: string) { this.write('debug', fields, msg); }
  info(fields: LogFields, msg: string) { this.write('info', fields, msg); }
  warn(fields: LogFields, msg: string) { this.write('warn', fields, msg); }
  error(fields: LogFields, msg: string) { this.write('error', fields, msg); }
  child(fields: LogFields): Logger { return new ForwardingLogger({ ...this.fields, ...fields }); }
  isEnabled(level: 'debug' | 'info' | 'warn' | 'error'): boolean { return level !== 'debug'; }
}

/** This thread's CPU time (ms) from /proc/thread-self (Linux); null elsewhere. */
function threadCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** The dispatcher's storage: each call a message to the owner, which runs it on the service's store. */
const pendingCalls = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
let nextCall = 1;
const call = <T>(method: StorageMethod, args: unknown[]): Promise<T> => new Promise((resolve, reject) => {
  const id = nextCall++;
  pendingCalls.set(id, { resolve: resolve as (v: unknown) => void, reject });
  send({ type: 'storage', id, method, args });
});
const storage: SenderStorage = {
  claimDue: (...args) => call('claimDue', args),
  findEndpoints: (...args) => call('findEndpoints', args),
  recordAttempts: (...args) => call('recordAttempts', args),
};

const policy = new PolicyWebhookTransport({ allowPrivateNetwork: data.allowPrivateNetwork });
// the owner counts what it handed over against the bound (its `lease`): told when attempts end, once per loop turn
let freed = 0;
const noteFreed = (): void => {
  if (freed++ === 0) setImmediate(() => {
    send({ type: 'freed', n: freed });
    freed = 0;
  });
};
const transport: WebhookTransport = {
  checkUrl: (url) => policy.checkUrl(url),
  hmacSha256Hex: (key, message) => policy.hmacSha256Hex(key, message),
  post: (url, body, headers, timeoutMs) => policy.post(url, body, headers, timeoutMs).then((r) => {
    noteFreed();
    return r;
  }),
};
const dispatcher = new WebhookDispatcher(
  storage, transport, new AesGcmSecretCipher(data.secretKey), null, systemClock,
  new ForwardingLogger({ component: 'webhooks', thread: 'sender' }), data.options,
);

port.on('message', (m: SenderThreadRequest) => {
  switch (m.type) {
    case 'take':
      dispatcher.take(m.deliveries, m.endpoints);
      return;
    case 'kick':
      dispatcher.kick();
      return;
    case 'stored': {
      const p = pendingCalls.get(m.id);
      pendingCalls.delete(m.id);
      if (m.error !== undefined) p?.reject(new Error(m.error));
      else p?.resolve(m.value);
      return;
    }
    case 'drain':
      void dispatcher.drain().then(() => send({ type: 'done', id: m.id, value: null }));
      return;
    case 'idle':
      void dispatcher.idle().then(() => send({ type: 'done', id: m.id, value: null }));
      return;
    case 'cpu':
      send({ type: 'done', id: m.id, value: threadCpuMs() });
      return;
    case 'stop':
      void dispatcher.stop().finally(() => {
        policy.close();
        send({ type: 'done', id: m.id, value: null });
        port.close();
      });
      return;
  }
});
send({ type: 'ready' });
